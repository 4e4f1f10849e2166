"""Steps every browser test takes: open a new session, send a prompt."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.support.servers import Server


def open_session(page: Page, server: Server) -> None:
    page.goto(server.sign_in_url("/"))
    page.click('[data-action="new-session"]')
    expect(page.locator("#session")).to_have_attribute("data-turn-state", "idle")


def send_prompt(page: Page, text: str) -> None:
    page.fill('[data-role="prompt"] textarea[name="prompt"]', text)
    page.keyboard.press("Enter")
