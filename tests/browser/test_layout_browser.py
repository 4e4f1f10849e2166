"""The session page's header and work bar at a desktop's and a phone's width (issue 23, "Words and layout"),
measured in Chromium: what the header says stays on screen on a phone, the sign-in step never hides Retry under
an inner scroll nor pins a bar taller than the window, and every action of the work bar is on screen."""

from __future__ import annotations

import secrets
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Locator, Page, expect

from tests.support.browser import open_session, send_prompt
from tests.support.servers import AGENTS, Server, ServerFactory, free_port, launch_server, stop_server

FAULTY_AGENT = f"{sys.executable} {AGENTS / 'faulty_agent.py'}"
PAGE_AGENT = f"{sys.executable} {AGENTS / 'page_agent.py'}"
SIZES = [pytest.param((1280, 800), id="desktop"), pytest.param((390, 844), id="phone")]


@pytest.fixture(params=SIZES)
def sized(request: pytest.FixtureRequest, browser: Browser) -> Iterator[Page]:
    """A page at a desktop's size and at a phone's."""
    width, height = request.param
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    page.screenshot(path=f"/tmp/layout-{request.node.name}.png")  # to look at by hand
    context.close()


def signing_in(start_server: ServerFactory, page: Page) -> Server:
    """A session whose agent wants a sign-in and offers six ways (tests/agents/faulty_agent.py, FAULT=auth)."""
    server = start_server(agent=FAULTY_AGENT, FAULT="auth", WEBCLIENT_START_TIMEOUT="2")
    page.goto(server.sign_in_url("/"))
    page.click('[data-action="new-session"]')
    expect(page.locator("#session")).to_have_attribute("data-turn-state", "auth-required")
    expect(page.locator("#session")).to_have_attribute("data-connection", "open")
    return server


def on_screen(page: Page, locator: Locator) -> bool:
    """Whether ``locator`` lies wholly inside the window and is what a click at its middle reaches (nothing, no
    sticky bar and no scrolled-away inner box, covers it)."""
    return bool(
        locator.evaluate(
            """e => { const r = e.getBoundingClientRect(), w = document.documentElement.clientWidth;
                  if (!r.width || r.left < 0 || r.top < 0) return false;
                  if (r.right > w + 1 || r.bottom > innerHeight + 1) return false;
                  const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
                  return !!hit && (hit === e || e.contains(hit)); }"""
        )
    )


def test_on_a_phone_only_the_subtitle_is_hidden(start_server: ServerFactory, sized: Page) -> None:
    page = sized
    signing_in(start_server, page)
    reason = page.locator('[data-role="auth-reason"]')
    expect(reason).to_contain_text("Gemini API key is missing")
    expect(reason).to_be_visible()
    subtitle = page.locator(".session-header .heading > p")
    phone = page.viewport_size is not None and page.viewport_size["width"] < 600
    expect(subtitle).to_be_hidden() if phone else expect(subtitle).to_be_visible()
    # A sign-in that hangs can be cancelled from a phone too.
    page.click('[data-auth-method="oauth"]')
    cancel = page.locator('[data-action="cancel-sign-in"]')
    expect(cancel).to_be_visible()
    expect(page.locator('[data-role="signing-in"]')).to_contain_text("Signing in with")
    cancel.click()
    expect(page.locator('[data-role="auth-error"]')).to_have_text("Sign-in cancelled.")


def test_on_a_phone_the_header_says_the_server_restarted(sized: Page, tmp_path: Path) -> None:
    page = sized
    port, token = free_port(), secrets.token_urlsafe(16)
    env = {"DEMO_AGENT_SPEED": "0", "WEBCLIENT_DATA_DIR": str(tmp_path / "data")}

    def start() -> Server:
        return launch_server(port, token, tmp_path / "received.jsonl", tmp_path, [], env, subprocess.DEVNULL)

    server = start()
    try:
        open_session(page, server)
        server.process.send_signal(signal.SIGKILL)
        server.process.wait()
        stop_server(server)
        server = start()
        expect(page.locator('[data-role="turn-state"]')).to_have_text("Stopped", timeout=40_000)
        stopped = page.locator('[data-role="agent-stopped"] p')
        expect(stopped).to_have_text("The agent is not running since the server restarted.")
        expect(stopped).to_be_visible()
        expect(page.locator('[data-action="resume"]')).to_be_visible()
    finally:
        stop_server(server)


