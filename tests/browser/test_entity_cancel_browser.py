"""Per-entity cancel in a real Chromium: the Stop of a tool call and of a terminal that advertise
``capabilities.cancel`` (and only those) asks the agent (``tool_call/cancel``, ``terminal/cancel``), says
"Stopping…" until the agent reports the new status, then goes away."""

from __future__ import annotations

import sys

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser import open_session, send_prompt
from tests.support.servers import AGENTS, ServerFactory
from tests.support.waiting import received

AGENT = f"{sys.executable} {AGENTS / 'v2shapes_agent.py'}"


@pytest.mark.browser
def test_stop_on_a_tool_call_and_a_terminal(start_server: ServerFactory, page: Page) -> None:
    server = start_server(agent=AGENT, WEBCLIENT_ACP_PROTOCOL="2")
    open_session(page, server)
    send_prompt(page, "stoppable")
    long = page.locator('[data-role="tool-call"][data-tool-call-id="long"]')
    fixed = page.locator('[data-role="tool-call"][data-tool-call-id="fixed"]')
    server_call = page.locator('[data-role="tool-call"][data-tool-call-id="server"]')
    expect(long).to_have_attribute("data-status", "in_progress")
    expect(fixed).to_have_attribute("data-status", "in_progress")
    expect(fixed.locator('[data-action="stop-tool-call"]')).to_have_count(0)  # not advertised: no Stop

    long.locator('[data-action="stop-tool-call"]').click()
    expect(long.locator('[data-role="stopping"]')).to_have_text("Stopping…")
    expect(long).to_have_attribute("data-status", "cancelled", timeout=10_000)
    expect(long.locator('[data-role="status"]')).to_have_text("Cancelled")
    expect(long.locator('[data-role="stopping"], [data-action="stop-tool-call"]')).to_have_count(0)

    terminal = server_call.locator('[data-role="terminal"]')
    expect(terminal).to_contain_text("listening")
    terminal.locator('[data-action="stop-terminal"]').click()
    expect(terminal.locator('[data-role="stopping"]')).to_be_visible()
    expect(terminal.locator('[data-role="terminal-status"]')).to_have_text("killed (SIGTERM)", timeout=10_000)
    expect(terminal.locator('[data-action="stop-terminal"], [data-role="stopping"]')).to_have_count(0)
    expect(page.locator("#session")).to_have_attribute("data-turn-state", "idle", timeout=10_000)

    cancels = [m for m in received(server.record_file) if str(m.get("method", "")).endswith("/cancel")]
    assert [(m["method"], m["params"]) for m in cancels] == [
        ("tool_call/cancel", {"sessionId": "v2shapes-1", "toolCallId": "long"}),
        ("terminal/cancel", {"sessionId": "v2shapes-1", "terminalId": "srv"}),
    ]
