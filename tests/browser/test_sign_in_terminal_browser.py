"""The sign-in terminal in a real Chromium: a ``terminal`` sign-in method runs the agent's login in an xterm.js
terminal on the page; what the person types there reaches the login's pty, and when it ends well the agent starts
again and the session is ready, signed in. No Content-Security-Policy violation on the way."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from playwright.sync_api import ConsoleMessage, Page, expect

from tests.support.browser import until_connected
from tests.support.servers import AGENTS, ServerFactory, live_processes

AGENT = f"{sys.executable} {AGENTS / 'login_agent.py'}"


def alive(pid: int) -> bool:
    return any(found == pid for found, _, _ in live_processes())


def start_login(start_server: ServerFactory, page: Page, tmp_path: Path) -> tuple[Path, list[str]]:
    """A server on the login agent and a new session on the page, asking for a sign-in; the CSP reports."""
    tokens = tmp_path / "tokens"
    server = start_server(agent=AGENT, LOGIN_TOKEN_DIR=str(tokens))
    violations: list[str] = []

    def console(message: ConsoleMessage) -> None:
        if "Content Security Policy" in message.text or "Content-Security-Policy" in message.text:
            violations.append(message.text)

    page.on("console", console)
    page.goto(server.sign_in_url("/"))
    page.click('[data-action="new-session"]')
    expect(page.locator("#session")).to_have_attribute("data-agent-state", "auth-required")
    return tokens, violations


def test_typing_the_code_into_the_sign_in_terminal_signs_the_agent_in(
    start_server: ServerFactory, page: Page, tmp_path: Path
) -> None:
    tokens, violations = start_login(start_server, page, tmp_path)
    auth = page.locator('[data-role="auth"]')
    expect(auth.locator('[data-auth-id="login"] [data-role="terminal-sign-in"]')).to_contain_text("--login")
    # The agent-type method says where its browser would open (the test server listens on loopback).
    expect(auth.locator('[data-auth-id="browser"] [data-role="browser-sign-in"]')).to_contain_text(
        "listens on this machine only"
    )
    expect(page.locator('[data-role="auth-status"]')).to_have_text("Not signed in")
    page.click('[data-terminal-sign-in="login"]')
    screen = page.locator('[data-role="sign-in-terminal"] .xterm-rows')
    expect(screen).to_contain_text("Enter the code:")
    expect(screen).to_contain_text("on a terminal")
    # The link the login prints opens in a tab of the person's own (the addon's link, a web link only).
    page.context.route("https://login.example/**", lambda route: route.fulfill(body="the login page"))
    link_row = screen.locator("div", has_text="https://login.example/device?code=XYZ").last
    # Scrolled (as a person would) until the link's line is clear of the sticky sign-in line above it: the page may
    # have followed the thread to its end, which puts the terminal's first lines beneath that line.
    page.evaluate(
        """(row) => {
            const covered = document.querySelector('.auth-lede').getBoundingClientRect().bottom;
            const top = row.getBoundingClientRect().top;
            if (top < covered + 10) window.scrollBy(0, top - covered - 20);
        }""",
        link_row.element_handle(),
    )
    box = link_row.bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + 60, box["y"] + box["height"] / 2)
    with page.context.expect_page() as opened:
        page.mouse.click(box["x"] + 60, box["y"] + box["height"] / 2)
    assert opened.value.url == "https://login.example/device?code=XYZ"
    opened.value.close()
    page.locator('[data-role="sign-in-terminal"] .xterm').click()
    page.keyboard.type("4242")
    expect(screen).to_contain_text("Enter the code: 4242")  # echoed by the pty: it went through the terminal
    page.keyboard.press("Enter")
    expect(page.locator("#session")).to_have_attribute("data-agent-state", "ready", timeout=20_000)
    expect(page.locator('[data-role="sign-in-terminal"]')).to_have_count(0)
    expect(page.locator('[data-role="auth"]')).to_have_count(0)
    # The account is the agent's text, shown as text.
    expect(page.locator('[data-role="auth-status"]')).to_contain_text("Signed in: <b>Test</b> account")
    expect(page.locator('[data-role="auth-status"] b')).to_have_count(0)
    until_connected(page)
    page.fill('[data-role="prompt"] textarea[name="prompt"]', "hello")
    page.keyboard.press("Enter")
    expect(page.locator('[data-role="agent-message"]').last).to_have_text("signed in and working")
    (run,) = [json.loads(line) for line in (tokens / "runs.jsonl").read_text().splitlines()]
    assert run["argv"] == ["--login"] and run["tty"] is True and run["controlling_tty"] is True
    assert not alive(run["pid"]) and not alive(run["sleeper"])
    assert violations == []


def test_a_wrong_code_shows_the_exit_code_and_the_terminal_goes_when_the_session_ends(
    start_server: ServerFactory, page: Page, tmp_path: Path
) -> None:
    tokens, violations = start_login(start_server, page, tmp_path)
    page.click('[data-terminal-sign-in="login"]')
    screen = page.locator('[data-role="sign-in-terminal"] .xterm-rows')
    expect(screen).to_contain_text("Enter the code:")
    page.locator('[data-role="sign-in-terminal"] .xterm').click()
    page.keyboard.press("Escape")  # the command's key (a menu's way back), not the page's Stop: the sign-in goes on
    page.keyboard.type("1111\n")
    expect(page.locator('[data-role="auth-error"]')).to_contain_text("ended with exit code 3")
    expect(page.locator('[data-role="sign-in-terminal-status"]')).to_have_text("ended with exit code 3")
    expect(screen).to_contain_text("Wrong code.")
    # Try again: a fresh terminal, left waiting; ending the session stops it and its process group.
    page.click('[data-terminal-sign-in="login"]')
    expect(page.locator('[data-role="sign-in-terminal-status"]')).to_contain_text("running")
    expect(page.locator('[data-role="sign-in-terminal"] .xterm-rows')).to_contain_text("Enter the code:")
    runs = [json.loads(line) for line in (tokens / "runs.jsonl").read_text().splitlines()]
    assert len(runs) == 2 and alive(runs[1]["pid"]) and alive(runs[1]["sleeper"])
    # A reload finds the same run: what it showed so far comes again, and it still takes keys.
    page.reload()
    screen = page.locator('[data-role="sign-in-terminal"] .xterm-rows')
    expect(screen).to_contain_text("Test login (on a terminal).")
    expect(screen).to_contain_text("Enter the code:")
    expect(screen).not_to_contain_text("Wrong code.")  # a fresh screen for the new run
    page.locator('[data-role="sign-in-terminal"] .xterm').click()
    page.keyboard.type("77")
    expect(screen).to_contain_text("Enter the code: 77")
    page.click('[data-action="end-session"]')
    expect(page.locator('[data-role="sign-in-terminal"]')).to_have_count(0)
    assert not alive(runs[1]["pid"]) and not alive(runs[1]["sleeper"])
    assert violations == []