def test_the_sign_in_step_scrolls_with_the_thread_and_retry_is_on_screen(
    start_server: ServerFactory, sized: Page
) -> None:
    page = sized
    signing_in(start_server, page)
    auth = page.locator('[data-role="auth"]')
    expect(auth.locator("[data-auth-method]")).to_have_count(3)
    retry = auth.locator('[data-action="retry"]')
    assert on_screen(page, retry), "Retry is not on screen"
    # No inner scroll in the sign-in step: all of it is in the page.
    assert auth.evaluate("e => e.scrollHeight - e.clientHeight") <= 1
    # The top bar scrolls with the page rather than staying pinned over it, and the prompt box is on screen.
    page.evaluate("window.scrollTo(0, document.scrollingElement.scrollHeight)")
    page.wait_for_timeout(200)
    scrolled = page.evaluate("scrollY")
    top = page.evaluate("document.querySelector('.topbar').getBoundingClientRect().top")
    assert top <= 1 - scrolled, (top, scrolled)
    assert on_screen(page, page.locator('[data-role="prompt"] textarea[name="prompt"]'))
    # Every way of signing in can be reached by scrolling the page.
    last = auth.locator(".auth-methods > li").last
    last.scroll_into_view_if_needed()
    box = last.bounding_box()
    assert box and box["y"] >= 0 and box["y"] < page.evaluate("innerHeight")
    # A sign-in started from further down keeps its Cancel, then its outcome, in sight.
    page.evaluate("window.scrollTo(0, document.scrollingElement.scrollHeight)")
    page.click('[data-auth-method="api-key"]')
    expect(page.locator('[data-role="auth-error"]')).to_contain_text("failed")
    assert on_screen(page, page.locator('[data-role="auth-error"]')), "the error is not on screen"
    page.evaluate("window.scrollTo(0, document.scrollingElement.scrollHeight)")
    page.click('[data-auth-method="oauth"]')
    cancel = page.locator('[data-action="cancel-sign-in"]')
    expect(cancel).to_be_visible()
    assert on_screen(page, cancel), "Cancel is not on screen"
    cancel.click()
    expect(page.locator('[data-role="auth-error"]')).to_have_text("Sign-in cancelled.")
    retry.click()
    expect(page.locator("#session")).to_have_attribute("data-agent-state", "auth-required")


WORKBAR_ACTIONS = (
    '[data-action="show-changes"]',
    "#follow-toggle",
    '[data-action="protocol-log"]',
    '[data-action="export"]',
    '[data-role="rename"] summary',
    '[data-action="end-session"]',
)


def test_every_action_of_the_work_bar_is_on_screen(start_server: ServerFactory, sized: Page) -> None:
    page = sized
    server = start_server(agent=PAGE_AGENT)
    open_session(page, server)
    for selector in WORKBAR_ACTIONS:
        action = page.locator(f".workbar {selector}")
        expect(action).to_be_visible()
        assert on_screen(page, action), f"{selector} is not on screen"
    workbar = page.locator(".workbar")
    assert workbar.evaluate("e => e.scrollWidth - e.clientWidth") <= 0
    # Rename opens on screen, and saves.
    page.click('[data-role="rename"] summary')
    field = page.locator("#rename-title")
    assert on_screen(page, field) and on_screen(page, page.locator('[data-role="rename"] button[type="submit"]'))
    field.fill("A new name")
    page.click('[data-role="rename"] button[type="submit"]')
    expect(page.locator('[data-role="title"]')).to_have_text("A new name")


def test_one_always_per_place_it_is_remembered_and_the_keys_name_their_card(
    start_server: ServerFactory, sized: Page
) -> None:
    page = sized
    server = start_server(agent=PAGE_AGENT)
    open_session(page, server)
    send_prompt(page, "two")
    first, second = page.locator('[data-tool-call-id="two-a"]'), page.locator('[data-tool-call-id="two-b"]')
    expect(second.locator('[data-option-id="b-once"]')).to_be_visible()
    # The agent's own "Always allow" is the card's one "always" for the session; the person's rule is the other,
    # for the workspace, and says that it is a rule of theirs.
    labels = [text.lower() for text in first.locator("button:visible").all_inner_texts()]
    assert sum("always" in text for text in labels) == 1, labels
    assert sum("session" in text for text in labels) == 0, labels
    expect(first.locator('[data-role="always"]')).to_contain_text("as your rule")
    expect(first.locator('[data-action="always-workspace"]')).to_be_visible()
    # "Allow for this session" (the remote demo's words) has no "Always for this session" beside it.
    labels = [text.lower() for text in second.locator("button:visible").all_inner_texts()]
    assert sum("this session" in text for text in labels) == 1, labels
    # Two cards wait: only the first shows its keys, and says that they answer it.
    expect(first.locator('[data-role="keys-here"]')).to_be_visible()
    expect(first.locator(".options kbd").first).to_be_visible()
    expect(second.locator('[data-role="keys-here"]')).to_be_hidden()
    expect(second.locator(".options kbd").first).to_be_hidden()
    page.evaluate("() => document.activeElement.blur()")
    page.keyboard.press("1")
    answer = server.wait_received(lambda m: "method" not in m and "outcome" in (m.get("result") or {}))
    assert answer["result"] == {"outcome": {"outcome": "selected", "optionId": "a-once"}}
    expect(first.locator('[data-role="permission"]')).to_have_attribute("data-state", "selected")
    expect(second.locator('[data-role="permission"]')).to_have_attribute("data-state", "pending")
    # Now the second is the only one: its keys show, and it needs no note.
    expect(second.locator(".options kbd").first).to_be_visible()
    expect(second.locator('[data-role="keys-here"]')).to_be_hidden()


def test_the_remote_demos_card_has_one_choice_for_the_session(start_server: ServerFactory, sized: Page) -> None:
    page = sized
    server = start_server(agent=None, WEBCLIENT_DEMO_REMOTE="on")
    page.goto(server.sign_in_url("/"))
    page.click('[data-action="new-session"][data-agent="demo-remote"]')
    expect(page.locator("#session")).to_have_attribute("data-turn-state", "idle")
    send_prompt(page, "change")
    card = page.locator('[data-role="tool-call"]', has=page.locator('[data-role="permission"][data-state="pending"]'))
    expect(card.first.locator('[data-option-id="allow-always"]')).to_contain_text("Allow for this session")
    labels = [text.lower() for text in card.first.locator("button:visible").all_inner_texts()]
    assert sum("this session" in text for text in labels) == 1, labels
    expect(card.first.locator('[data-role="always"]')).to_contain_text("as your rule")
