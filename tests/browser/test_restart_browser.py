"""A page left open while the server dies and starts again (same address, same store) notices, shows the session
as the store rebuilt it, and Resume takes it up: in a real Chromium."""

from __future__ import annotations

import re
import secrets
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.support.browser import open_session, send_prompt
from tests.support.restarts import journalled
from tests.support.servers import Server, free_port, launch_server, stop_server


def test_an_open_page_shows_the_rebuilt_session_after_a_restart_and_resumes_it(page: Page, tmp_path: Path) -> None:
    port, token = free_port(), secrets.token_urlsafe(16)
    env = {"DEMO_AGENT_SPEED": "0", "WEBCLIENT_DATA_DIR": str(tmp_path / "data")}

    def start() -> Server:
        return launch_server(port, token, tmp_path / "received.jsonl", tmp_path, [], env, subprocess.DEVNULL)

    refused: list[str] = []  # what the page's CSP refused (htmx settling a style attribute JS had set, once)
    page.on("console", lambda message: refused.append(message.text) if "Content Security" in message.text else None)
    server = start()
    try:
        open_session(page, server)
        send_prompt(page, "edit")
        expect(page.locator('[data-role="permission"][data-state="pending"]')).to_be_visible()
        journalled(tmp_path / "data", "session/request_permission")  # stored in batches: the kill must not beat it
        server.process.send_signal(signal.SIGKILL)
        server.process.wait()
        stop_server(server)
        expect(page.locator("#session")).not_to_have_attribute("data-connection", "open")

        server = start()
        question = page.locator('[data-role="permission"]')
        expect(question).to_have_attribute("data-state", "interrupted", timeout=40_000)
        expect(question).to_have_text("Not answered: the server restarted.")
        expect(page.locator("#session-status")).to_have_attribute("data-turn-state", "ended")
        expect(page.locator('[data-role="turn-state"]')).to_have_text("Stopped")

        page.click('[data-action="resume"]')
        expect(page.locator("#session")).to_have_attribute("data-turn-state", "idle", timeout=30_000)
        send_prompt(page, "markdown")
        expect(page.locator('[data-role="agent-message"]').last).to_contain_text("That's it", timeout=30_000)
        assert refused == []
    finally:
        stop_server(server)


def _restarter(tmp_path: Path, port: int, token: str = "") -> Callable[[], Server]:
    """Starts ``webclient`` on ``port`` with the demo agent and a data folder kept across its starts (``token``
    empty: none given, as ``make run`` starts it)."""
    env = {"DEMO_AGENT_SPEED": "0", "WEBCLIENT_DATA_DIR": str(tmp_path / "data")}

    def start() -> Server:
        with (tmp_path / "server.log").open("ab") as log:
            return launch_server(port, token or "", tmp_path / "received.jsonl", tmp_path, [], env, log.fileno())

    return start


def _killed(server: Server) -> None:
    server.process.send_signal(signal.SIGKILL)
    server.process.wait()
    stop_server(server)


def _printed_sign_in_url(tmp_path: Path, starts: int) -> str:
    """The sign-in URL the ``starts``-th start printed (the token is its own: none was given)."""
    deadline = time.monotonic() + 20
    while len(urls := re.findall(r"open (http://\S+) to sign in", (tmp_path / "server.log").read_text())) < starts:
        assert time.monotonic() < deadline, (tmp_path / "server.log").read_text()
        time.sleep(0.1)
    return urls[starts - 1]


def _allow(page: Page) -> None:
    page.locator('[data-role="permission"][data-state="pending"] [data-option-kind="allow_once"]').click()


def test_an_open_tab_stays_signed_in_across_a_restart_with_no_token_given(page: Page, tmp_path: Path) -> None:
    start = _restarter(tmp_path, free_port())
    server = start()
    try:
        first_url = _printed_sign_in_url(tmp_path, 1)
        page.goto(first_url)
        page.click('[data-action="new-session"]')
        expect(page.locator("#session")).to_have_attribute("data-connection", "open")
        # Stored in batches: a kill that beat the session's row would leave a page whose session is gone.
        journalled(tmp_path / "data", "initialize")
        _killed(server)
        expect(page.locator("#session")).not_to_have_attribute("data-connection", "open")

        server = start()
        assert _printed_sign_in_url(tmp_path, 2) == first_url  # the same token: the printed link still works
        expect(page.locator("#session")).to_have_attribute("data-connection", "open", timeout=40_000)
        expect(page.locator('[data-role="connection"]')).to_be_hidden()
        page.reload()
        expect(page.locator("#session")).to_have_attribute("data-connection", "open")
    finally:
        stop_server(server)


def test_end_is_offered_again_after_resume_without_a_reload(page: Page, tmp_path: Path) -> None:
    token = secrets.token_urlsafe(16)
    start = _restarter(tmp_path, free_port(), token)
    server = start()
    try:
        open_session(page, server)
        send_prompt(page, "markdown")
        expect(page.locator('[data-role="agent-message"]').last).to_contain_text("That's it", timeout=30_000)
        _killed(server)
        server = start()
        page.reload()  # the page as a stopped session shows it: no agent runs, nothing to end
        expect(page.locator('[data-action="resume"]')).to_be_visible(timeout=40_000)
        expect(page.locator('[data-action="end-session"]')).to_have_count(0)
        page.click('[data-action="resume"]')
        expect(page.locator("#session")).to_have_attribute("data-turn-state", "idle", timeout=30_000)
        expect(page.locator('[data-action="end-session"]')).to_be_visible()
    finally:
        stop_server(server)


