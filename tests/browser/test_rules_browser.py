"""Rules and the inbox in a real Chromium, as a signed-in person (trusted-header mode): the card's "Always in this
workspace" answers and says which rule did, with a link to it on the rules page; the inbox shows a new question
without a reload and answers it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser import send_prompt
from tests.support.people import TEAM, person_context
from tests.support.servers import ServerFactory
from tests.support.urls import at

pytestmark = pytest.mark.browser


@pytest.fixture
def alice(browser: Any) -> Iterator[Any]:
    context = person_context(browser, "alice")
    errors: list[str] = []
    context.on("weberror", lambda error: errors.append(str(error.error)))
    yield context
    context.close()
    assert not errors, f"JavaScript errors in the page: {errors}"


def new_page(context: Any) -> Page:
    page: Page = context.new_page()
    page.set_default_timeout(15_000)
    return page


def test_always_in_this_workspace_then_the_rules_page(start_server: ServerFactory, alice: Any) -> None:
    server = start_server(**TEAM)
    page = new_page(alice)
    page.goto(server.url + "/")
    page.click('[data-action="new-session"]')
    expect(page.locator("#session")).to_have_attribute("data-turn-state", "idle")
    send_prompt(page, "ask edit src/app.py")
    card = page.locator('[data-role="permission"]').last
    expect(card).to_have_attribute("data-state", "pending")
    card.locator('[data-action="always-workspace"]').click()
    ruled = card.locator('[data-role="answered-by-rule"]')
    expect(ruled).to_contain_text("Allowed by your rule: edit src/app.py (rule 1)")
    expect(page.locator('[data-role="agent-message"]').last).to_contain_text("answer: allow-once")

    send_prompt(page, "ask edit src/app.py")  # the rule answers the next one at once
    expect(page.locator('[data-role="agent-message"]')).to_have_count(2)
    expect(page.locator('[data-role="answered-by-rule"]')).to_have_count(2)

    page.locator('[data-role="rule-link"]').first.click()
    expect(page).to_have_url(at(server.url, "rules") + "#rule-1")
    expect(page.locator("#rule-1")).to_contain_text("edit src/app.py")
    expect(page.locator('[data-role="rules-judge-the-line"]')).to_contain_text(
        "Rules judge what the agent says it will do (the command line it reports), not what the process then does"
    )
    page.locator('#rule-1 [data-action="delete-rule"]').click()
    expect(page.locator('[data-role="no-rules"]')).to_be_visible()


def test_the_inbox_shows_a_new_question_live_and_answers_it(start_server: ServerFactory, alice: Any) -> None:
    server = start_server(**TEAM)
    session = new_page(alice)
    session.goto(server.url + "/")
    session.click('[data-action="new-session"]')
    expect(session.locator("#session")).to_have_attribute("data-turn-state", "idle")
    inbox = new_page(alice)
    inbox.goto(at(server.url, "inbox"))
    expect(inbox.locator('[data-role="inbox-count"]')).to_have_text("Nothing waits for you.")

    send_prompt(session, "ask execute make deploy")
    item = inbox.locator(".inbox-item")
    expect(item).to_have_count(1)  # polled in, no reload
    expect(item).to_contain_text("make deploy")
    expect(inbox.locator("#inbox")).to_have_attribute("data-new-questions", "1")
    index = new_page(alice)
    index.goto(server.url + "/")
    expect(index.locator('[data-role="inbox-link"]')).to_have_text("Inbox (1)")

    item.locator('[data-option-id="allow-once"]').click()
    expect(inbox.locator('[data-role="inbox-count"]')).to_have_text("Nothing waits for you.")
    expect(session.locator('[data-role="agent-message"]').last).to_contain_text("answer: allow-once")
    expect(session.locator('[data-role="permission"]').last).to_have_attribute("data-state", "selected")
    # The link polls every 5 s: the default 5 s of waiting could end just before its next poll.
    expect(index.locator('[data-role="inbox-link"]')).to_have_text("Inbox", timeout=15_000)
