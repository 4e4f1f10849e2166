"""What the pages say, in a real Chromium: a page shut out says why (no longer shared, deleted); the header names who
has the session open by their part in it; the index offers only what the person may do, and says what the session
page says of a session's state, the same after a clean stop as after a kill; a search's lines are plain text; a
remote session takes its title from its first prompt, and its empty page says what to type."""

from __future__ import annotations

import re
import secrets
import signal
import subprocess
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.support.browser import open_session, send_prompt
from tests.support.servers import Server, ServerFactory, free_port, launch_server, stop_server


def test_a_search_shows_the_agents_markdown_as_plain_text_with_the_words_marked(
    start_server: ServerFactory, page: Page
) -> None:
    server = start_server(agent=None)
    open_session(page, server)
    send_prompt(page, "markdown")
    expect(page.locator('[data-role="agent-message"]').last).to_contain_text("That's it", timeout=20_000)
    expect(page.locator("#session")).to_have_attribute("data-turn-state", "idle")
    page.goto(server.url + "/?q=showcase+bold+code")
    lines = page.locator('[data-role="matches"] li')
    expect(lines.first).to_be_visible()
    shown = lines.all_inner_texts()
    assert shown and not any(mark in line for line in shown for mark in ("**", "`", "](", "## ")), shown
    expect(page.locator('[data-role="matches"] mark').first).to_have_text(re.compile("showcase|bold|code", re.I))


def test_a_remote_session_is_titled_by_its_first_prompt_and_its_empty_page_says_what_to_type(
    start_server: ServerFactory, page: Page
) -> None:
    server = start_server(agent=None, WEBCLIENT_DEMO_REMOTE="on")
    page.goto(server.sign_in_url("/"))
    page.click('[data-action="new-session"][data-agent="demo-remote"]')
    expect(page.locator("#session")).to_have_attribute("data-turn-state", "idle")
    hint = page.locator('[data-role="thread-empty"]')
    expect(hint).to_contain_text("tools")
    expect(hint).to_contain_text("change")
    prompt = page.locator("#prompt-input")
    assert "/ for commands" not in (prompt.get_attribute("placeholder") or "")
    page.screenshot(path="/tmp/words-remote-empty.png")

    send_prompt(page, "hello there, remote agent")
    expect(page.locator('[data-role="agent-message"]').last).to_contain_text("remote", timeout=20_000)
    expect(hint).to_be_hidden()
    expect(page.locator('h1[data-role="title"]')).to_have_text("Hello there, remote agent")
    page.goto(server.url + "/")
    expect(page.locator(".history-title").first).to_have_text("Hello there, remote agent")


def test_the_index_says_what_the_session_page_says_and_a_clean_stop_leaves_what_a_kill_does(
    page: Page, tmp_path: Path
) -> None:
    port, token = free_port(), secrets.token_urlsafe(16)
    env = {"DEMO_AGENT_SPEED": "0", "WEBCLIENT_DATA_DIR": str(tmp_path / "data")}

    def start() -> Server:
        return launch_server(port, token, tmp_path / "received.jsonl", tmp_path, [], env, subprocess.DEVNULL)

    server = start()
    try:
        open_session(page, server)
        session_id = page.locator("#session").get_attribute("data-session-id")
        expect(page.locator('[data-role="turn-state"]')).to_have_text("Ready")
        page.goto(server.url + "/")
        row = page.locator(f'[data-session-id="{session_id}"]')
        expect(row.locator('[data-role="state"]')).to_have_text("Ready")

        shown = {}
        for how in (signal.SIGTERM, signal.SIGKILL):
            server.process.send_signal(how)
            server.process.wait(timeout=30)
            stop_server(server)
            server = start()
            page.goto(server.url + "/")
            shown[how.name] = row.locator('[data-role="state"]').inner_text()
        assert shown == {"SIGTERM": "Stopped", "SIGKILL": "Stopped"}
        page.goto(f"{server.url}/sessions/{session_id}")
        expect(page.locator('[data-role="turn-state"]')).to_have_text("Stopped")
    finally:
        stop_server(server)
