"""Take the README's screenshot of a session embedded in a portal (docs/images/portal-dark.png): a portal page of
another origin, 1280 wide, framing ``/embed`` in the dark theme with the portal's accent colour; the demo agent's
``run`` scenario has run the sample project's tests in a terminal of the client, inside bubblewrap.

Run from the repository's root, with Chromium and bubblewrap installed (``scripts/ensure-chromium``,
``scripts/ensure-bubblewrap``): ``python scripts/screenshot_portal.py [OUT.png]``. A real server with the demo agent
in trusted-header mode (tests/support/people.py) and the portal of tests/support/portal.py.
"""

from __future__ import annotations

import secrets
import subprocess
import sys
import tempfile
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from playwright.sync_api import expect, sync_playwright  # noqa: E402

from tests.support.people import TEAM, as_person  # noqa: E402
from tests.support.portal import Site, client_frame  # noqa: E402
from tests.support.servers import CHROMIUM, CHROMIUM_ARGS, free_port, launch_server, stop_server  # noqa: E402

OUT = ROOT / "docs" / "images" / "portal-dark.png"
ACCENT = "#0ea5e9"

PORTAL = """<!doctype html>
<html><head><meta charset="utf-8"><title>Acme developer portal</title>
<style>
  body { margin: 0; display: grid; grid-template-columns: 220px 1fr; height: 100vh; font: 14px system-ui, sans-serif;
         background: #0b1220; color: #cbd5e1; }
  nav { padding: 20px 16px; border-right: 1px solid #1e293b; }
  nav b { display: block; color: #f8fafc; font-size: 16px; margin-bottom: 24px; }
  nav a { display: block; color: inherit; text-decoration: none; padding: 8px 10px; border-radius: 6px; }
  nav a.here { background: #0c4a6e; color: #e0f2fe; }
  iframe { border: 0; width: 100%; height: 100%; }
</style></head>
<body>
<nav><b>Acme portal</b><a href="#">Dashboard</a><a href="#">Services</a><a href="#">Deploys</a>
<a class="here" href="#">Coding agent</a><a href="#">On call</a></nav>
<iframe src="__EMBED__" title="Coding agent"></iframe>
</body></html>
"""


def main(out: Path) -> None:
    folder = Path(tempfile.mkdtemp(prefix="webclient-shot-"))
    port = free_port()
    portal = Site()
    env = {**TEAM, "DEMO_AGENT_SPEED": "0", "WEBCLIENT_SANDBOX": "bwrap", "WEBCLIENT_FRAME_ANCESTORS": portal.origin}
    server = launch_server(port, secrets.token_urlsafe(16), folder / "rec.jsonl", folder, [], env, subprocess.PIPE)
    query = urlencode({"agent": "demo", "prompt": "run", "theme": "dark", "accent": ACCENT})
    portal.pages["/"] = PORTAL.replace("__EMBED__", f"{server.url}/embed?{query}")
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            look = {"viewport": {"width": 1280, "height": 800}, "color_scheme": "dark", "device_scale_factor": 1}
            page = browser.new_context(extra_http_headers=as_person("alice"), **look).new_page()
            page.set_default_timeout(30_000)
            page.goto(portal.origin + "/")
            frame = client_frame(page, server.url)
            expect(frame.locator('[data-role="terminal"]').last).to_have_attribute("data-state", "exited")
            expect(frame.locator("#session")).to_have_attribute("data-turn-state", "idle")
            page.wait_for_timeout(500)
            out.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(out))
            browser.close()
    finally:
        stop_server(server)
        portal.close()
    print(out)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT)
