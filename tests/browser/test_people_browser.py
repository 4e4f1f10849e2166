"""Two people in two browser contexts on one server (trusted-header mode): each sees only their own sessions, and
keeps secrets the page never shows again."""

from __future__ import annotations

import secrets
from typing import Any

from playwright.sync_api import expect

from tests.support.people import TEAM, person_context
from tests.support.servers import ServerFactory


def test_another_persons_session_does_not_exist_for_them(start_server: ServerFactory, browser: Any) -> None:
    server = start_server(**TEAM)
    alice = person_context(browser, "alice").new_page()
    bob = person_context(browser, "bob").new_page()
    alice.goto(server.url + "/")
    alice.locator('[data-action="new-session"]').first.click()
    expect(alice.locator("#session")).to_have_attribute("data-agent-state", "ready", timeout=20_000)
    session_id = alice.locator("#session").get_attribute("data-session-id")
    assert session_id

    refused = bob.goto(alice.url)
    assert refused is not None and refused.status == 404
    expect(bob.locator("body")).to_have_text("No such session")
    bob.goto(server.url + "/")
    expect(bob.locator(f'[data-session-id="{session_id}"]')).to_have_count(0)
    alice.goto(server.url + "/")
    expect(alice.locator(f'[data-session-id="{session_id}"]')).to_have_count(1)
    admin = person_context(browser, "root", ["admins"]).new_page()
    admin.goto(server.url + "/")
    expect(admin.locator(f'[data-session-id="{session_id}"]')).to_have_count(1)


def test_a_secret_is_listed_by_name_and_never_shown_again(start_server: ServerFactory, browser: Any) -> None:
    server = start_server(**TEAM)
    page = person_context(browser, "alice").new_page()
    value = f"sk-{secrets.token_hex(16)}"
    page.goto(server.url + "/")
    page.locator('[data-action="secrets"]').click()
    page.fill('input[name="name"]', "ANTHROPIC_API_KEY")
    page.fill('input[name="value"]', value)
    page.locator('[data-action="save-secret"]').click()
    expect(page.locator('[data-role="saved"]')).to_contain_text("Saved ANTHROPIC_API_KEY")
    expect(page.locator('[data-secret="ANTHROPIC_API_KEY"]')).to_have_count(1)
    assert value not in page.content() and page.input_value('input[name="value"]') == ""
    page.locator('[data-secret="ANTHROPIC_API_KEY"] [data-action="delete-secret"]').click()
    expect(page.locator('[data-role="no-secrets"]')).to_be_visible()
