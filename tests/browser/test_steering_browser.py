"""Steering in a real Chromium: a prompt queued while the agent works goes into its running turn with "Send now"
when the agent takes prompts mid-turn (``_session/steering``), and the page shows it where it went."""

from __future__ import annotations

import sys
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.support.browser import open_session, send_prompt
from tests.support.servers import ServerFactory

AGENT = f"{sys.executable} {Path(__file__).resolve().parents[1] / 'agents' / 'steering_agent.py'}"


def test_send_now_steers_the_running_turn(start_server: ServerFactory, page: Page) -> None:
    server = start_server(agent=AGENT)
    open_session(page, server)
    send_prompt(page, "work")
    expect(page.locator("#session")).to_have_attribute("data-turn-state", "running")
    send_prompt(page, "also update the changelog")
    queued = page.locator('[data-role="queued"]')
    expect(queued).to_have_count(1)
    expect(page.locator("#prompt-queue .queue-head")).to_contain_text("now into its turn")
    queued.locator('[data-action="queue-send"]').click()
    expect(page.locator('[data-role="agent-message"]').last).to_contain_text(
        'steered with: ["also update the changelog"]'
    )
    expect(page.locator('[data-role="user-message"]')).to_have_count(2)
    expect(page.locator('[data-role="user-message"]').last).to_have_text("also update the changelog")
    expect(queued).to_have_count(0)
    [steering] = [m for m in server.received() if m.get("method") == "_session/steering"]
    assert steering["params"] == {
        "sessionId": "steer-1",
        "prompt": [{"type": "text", "text": "also update the changelog"}],
    }


def test_the_demo_agent_changes_course_when_steered(start_server: ServerFactory, page: Page) -> None:
    server = start_server(agent=None, DEMO_AGENT_SPEED="1")  # slow enough to steer it halfway
    open_session(page, server)
    send_prompt(page, "steer")
    expect(page.locator('[data-role="agent-message"]').last).to_contain_text("Looking at src/calculator.py")
    send_prompt(page, "check the README links")
    page.locator('[data-role="queued"] [data-action="queue-send"]').click()
    reply = page.locator('[data-role="agent-message"]').last
    expect(reply).to_contain_text("Done: check the README links — taken into this turn")
    expect(page.locator("#session")).to_have_attribute("data-turn-state", "idle")
    expect(page.locator('[data-role="user-message"]')).to_have_count(2)
    expect(reply).not_to_contain_text("Nobody steered me")
