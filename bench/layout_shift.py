"""Layout-shift bench: how much the page jumps while the demo agent streams a long Markdown answer.

Run by hand: ``.venv/bin/python bench/layout_shift.py [--prompt markdown] [--width 1100] [--runs 3]``.

Starts the real server on the built-in demo agent at its normal speed, opens a session in headless
Chromium (``/usr/bin/chromium``), records every ``layout-shift`` performance entry (the Layout
Instability API behind Core Web Vitals' CLS) from the moment the prompt is sent to the end of the turn,
and prints the sum of their scores, the largest single shift, and the elements that moved most. New
content appended at the bottom is not a shift; text that moves because something above it changed
size is. Scores under 0.1 are what Web Vitals calls "good" for a whole page load.
"""

from __future__ import annotations

import argparse
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent

OBSERVE = """
window.__shifts = [];
new PerformanceObserver(function (list) {
  for (const entry of list.getEntries()) {
    if (entry.hadRecentInput) continue;
    window.__shifts.push({
      value: entry.value,
      sources: (entry.sources || []).map(function (s) {
        let node = s.node;
        let prefix = "";
        if (node && node.nodeType !== 1) {
          prefix = "text in ";
          node = node.parentElement;
        }
        if (!node) return "(removed)";
        const name = node.tagName.toLowerCase() + (node.id ? "#" + node.id : "")
          + (node.className ? "." + String(node.className).split(" ").join(".") : "");
        return prefix + name + " " + Math.round(s.previousRect.y) + "→" + Math.round(s.currentRect.y);
      }),
    });
  }
}).observe({ type: "layout-shift", buffered: false });
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


TOKEN = secrets.token_urlsafe(16)
"""The server's sign-in token, chosen here so the browser can be signed in."""


def run_once(url: str, prompt: str, width: int) -> list[dict[str, object]]:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": width, "height": 800})
        page.goto(url + "/?token=" + TOKEN)  # the sign-in URL: signs this browser in
        page.click("[data-action=new-session]")
        page.wait_for_selector("#session[data-turn-state=idle]", timeout=30_000)
        page.evaluate(OBSERVE)
        page.fill("#prompt-input", prompt)
        page.press("#prompt-input", "Enter")
        page.wait_for_selector("#session[data-turn-state=running]", timeout=30_000)
        page.wait_for_selector("#session[data-turn-state=idle]", timeout=120_000)
        time.sleep(0.5)
        shifts: list[dict[str, object]] = page.evaluate("window.__shifts")
        browser.close()
        return shifts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prompt", default="markdown", help="what to ask the demo agent (default: markdown)")
    parser.add_argument("--width", type=int, default=1100, help="window width in CSS pixels (try 390 for a phone)")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    port = free_port()
    data = tempfile.TemporaryDirectory(prefix="layout-shift-")  # the server's store, not the user's data folder
    env = {**os.environ, "DEMO_AGENT_SPEED": "1", "WEBCLIENT_TOKEN": TOKEN, "WEBCLIENT_DATA_DIR": data.name}
    env.pop("WEBCLIENT_AGENT", None)
    server = subprocess.Popen(
        [sys.executable, "-m", "webclient", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            try:
                httpx.get(url + "/", timeout=1)
                break
            except httpx.TransportError:
                time.sleep(0.1)
        for run in range(1, args.runs + 1):
            shifts = run_once(url, args.prompt, args.width)
            total = sum(float(s["value"]) for s in shifts)  # type: ignore[arg-type]
            largest = max((float(s["value"]) for s in shifts), default=0.0)  # type: ignore[arg-type]
            movers: dict[str, float] = {}
            for shift in shifts:
                for source in shift["sources"]:  # type: ignore[attr-defined]
                    movers[source] = movers.get(source, 0.0) + float(shift["value"])  # type: ignore[arg-type]
            top = ", ".join(f"{name} {score:.4f}" for name, score in sorted(movers.items(), key=lambda kv: -kv[1])[:3])
            print(
                f"run {run}: {len(shifts)} shifts, cumulative score {total:.4f}, largest {largest:.4f}"
                f"{' — moved most: ' + top if top else ''}"
            )
    finally:
        server.terminate()
        server.wait()
        data.cleanup()


if __name__ == "__main__":
    main()
