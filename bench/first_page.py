"""First-page bench: the bytes a browser receives for the index and a new session's page, the requests a second load
makes, and the time from clicking "New session" to a session page that is ready.

Run by hand: ``.venv/bin/python bench/first_page.py [--runs 5] [--server-root /work/main --server-root .]``.

Starts the real server (``python -m webclient``, the built-in demo agent, a fresh store) from each checkout given, has
a first browser open a session on it (so that the server has done what it does once per start), and drives it with
another, headless Chromium (``/usr/bin/chromium``), reading the Chrome DevTools Protocol's network events:

- **index, cold**: a browser signed in, its cache then emptied, loads ``/``: bytes received (headers and bodies, as
  compressed on the wire: ``Network.loadingFinished``'s ``encodedDataLength``), requests, and the milliseconds to
  its ``load`` event (every style sheet and script in);
- **new session**: it clicks "New session" on that index: bytes and requests from the click until the page is
  ready, and the milliseconds to ready: the session page's socket open (htmx's ``htmx:wsOpen``) and its scripts run
  (``DOMContentLoaded``, after every module script), so the composer takes a prompt;
- **session, cold**: the same session page loaded with the cache emptied;
- **index, warm** and **session, warm**: each loaded again (a navigation, as following a link; not a reload): the
  HTTP requests that reached the server (a 304 counts), and the web sockets opened;
- **new session, warm**: "New session" clicked again from the index, everything cached: the milliseconds to ready.

``--link phone`` puts the browser on an emulated phone link (150 ms a round trip, 1.6 Mbit/s down), where the bytes
and the requests show in the times. Runs alternate the checkouts; medians are printed. Everything listens on
127.0.0.1; every server (and its agents) is stopped at the end, also on a failure.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from playwright.sync_api import BrowserContext, CDPSession, Page, sync_playwright

ROOT = Path(__file__).resolve().parent.parent

READY = """
window.__ready = {};
document.addEventListener("submit", function () { sessionStorage.setItem("clicked", String(Date.now())); }, true);
document.addEventListener("DOMContentLoaded", function () { window.__ready.scripts = Date.now(); });
document.addEventListener("htmx:wsOpen", function () { window.__ready.socket = window.__ready.socket || Date.now(); });
"""
"""Put in every page before its scripts: when a form was sent (kept across the navigation it makes), when the page's
scripts have run, and when its socket opened."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def server(root: Path, data: Path) -> Iterator[tuple[str, str]]:
    """``python -m webclient`` from ``root`` on the demo agent: its URL and sign-in token, until the block ends."""
    port, token = free_port(), secrets.token_urlsafe(16)
    env = {
        **os.environ,
        "PYTHONPATH": str(root),
        "WEBCLIENT_TOKEN": token,
        "WEBCLIENT_DATA_DIR": str(data),
        "WEBCLIENT_DEMO_REMOTE": "off",
    }
    env.pop("WEBCLIENT_AGENT", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "webclient", "--port", str(port)],
        cwd=root,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"the server in {root} exited ({process.returncode})")
            try:
                httpx.get(url + "/", timeout=1)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        yield url, token
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@dataclass(frozen=True)
class Link:
    """A network link the browser is on (Chromium's emulation: a delay per request, a bandwidth)."""

    rtt_ms: float
    down_kbps: float
    up_kbps: float


LINKS = {"loopback": None, "phone": Link(rtt_ms=150, down_kbps=1600, up_kbps=750)}
"""``--link``: the loopback as it is, or a phone's (DevTools' "Slow 4G"-like: 150 ms, 1.6 Mbit/s down)."""


@dataclass
class Traffic:
    """What the browser received while it was counted, from the DevTools network events."""

    bytes: int = 0
    requests: int = 0
    """HTTP answers that came from the server (a 304 included), not from the cache."""
    sockets: int = 0
    cached: set[str] = field(default_factory=set)


class Wire:
    """Counts a page's network traffic over the DevTools Protocol."""

    def __init__(self, context: BrowserContext, page: Page, verbose: bool = False, link: Link | None = None) -> None:
        self.verbose = verbose
        self.cdp: CDPSession = context.new_cdp_session(page)
        self.cdp.send("Network.enable")
        if link is not None:  # a slower link than the loopback: each request waits a round trip, bytes take time
            self.cdp.send(
                "Network.emulateNetworkConditions",
                {
                    "offline": False,
                    "latency": link.rtt_ms,
                    "downloadThroughput": link.down_kbps * 1000 / 8,
                    "uploadThroughput": link.up_kbps * 1000 / 8,
                },
            )
        self.traffic = Traffic()
        self.cdp.on("Network.loadingFinished", self._finished)
        self.cdp.on("Network.requestServedFromCache", lambda event: self.traffic.cached.add(event["requestId"]))
        self.cdp.on("Network.responseReceived", self._response)
        self.cdp.on("Network.webSocketCreated", self._socket)

    def _finished(self, event: dict[str, Any]) -> None:
        self.traffic.bytes += int(event.get("encodedDataLength", 0))

    def _response(self, event: dict[str, Any]) -> None:
        response = event["response"]
        from_cache = response.get("fromDiskCache") or response.get("fromPrefetchCache")
        if not from_cache and event["requestId"] not in self.traffic.cached and response["url"].startswith("http"):
            self.traffic.requests += 1
            if self.verbose:
                print(f"  {response['status']} {response['url'][:100]}", file=sys.stderr)

    def _socket(self, event: dict[str, Any]) -> None:
        self.traffic.sockets += 1

    def count(self) -> Traffic:
        """Start counting afresh; the traffic counted so far."""
        counted, self.traffic = self.traffic, Traffic()
        return counted

    def empty_cache(self) -> None:
        self.cdp.send("Network.clearBrowserCache")


