"""The XSS corpus from a remote agent (AAP), in a real Chromium: a hostile AAP server puts every payload in the text,
thinking, tool names, inputs and results it streams and in the name of a tool it asks permission for; nothing runs
(the audit of ``test_xss_browser``, with the CSP bypassed so that our escaping is what is proved)."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, expect

from tests.browser.test_xss_browser import SLOW, audit, new_context
from tests.support.aap_servers import aap_server
from tests.support.browser import until_connected
from tests.support.servers import AGENTS, ServerFactory
from tests.support.xss_payloads import PAYLOADS


@pytest.fixture
def hostile_remote() -> Iterator[str]:
    with aap_server([sys.executable, str(AGENTS / "aap_misbehaving.py")]) as url:
        yield url


def test_nothing_a_remote_agent_sends_runs(hostile_remote: str, start_server: ServerFactory, browser: Browser) -> None:
    server = start_server(agent=hostile_remote)
    context = new_context(browser)
    page = context.new_page()
    try:
        page.goto(server.sign_in_url("/"))
        page.click('[data-action="new-session"]')
        expect(page.locator("#session")).to_have_attribute("data-turn-state", "idle", timeout=SLOW)
        until_connected(page)
        page.fill('[data-role="prompt"] textarea[name="prompt"]', "xss")
        page.keyboard.press("Enter")
        asked = page.locator('[data-role="tool-call"][data-tool-call-id="x-ask"]')
        expect(asked.locator('[data-role="permission"]')).to_have_attribute("data-state", "pending", timeout=SLOW)
        expect(asked.locator(".tool-title")).to_have_text(PAYLOADS[3])  # shown as text
        problems = audit(page, "remote agent")
        asked.locator('[data-option-id="deny"]').click()
        expect(asked.locator('[data-role="permission"]')).to_have_attribute("data-state", "selected", timeout=SLOW)
        problems += audit(page, "after the denial")
        assert problems == [], "\n".join(problems)
    finally:
        context.close()
