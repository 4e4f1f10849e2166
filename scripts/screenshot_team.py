"""Take the README's screenshot of a shared session (docs/images/team-light.png): Alice's page, 1280 wide, light
theme, after Bob (with whom she shared it to drive) answered the demo agent's permission question: who is watching
in the header, the card answered "by bob", and the Share panel open.

Run from the repository's root, with Chromium installed (``scripts/ensure-chromium``):
``python scripts/screenshot_team.py [OUT.png]``. A real server with the demo agent, in trusted-header mode, the two
people named by the header a proxy would send (tests/support/people.py).
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

from tests.support.people import TEAM, as_person  # noqa: E402
from tests.support.servers import CHROMIUM, CHROMIUM_ARGS, free_port, launch_server, stop_server  # noqa: E402

OUT = ROOT / "docs" / "images" / "team-light.png"


def main(out: Path) -> None:
    folder = Path(tempfile.mkdtemp(prefix="webclient-shot-"))
    port = free_port()
    env = {**TEAM, "DEMO_AGENT_SPEED": "0"}
    server = launch_server(port, secrets.token_urlsafe(16), folder / "rec.jsonl", folder, [], env, subprocess.PIPE)
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            look = {"viewport": {"width": 1280, "height": 860}, "color_scheme": "light", "device_scale_factor": 1}
            alice = browser.new_context(extra_http_headers=as_person("alice"), **look).new_page()
            bob = browser.new_context(extra_http_headers=as_person("bob"), **look).new_page()
            for page in (alice, bob):
                page.set_default_timeout(20_000)
            alice.goto(server.url + "/")
            alice.click('[data-action="new-session"]')
            expect(alice.locator("#session")).to_have_attribute("data-agent-state", "ready")
            session_url = alice.url

            alice.click('[data-role="share-panel"] summary')
            alice.fill('[data-role="share-grantee"]', "bob")
            alice.select_option('[data-role="share-role"]', "drive")
            alice.click('[data-action="share"]')
            expect(alice.locator('[data-role="share"][data-grantee="bob"]')).to_have_count(1)
            bob.goto(session_url)
            expect(alice.locator('[data-role="presence"]')).to_have_text("alice (owner), bob driving")

            alice.fill('[data-role="prompt"] textarea[name="prompt"]', "edit")
            alice.keyboard.press("Enter")
            question = bob.locator('[data-role="permission"][data-state="pending"]').last
            question.locator("[data-option-id]").first.click()
            expect(alice.locator('[data-role="permission"] [data-role="by"]').last).to_contain_text("by bob")
            expect(alice.locator("#session")).to_have_attribute("data-turn-state", "idle")
            alice.goto(session_url)  # a fresh page: scrolled to the end, the Share panel closed
            expect(alice.locator('[data-role="presence"]')).to_contain_text("alice")
            alice.click('[data-role="share-panel"] summary')
            alice.wait_for_timeout(500)
            out.parent.mkdir(parents=True, exist_ok=True)
            alice.screenshot(path=str(out))
            browser.close()
    finally:
        stop_server(server)
    print(out)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT)
