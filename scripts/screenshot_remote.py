"""Take the README's screenshot of the remote demo agent (docs/images/remote-agent-light.png): its ``change`` asks to
write a file and to run a command with the client's own tools, and both cards say what they ask (the file's diff
against what is on disk, the command line and its folder). 1280 wide, light theme.

Run from the repository's root, with Chromium installed (``scripts/ensure-chromium``):
``python scripts/screenshot_remote.py [OUT.png]``. A real server with the remote demo (an AAP server it starts).
"""

from __future__ import annotations

import secrets
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from playwright.sync_api import expect, sync_playwright  # noqa: E402

from tests.support.servers import CHROMIUM, CHROMIUM_ARGS, free_port, launch_server, stop_server  # noqa: E402

OUT = ROOT / "docs" / "images" / "remote-agent-light.png"


def main(out: Path) -> None:
    folder = Path(tempfile.mkdtemp(prefix="webclient-shot-"))
    env = {"WEBCLIENT_DEMO_REMOTE": "on", "DEMO_AAP_DELAY": "0"}
    server = launch_server(
        free_port(), secrets.token_urlsafe(16), folder / "rec.jsonl", folder, [], env, subprocess.PIPE
    )
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            look = {"viewport": {"width": 1280, "height": 860}, "color_scheme": "light", "device_scale_factor": 1}
            page = browser.new_context(**look).new_page()
            page.set_default_timeout(20_000)
            page.goto(server.sign_in_url("/"))
            page.click('[data-action="new-session"][data-agent="demo-remote"]')
            expect(page.locator("#session")).to_have_attribute("data-connection", "open")
            cwd = page.locator("code.cwd").get_attribute("title")
            assert cwd
            Path(cwd, "NOTES.md").write_text("# Notes\n\nWritten by hand.\n")  # on disk before the agent asks
            page.fill('[data-role="prompt"] textarea[name="prompt"]', "change")
            page.keyboard.press("Enter")
            run = page.locator('[data-role="tool-call"][data-kind="execute"]')
            expect(run.locator('[data-role="permission-command"]')).to_contain_text("$ ls -1")
            page.locator('[data-role="tool-call"][data-kind="edit"]').scroll_into_view_if_needed()
            page.wait_for_timeout(500)
            out.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(out))
            browser.close()
    finally:
        stop_server(server)
    print(out)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT)
