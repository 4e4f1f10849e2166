"""Long-open bench: how a long stored session opens in Chromium, and what its page and its socket's first frame weigh.

Run by hand: ``.venv/bin/python bench/long_open.py [--messages N] [--tool-calls N] [--updates N] [--runs N]
[--root DIR]``.

A server (``python -m webclient``, its store in a throw-away data folder) runs one turn of the flood agent
(``bench/flood_agent.py``; by default 2,000 message chunks around 1,000 tool calls with an update each: about 2,000
entries) and stops. A fresh server on the same store is opened once by a plain ``GET`` (the rebuild from the
journal), then ``--runs`` times in headless Chromium (``/usr/bin/chromium``), each a fresh page:

* the page's bytes, and the bytes of its socket's first frame (0: no frame within a second of the load) and when
  it arrived;
* first paint (``first-contentful-paint``), and settled: the later of the load event and the last socket frame
  before a second without one;
* the longest main-thread task (the Long Tasks API, from the navigation on).

``--root DIR`` runs the server of another checkout (e.g. a worktree of ``main``) with this bench, so two versions are
compared on the same machine in alternating runs.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from flood import ROOT, TOKEN, Server, free_port  # bench/ is the script's folder, hence on sys.path
from playwright.sync_api import WebSocket, sync_playwright
from reopen import fill, get

WATCH = """
window.__longest = 0;
new PerformanceObserver(function (list) {
  for (const entry of list.getEntries()) window.__longest = Math.max(window.__longest, entry.duration);
}).observe({ type: "longtask", buffered: true });
"""
QUIET = 1.0
"""Seconds without a socket frame after which a page counts as settled."""


def open_once(url: str, path: str) -> dict[str, float]:
    """One fresh page of ``path`` in Chromium: its figures (bytes, and milliseconds from the navigation)."""
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1100, "height": 800})
        page.goto(f"{url}/?token={TOKEN}")  # the sign-in URL: signs this browser in
        page.add_init_script(WATCH)
        frames: list[tuple[float, int]] = []

        def on_socket(socket: WebSocket) -> None:
            socket.on("framereceived", lambda payload: frames.append((time.perf_counter(), len(payload))))

        page.on("websocket", on_socket)
        started = time.perf_counter()
        response = page.goto(url + path, wait_until="load")
        assert response is not None and response.ok, response
        page_bytes = len(response.body())
        loaded = time.perf_counter()
        while time.perf_counter() - max([loaded, *(at for at, _ in frames)]) < QUIET:
            page.wait_for_timeout(50)
        paint = page.evaluate("performance.getEntriesByName('first-contentful-paint').map(e => e.startTime)[0] || 0")
        longest = page.evaluate("window.__longest")
        browser.close()
    last = max([loaded, *(at for at, _ in frames)])
    first_at, first_bytes = frames[0] if frames else (0.0, 0)
    return {
        "page kB": page_bytes / 1000,
        "first frame kB": first_bytes / 1000,
        "first frame ms": (first_at - started) * 1000 if frames else 0.0,
        "first paint ms": float(paint),
        "settled ms": (last - started) * 1000,
        "longest task ms": float(longest),
    }


async def serve(root: Path, env: dict[str, str], log: Path) -> tuple[Server, int]:
    port = free_port()
    server = Server([sys.executable, "-m", "webclient", "--port", str(port)], env, log, cwd=root)
    await server.wait_listening(port)
    return server, port


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=2_000)
    parser.add_argument("--updates", type=int, default=1_000)
    parser.add_argument("--tool-calls", type=int, default=1_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rate", type=float, default=0)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout whose server runs (default: this one)")
    args = parser.parse_args()
    root = args.root.resolve()
    os.chdir(ROOT)
    tmp = Path(tempfile.mkdtemp(prefix="long-open-bench-"))
    env = {**os.environ, "WEBCLIENT_TOKEN": TOKEN, "WEBCLIENT_DATA_DIR": str(tmp / "data"), "PYTHONPATH": str(root)}
    env.pop("WEBCLIENT_AGENT", None)
    session_id = asyncio.run(fill(args, env, tmp))
    server, port = asyncio.run(serve(root, env, tmp / "open.log"))
    try:
        status, rebuilt, size = get(port, f"/sessions/{session_id}")
        assert status == 200, status
        print(f"{root.name}: rebuild and first GET {rebuilt * 1000:.0f} ms, {size / 1000:.0f} kB")
        runs = []
        for run in range(args.runs):
            figures = open_once(f"http://127.0.0.1:{port}", f"/sessions/{session_id}")
            runs.append(figures)
            print(f"run {run + 1}: " + ", ".join(f"{name} {value:.0f}" for name, value in figures.items()))
        medians = {name: statistics.median(run[name] for run in runs) for name in runs[0]}
        print("median: " + ", ".join(f"{name} {value:.0f}" for name, value in medians.items()))
    finally:
        asyncio.run(server.stop())


if __name__ == "__main__":
    main()
