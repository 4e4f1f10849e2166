"""Subagents in a real Chromium: a child session shows inside the tool call card that launched it, with its own
message, tool call and state, and its Stop sends ``session/cancel`` with the child's id (the agent receives it and the
child shows stopped), while the turn goes on."""

from __future__ import annotations

import sys
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.support.browser import open_session, send_prompt
from tests.support.servers import ServerFactory

AGENT = f"{sys.executable} {Path(__file__).resolve().parents[1] / 'agents' / 'subagent_agent.py'}"


def test_a_nested_child_shows_its_work_and_stops_alone(start_server: ServerFactory, page: Page) -> None:
    server = start_server(agent=AGENT)
    open_session(page, server)
    expect(page.locator("h1")).to_contain_text("Subagents {}")  # the client advertised subagents
    send_prompt(page, "wait")
    task = page.locator('[data-role="tool-call"][data-tool-call-id="task-1"]')
    child = task.locator('[data-role="subagent"][data-session-id="child-1"]')
    expect(child).to_be_visible()
    expect(child.locator('[data-role="subagent-title"]').first).to_have_text("Explorer <b>")
    expect(child.locator('[data-role="subagent-state"]').first).to_have_text("Working…")
    expect(child.locator('[data-role="agent-message"]').first).to_have_text("Child reading <notes>")
    expect(child.locator('[data-role="tool-call"]', has_text="Read notes.txt")).to_be_visible()
    grandchild = child.locator('[data-role="subagent"][data-session-id="grand-1"]')
    expect(grandchild).to_contain_text("Grandchild words")
    expect(grandchild.locator('[data-action="stop-subagent"]')).to_have_count(0)  # it does not allow a Stop
    expect(page.locator('[data-role="session-message"]', has_text="sent to Explorer <b>")).to_contain_text(
        "Find the bug"
    )

    child.locator('[data-action="stop-subagent"]').first.click()
    expect(child.locator('[data-role="subagent-state"]').first).to_have_text("Stopped")
    expect(page.locator('[data-role="agent-message"]').last).to_have_text("The child was stopped")
    expect(page.locator("#session")).to_have_attribute("data-turn-state", "idle")
    expect(task).to_have_attribute("data-status", "failed")
    cancels = [m["params"] for m in server.received() if m.get("method") == "session/cancel"]
    assert cancels == [{"sessionId": "child-1"}]


def test_the_demo_agents_subagent_works_nested_and_stops_alone(start_server: ServerFactory, page: Page) -> None:
    # The demo agent runs in its workspace: PYTHONPATH makes it this checkout's (not an installed copy's).
    server = start_server(agent=None, DEMO_AGENT_SPEED="1", PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    open_session(page, server)
    send_prompt(page, "subagent")
    task = page.locator('[data-role="tool-call"]', has_text="Task: find how division by zero is handled").last
    child = task.locator('[data-role="subagent"]')
    expect(child.locator('[data-role="tool-call"]', has_text="Read src/calculator.py")).to_be_visible()
    expect(child.locator('[data-role="subagent-state"]').first).to_have_text("Done", timeout=15_000)
    expect(child.locator('[data-role="agent-message"]').last).to_contain_text("ZeroDivisionError")
    expect(page.locator('[data-role="session-message"]', has_text="reply from Explorer")).to_contain_text("divide")
    expect(page.locator("#session")).to_have_attribute("data-turn-state", "idle")

    send_prompt(page, "subagent")
    task = page.locator('[data-role="tool-call"]', has_text="Task: find how division by zero is handled").last
    child = task.locator('[data-role="subagent"]')
    child.locator('[data-action="stop-subagent"]').click()
    expect(child.locator('[data-role="subagent-state"]').first).to_have_text("Stopped")
    expect(page.locator('[data-role="agent-message"]').last).to_contain_text("You stopped the subagent")
    expect(page.locator("#session")).to_have_attribute("data-turn-state", "idle")
