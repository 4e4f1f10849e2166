"""Steps every browser test takes: open a new session, send a prompt; a browser context per person."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Browser, Page, expect

from tests.support.servers import Server


def open_session(page: Page, server: Server) -> None:
    page.goto(server.sign_in_url("/"))
    page.click('[data-action="new-session"]')
    expect(page.locator("#session")).to_have_attribute("data-turn-state", "idle")
    until_connected(page)


def until_connected(page: Page) -> None:
    """The page's scripts are running (its socket is open): what is typed now is sent, where before they ran Enter
    made a new line in the box."""
    expect(page.locator("#session")).to_have_attribute("data-connection", "open")


def send_prompt(page: Page, text: str) -> None:
    until_connected(page)
    page.fill('[data-role="prompt"] textarea[name="prompt"]', text)
    page.keyboard.press("Enter")


class Browsers:
    """A browser context per person, each checked for JavaScript errors when the test ends (`close`)."""

    def __init__(self, browser: Browser) -> None:
        self.browser = browser
        self.contexts: list[Any] = []
        self.errors: list[str] = []

    def page(self, name: str, **options: Any) -> Page:
        """A page of a new context for ``name``; ``options`` go to ``new_context`` (headers, credentials)."""
        context = self.browser.new_context(viewport={"width": 1200, "height": 900}, **options)
        self.contexts.append(context)
        page: Page = context.new_page()
        page.set_default_timeout(15_000)
        page.on("pageerror", lambda error: self.errors.append(f"{name}: {error}"))
        return page

    def close(self) -> None:
        for context in self.contexts:
            context.close()
        assert not self.errors, f"JavaScript errors in the pages: {self.errors}"