def wait_ready(page: Page, verbose: bool) -> float:
    """Milliseconds from the form's sending (the click on "New session") until the session page is ready."""
    deadline = time.monotonic() + 30
    # Asked from here (the page's CSP refuses wait_for_function's eval); the times are the page's own.
    while not page.evaluate("Boolean(window.__ready && window.__ready.socket && window.__ready.scripts)"):
        if time.monotonic() > deadline:
            raise TimeoutError("the session page never became ready")
        time.sleep(0.01)
    page.locator("#prompt-input:enabled").wait_for(timeout=30_000)
    ready: dict[str, int] = page.evaluate("window.__ready")
    since = int(page.evaluate("Number(sessionStorage.getItem('clicked'))"))
    if verbose:  # where the time went, by the page's Navigation Timing (the POST and its redirect come first)
        entry = json.loads(page.evaluate("JSON.stringify(performance.getEntriesByType('navigation')[0])"))
        origin = float(page.evaluate("performance.timeOrigin"))
        steps = {
            "sent → POST /sessions answered": origin + entry["redirectEnd"] - since,
            "page answered": entry["responseEnd"] - entry["redirectEnd"],
            "then scripts run": ready["scripts"] - origin - entry["responseEnd"],
            "socket open": ready["socket"] - origin - entry["responseEnd"],
        }
        print("  " + ", ".join(f"{name} {value:.0f} ms" for name, value in steps.items()), file=sys.stderr)
    return float(max(ready["socket"], ready["scripts"]) - since)


def new_session(page: Page, verbose: bool = False) -> float:
    """Click the first "New session" on the index: milliseconds to a ready session page."""
    page.locator('[data-action="new-session"]').first.click()
    page.wait_for_url("**/sessions/*")
    return wait_ready(page, verbose)


def run_once(url: str, token: str, verbose: bool = False, link: Link | None = None) -> dict[str, float]:
    figures: dict[str, float] = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        try:
            # Another browser first: the server has compressed each file at its best for it (the very first
            # visitor after a start has them compressed quickly instead), as for any visitor after the first.
            other = browser.new_context()
            page = other.new_page()
            page.goto(f"{url}/?token={token}", wait_until="networkidle")
            page.locator('[data-action="new-session"]').first.click()
            page.wait_for_url("**/sessions/*")
            page.wait_for_load_state("networkidle")
            other.close()
            context = browser.new_context()
            context.add_init_script(READY)
            page = context.new_page()
            wire = Wire(context, page, verbose, link)
            page.goto(f"{url}/?token={token}", wait_until="networkidle")  # signed in (the cookie)
            wire.empty_cache()
            wire.count()
            page.goto(url + "/", wait_until="networkidle")
            index = wire.count()
            loaded = float(page.evaluate("performance.getEntriesByType('navigation')[0].loadEventEnd"))
            figures |= {"index cold kB": index.bytes / 1000, "index cold requests": index.requests}
            figures["index cold ms"] = loaded
            figures["new session ms"] = new_session(page, verbose)
            page.wait_for_load_state("networkidle")
            session_url = page.url
            fresh = wire.count()
            figures |= {"new session kB": fresh.bytes / 1000, "new session requests": fresh.requests}
            wire.empty_cache()
            wire.count()
            page.goto(session_url, wait_until="networkidle")
            cold = wire.count()
            figures |= {"session cold kB": cold.bytes / 1000, "session cold requests": cold.requests}
            for name, path in (("index", url + "/"), ("session", session_url)):
                page.goto(path, wait_until="networkidle")
                wire.count()
                page.goto(path, wait_until="networkidle")
                warm = wire.count()
                figures |= {f"{name} warm requests": warm.requests, f"{name} warm sockets": warm.sockets}
            page.goto(url + "/", wait_until="networkidle")
            figures["new session warm ms"] = new_session(page, verbose)
        finally:
            browser.close()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5, help="runs per checkout (default %(default)s)")
    parser.add_argument(
        "--server-root", type=Path, action="append", help="a checkout whose server is measured (default: this one)"
    )
    parser.add_argument("--verbose", action="store_true", help="name every request that reaches the server")
    parser.add_argument("--link", choices=sorted(LINKS), default="loopback", help="the browser's network link")
    args = parser.parse_args()
    roots: list[Path] = [root.resolve() for root in args.server_root or [ROOT]]
    results: dict[Path, list[dict[str, float]]] = {root: [] for root in roots}
    with tempfile.TemporaryDirectory(prefix="first-page-bench-") as name:
        for run in range(args.runs):
            for root in roots:
                with server(root, Path(name) / f"data-{run}-{roots.index(root)}") as (url, token):
                    results[root].append(run_once(url, token, args.verbose, LINKS[args.link]))
    keys = list(results[roots[0]][0])
    width = max(len(str(root)) for root in roots)
    print(f"medians of {args.runs} runs, link: {args.link}")
    for key in keys:
        values = "  ".join(f"{statistics.median(r[key] for r in results[root]):>10.1f}" for root in roots)
        print(f"{key:24} {values}")
    print("columns: " + ", ".join(f"{str(root):{width}}" for root in roots))


if __name__ == "__main__":
    main()
