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

from tests.browser.test_sharing_browser import share_from_the_panel
from tests.support.browser import Browsers, open_session, send_prompt
from tests.support.people import TEAM, as_person
from tests.support.servers import Server, ServerFactory, free_port, launch_server, stop_server
from tests.support.team import new_session
from tests.support.urls import at


def test_a_page_shut_out_says_why_and_the_header_names_each_by_their_part(
    start_server: ServerFactory, browsers: Browsers
) -> None:
    server: Server = start_server(**TEAM)
    session_id = new_session(server, "alice")
    url = at(server.url, "session", session_id=session_id)
    alice = browsers.page("alice", extra_http_headers=as_person("alice"))
    alice.goto(url)
    expect(alice.locator("#session")).to_have_attribute("data-agent-state", "ready")
    share_from_the_panel(alice, "bob", "drive")
    share_from_the_panel(alice, "carol", "watch")
    bob, carol = (browsers.page(name, extra_http_headers=as_person(name)) for name in ("bob", "carol"))
    bob.goto(url)
    carol.goto(url)
    expect(alice.locator('[data-role="presence"]')).to_have_text("alice (owner), bob driving, carol watching")
    expect(carol.locator("#session")).to_have_attribute("data-connection", "open")

    alice.click('[data-role="share-panel"] summary')
    alice.locator('[data-role="share"][data-grantee="bob"] [data-action="revoke"]').click()
    expect(bob.locator("#connection")).to_have_text("This session is no longer shared with you")
    expect(alice.locator('[data-role="presence"]')).to_have_text("alice (owner), carol watching")

    alice.goto(at(server.url, "confirm_delete", session_id=session_id))
    alice.click('[data-action="confirm-delete"]')
    expect(carol.locator("#connection")).to_have_text("This session was deleted")


def test_the_index_offers_only_what_the_person_may_do_and_a_refusal_is_a_page(
    start_server: ServerFactory, browsers: Browsers
) -> None:
    server: Server = start_server(**TEAM)
    theirs, mine = new_session(server, "alice"), new_session(server, "bob")
    alice = browsers.page("alice", extra_http_headers=as_person("alice"))
    alice.goto(at(server.url, "session", session_id=theirs))
    share_from_the_panel(alice, "bob", "drive")
    bob = browsers.page("bob", extra_http_headers=as_person("bob"))
    bob.goto(server.url + "/")
    shared, own = bob.locator(f'[data-session-id="{theirs}"]'), bob.locator(f'[data-session-id="{mine}"]')
    expect(shared).to_be_visible()
    expect(own.locator('[data-action="archive"]')).to_be_visible()
    expect(own.locator('[data-action="delete"]')).to_be_visible()
    expect(shared.locator('[data-action="archive"]')).to_have_count(0)
    expect(shared.locator('[data-action="delete"]')).to_have_count(0)
    expect(shared.locator('[data-role="shared-with-you"]')).to_have_text("shared with you")

    response = bob.goto(at(server.url, "confirm_delete", session_id=theirs))
    assert response is not None and response.status == 403
    expect(bob.locator("h1")).to_have_text("Not yours to delete")
    expect(bob.locator('[data-role="refused"]')).to_contain_text("Only its owner may do this.")
    bob.click('[data-action="back"]')
    expect(bob).to_have_url(server.url + "/")


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
        page.goto(at(server.url, "session", session_id=session_id))
        expect(page.locator('[data-role="turn-state"]')).to_have_text("Stopped")
    finally:
        stop_server(server)
