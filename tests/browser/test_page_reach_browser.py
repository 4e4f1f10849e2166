"""What the user must be able to reach and trust on the page (issue 9, section 4), checked in Chromium: a tall
permission card's buttons are never under the sticky header or the dock, "Jump to latest" is never under the side
panel, and while the socket is down the page says so and offers no control that would do nothing."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from playwright.sync_api import Browser, expect

from tests.support.browser import open_session, send_prompt
from tests.support.own_server import launch, stop
from tests.support.servers import AGENTS, Server, ServerFactory

AGENT = f"{sys.executable} {AGENTS / 'page_agent.py'}"
SIGNED_OUT = "Signed out: open the sign-in link again"
GONE = "This session is gone: the server restarted"

COVERED = """(e) => {
  const r = e.getBoundingClientRect();
  const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
  return hit === e || e.contains(hit) ? null : (hit ? hit.tagName + "." + hit.className : "nothing");
}"""
"""What covers the middle of an element (None when the element itself is there to be clicked)."""


def permission_answers(server: Server) -> list[dict[str, Any]]:
    return [
        m
        for m in server.received()
        if "method" not in m and isinstance(m.get("result"), dict) and "outcome" in m["result"]
    ]


def test_every_option_of_a_tall_permission_card_can_be_clicked(start_server: ServerFactory, browser: Browser) -> None:
    server = start_server(agent=AGENT)
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    try:
        page = context.new_page()
        open_session(page, server)
        for i in range(6):  # a thread long enough to scroll
            send_prompt(page, f"chat {i} " + "words " * 80)
            expect(page.locator('[data-role="agent-message"]')).to_have_count(i + 1)
        send_prompt(page, "tall")
        options = page.locator('[data-tool-call-id="tall-perm"] [data-option-id]')
        expect(options).to_have_count(10)
        first, last = options.nth(0), options.nth(9)
        # Scrolled into view as the browser does it for a link or a keyboard user (its top to the top of the
        # window, or its bottom to the bottom), each button stays clear of the sticky header and the dock.
        for option, block in ((first, "start"), (last, "end"), (first, "nearest"), (last, "nearest")):
            option.evaluate(f"e => e.scrollIntoView({{block: '{block}'}})")
            assert option.evaluate(COVERED) is None, f"{block}: covered by {option.evaluate(COVERED)}"
        page.evaluate("window.scrollTo(0, 0)")
        first.click()  # no force: Playwright refuses a button another element covers
        server.wait_received(lambda m: m in permission_answers(server))
        assert permission_answers(server)[0]["result"]["outcome"] == {"outcome": "selected", "optionId": "opt-0"}
    finally:
        context.close()


def test_jump_to_latest_stays_in_the_thread_column_when_the_side_panel_opens(
    start_server: ServerFactory, browser: Browser
) -> None:
    server = start_server(agent=AGENT)
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    try:
        page = context.new_page()
        open_session(page, server)
        for i in range(6):
            send_prompt(page, f"chat {i} " + "words " * 80)
            expect(page.locator('[data-role="agent-message"]')).to_have_count(i + 1)
        page.click('[data-action="show-changes"]')
        expect(page.locator("#side-panel")).to_be_visible()
        page.evaluate("window.scrollTo(0, 0)")
        jump = page.locator('[data-action="jump-to-latest"]')
        expect(jump).to_be_visible()
        panel = page.locator("#side-panel").bounding_box()
        box = jump.bounding_box()
        assert panel and box and box["x"] + box["width"] <= panel["x"], (box, panel)
        assert jump.evaluate(COVERED) is None
        jump.click()
        expect(jump).to_be_hidden()
    finally:
        context.close()


def test_while_the_socket_is_down_controls_are_disabled_and_a_restart_says_the_session_is_gone(
    browser: Browser, tmp_path: Path
) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    server = launch(workspace, AGENT)
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    try:
        page = context.new_page()
        open_session(page, server)
        send_prompt(page, "spoof")
        options = page.locator("[data-option-id]")
        expect(options).to_have_count(2)
        expect(options.first).to_be_enabled()
        textarea = page.locator('[data-role="prompt"] textarea[name="prompt"]')
        send = page.locator('[data-action="send"]')
        stop_button = page.locator('[data-action="cancel"]')
        expect(stop_button).to_be_visible()

        stop(server)  # the socket closes: nothing on the page can reach the agent now
        expect(page.locator('[data-role="connection"]')).to_have_text("Reconnecting…")
        for control in (options.first, options.last, textarea, send, stop_button):
            expect(control).to_be_disabled()

        # A new server on the same port, as after a restart: it has a new sign-in token and knows no such session.
        # The page is signed out, says so and keeps asking; signed in again (the new token, opened in another
        # tab), it learns that its session is gone.
        port = int(server.url.rsplit(":", 1)[1])
        server = launch(workspace, AGENT, port=port)
        connection = page.locator('[data-role="connection"]')
        expect(connection).to_have_text(SIGNED_OUT, timeout=40_000)
        for control in (options.first, textarea, send):
            expect(control).to_be_disabled()
        helper = context.new_page()
        helper.goto(server.sign_in_url("/"))
        helper.close()
        expect(connection).to_have_text(GONE, timeout=40_000)
        for control in (options.first, textarea, send):
            expect(control).to_be_disabled()
        # No more attempts to connect (the ws extension would retry at most every 6 s).
        attempts: list[str] = []
        page.on("websocket", lambda socket: attempts.append(socket.url))
        page.wait_for_timeout(8000)
        assert attempts == []
    finally:
        context.close()
        stop(server)


WHILE_OFFLINE = """() => {
  const status = document.getElementById("connection");
  const box = document.querySelector('[data-role="prompt"] textarea[name="prompt"]');
  window.offlineSeen = [];
  new MutationObserver(() => { if (!status.hidden) window.offlineSeen.push([status.textContent, box.disabled]); })
    .observe(status, { attributes: true, childList: true, characterData: true, subtree: true });
}"""
"""The connection line's text and whether the prompt box was disabled, each time the line changed while shown."""


def test_a_socket_that_comes_back_gives_the_controls_back(browser: Browser, tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    server = launch(workspace, AGENT)
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    try:
        page = context.new_page()
        open_session(page, server)
        textarea = page.locator('[data-role="prompt"] textarea[name="prompt"]')
        # What the page showed while the socket was down, seen as it changed: under load the socket can come back
        # between two looks of the test, and "Reconnecting…" and the disabled box would never be seen together.
        page.evaluate(WHILE_OFFLINE)
        # Closing the socket from the page (as a proxy or a sleeping laptop does) leaves the server running.
        page.evaluate("document.getElementById('session')['htmx-internal-data'].webSocket.close()")
        page.wait_for_function("window.offlineSeen.some(([text, disabled]) => text === 'Reconnecting…' && disabled)")
        expect(page.locator('[data-role="connection"]')).to_be_hidden(timeout=30_000)
        expect(textarea).to_be_enabled()
        send_prompt(page, "chat back")
        expect(page.locator('[data-role="agent-message"]')).to_contain_text("said: chat back")
    finally:
        context.close()
        stop(server)