def test_a_title_the_person_gave_sticks_across_the_agents_titles_and_a_restart(page: Page, tmp_path: Path) -> None:
    token = secrets.token_urlsafe(16)
    start = _restarter(tmp_path, free_port(), token)
    server = start()
    title = page.locator('[data-role="title"]')
    try:
        open_session(page, server)
        page.click('[data-role="rename"] summary')
        page.fill("#rename-title", "My own name")
        page.click('[data-action="rename"]')
        expect(title).to_have_text("My own name")
        send_prompt(page, "markdown")  # the demo agent titles its session after its first prompt
        expect(page.locator('[data-role="agent-message"]').last).to_contain_text("That's it", timeout=30_000)
        expect(page.locator('[data-role="usage"]')).to_be_visible()  # sent with the title, after it
        expect(title).to_have_text("My own name")
        _killed(server)

        server = start()
        expect(page.locator('[data-action="resume"]')).to_be_visible(timeout=40_000)
        expect(title).to_have_text("My own name")
        page.click('[data-action="resume"]')
        expect(page.locator("#session")).to_have_attribute("data-turn-state", "idle", timeout=30_000)
        send_prompt(page, "markdown")  # a new agent session: its first prompt titles it again
        expect(page.locator('[data-role="agent-message"]')).to_have_count(2, timeout=30_000)
        expect(page.locator("#session")).to_have_attribute("data-turn-state", "idle", timeout=30_000)
        expect(title).to_have_text("My own name")

        page.click('[data-role="rename"] summary')
        page.fill("#rename-title", "")
        page.click('[data-action="rename"]')
        expect(title).not_to_have_text("My own name")  # cleared: the agent's title again
    finally:
        stop_server(server)


def test_prompts_typed_after_resume_are_sent_and_only_those_from_before_wait(page: Page, tmp_path: Path) -> None:
    token = secrets.token_urlsafe(16)
    start = _restarter(tmp_path, free_port(), token)
    server = start()
    queued = page.locator('[data-role="queued"]')
    try:
        open_session(page, server)
        send_prompt(page, "edit")
        expect(page.locator('[data-role="permission"][data-state="pending"]')).to_be_visible()
        send_prompt(page, "queued before")
        expect(queued).to_have_count(1)
        journalled(tmp_path / "data", "queued before")
        _killed(server)

        server = start()
        expect(page.locator('[data-action="resume"]')).to_be_visible(timeout=40_000)
        expect(page.locator(".queue-head")).to_contain_text("Queued before the server restarted")
        page.click('[data-action="resume"]')
        expect(page.locator("#session")).to_have_attribute("data-turn-state", "idle", timeout=30_000)
        send_prompt(page, "edit")
        expect(page.locator('[data-role="permission"][data-state="pending"]')).to_be_visible(timeout=30_000)
        send_prompt(page, "markdown")  # typed while the turn runs: queued behind it, and sent when it ends
        expect(queued).to_have_count(2)
        expect(page.locator(".queue-head")).to_contain_text("sent when the agent finishes")
        expect(queued.nth(0).locator('[data-role="queued-kept"]')).to_have_count(1)
        expect(queued.nth(1).locator('[data-role="queued-kept"]')).to_have_count(0)
        _allow(page)
        expect(page.locator('[data-role="agent-message"]').last).to_contain_text("That's it", timeout=30_000)
        expect(queued).to_have_count(1)
        expect(queued.locator("textarea")).to_have_value("queued before")
        expect(page.locator(".queue-head")).to_contain_text("Queued before the server restarted")
    finally:
        stop_server(server)


def test_changes_are_kept_across_a_restart_and_resume(page: Page, tmp_path: Path) -> None:
    token = secrets.token_urlsafe(16)
    start = _restarter(tmp_path, free_port(), token)
    server = start()
    count = page.locator("#changes-count")
    try:
        open_session(page, server)
        send_prompt(page, "edit")
        _allow(page)
        expect(page.locator("#session")).to_have_attribute("data-turn-state", "idle", timeout=30_000)
        expect(count).to_have_text("1")
        journalled(tmp_path / "data", "end_turn")  # the turn's answer, after the write: everything before it is stored
        _killed(server)

        server = start()
        expect(page.locator('[data-action="resume"]')).to_be_visible(timeout=40_000)
        expect(count).to_have_text("1")
        page.click('[data-action="show-changes"]')
        expect(page.locator("#side-panel-body")).to_contain_text("calculator.py")
        page.click('[data-action="resume"]')
        expect(page.locator("#session")).to_have_attribute("data-turn-state", "idle", timeout=30_000)
        page.reload()
        expect(count).to_have_text("1")
    finally:
        stop_server(server)
