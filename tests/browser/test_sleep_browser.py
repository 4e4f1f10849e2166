"""An idle agent no page shows sleeps: the index and the session's page say "Sleeping", and a prompt typed on the
page wakes it (``session/resume``) and gets its answer, with what came before: in a real Chromium."""

from __future__ import annotations

import sys
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.support.browser import open_session, send_prompt
from tests.support.servers import AGENTS, ServerFactory


def test_a_sleeping_session_says_so_and_a_prompt_wakes_it(
    start_server: ServerFactory, page: Page, tmp_path: Path
) -> None:
    agent = f"{sys.executable} {AGENTS / 'resumable_agent.py'}"
    server = start_server(
        agent=agent,
        RESUME_MODE="resume",
        SESSIONS_FILE=str(tmp_path / "agent-sessions.json"),
        WEBCLIENT_AGENT_IDLE_MINUTES="0.005",  # 0.3 s
    )
    open_session(page, server)
    send_prompt(page, "first prompt")
    expect(page.locator('[data-role="agent-message"]').last).to_contain_text("You said: first prompt")
    session_url = page.url

    page.goto(server.url + "/")  # the session's page is gone: nobody watches, and its agent falls asleep
    row = page.locator(".history-row").first
    for _ in range(100):
        if row.get_attribute("data-state") == "sleeping":
            break
        page.wait_for_timeout(100)
        page.reload()
    expect(row.locator('[data-role="state"]')).to_have_text("Sleeping")

    shown = page.goto(session_url)
    assert shown is not None and 'data-role="turn-state">Sleeping' in shown.text()  # as served, before it wakes
    send_prompt(page, "second prompt")
    expect(page.locator('[data-role="agent-message"]').last).to_contain_text(
        "I remember 1 earlier prompts. You said: second prompt", timeout=30_000
    )
    expect(page.locator('[data-role="turn-state"]')).to_have_text("Ready")
    methods = [message.get("method") for message in server.received()]
    assert "session/resume" in methods and methods.count("session/new") == 1
