"""The agent's questions (ACP elicitation) in a real Chromium: a form from its schema answered once, a link to
follow, and a question the agent withdraws."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.support.browser import open_session, send_prompt
from tests.support.servers import ServerFactory

AGENT = f"{sys.executable} {Path(__file__).resolve().parents[1] / 'agents' / 'question_agent.py'}"


def answer_said(page: Page) -> dict[str, object]:
    message = page.locator('[data-role="agent-message"]').last
    expect(message).to_contain_text("answer: ")
    return json.loads(message.inner_text().split("answer: ", 1)[1])  # type: ignore[no-any-return]


def test_a_form_question_is_answered_once_with_typed_values(start_server: ServerFactory, page: Page) -> None:
    server = start_server(agent=AGENT)
    open_session(page, server)
    expect(page.locator("h1")).to_contain_text('Questions {"form": {}, "url": {}}')  # what the agent was told
    send_prompt(page, "form")
    question = page.locator('[data-role="question"]')
    expect(question).to_have_attribute("data-state", "pending")
    expect(question).to_contain_text("Set up the <project>")
    expect(question.locator("label", has_text="Project <name>")).to_be_visible()
    expect(question.locator('[data-field="token"] input')).to_have_attribute("type", "password")
    expect(question.locator('[data-field="retries"] input')).to_have_value("3")
    expect(question.locator('[data-field="tests"] input')).to_be_checked()

    question.locator('[data-field="name"] input').fill("calculator")
    question.locator('[data-field="token"] input').fill("s3cret-token")
    question.locator('[data-field="retries"] input').fill("7")
    question.locator('[data-field="tests"] input').uncheck()
    question.locator('[data-field="style"] select').select_option("spaces")
    question.locator('[data-answer="accept"]').click()

    assert answer_said(page) == {
        "action": "accept",
        "content": {"name": "calculator", "retries": 7, "style": "spaces", "tests": False, "token": "s3cret-token"},
    }
    expect(question).to_have_attribute("data-state", "accepted")
    expect(question).to_contain_text("calculator")
    expect(question).not_to_contain_text("s3cret-token")  # a secret is never shown again
    expect(question.locator("button")).to_have_count(0)


def test_a_link_question_and_a_withdrawn_one(start_server: ServerFactory, page: Page) -> None:
    server = start_server(agent=AGENT)
    open_session(page, server)
    send_prompt(page, "link")
    question = page.locator('[data-role="question"]').last
    link = question.locator('[data-role="question-link"]')
    expect(link).to_have_attribute("href", "https://example.com/sign-in?state=1")
    expect(link).to_have_attribute("rel", "noopener noreferrer")
    # Opening the link is the consent: no Done to press, Decline and Cancel stay.
    expect(question.locator('[data-answer="accept"]')).to_be_hidden()
    expect(question.locator('[data-answer="decline"]')).to_be_visible()
    expect(question.locator('[data-answer="cancel"]')).to_be_visible()
    page.context.route("https://example.com/**", lambda route: route.fulfill(body="the service's sign-in"))
    with page.context.expect_page() as opened:
        link.click()
    expect(opened.value.locator("body")).to_have_text("the service's sign-in")
    opened.value.close()
    # The answer went at once; the entry waits for the agent's elicitation/complete (sent 1.5 s later).
    expect(question).to_have_attribute("data-state", "accepted")
    expect(question.locator('[data-role="question-waiting"]')).to_have_text("Waiting for the agent to say it is done…")
    assert answer_said(page) == {"action": "accept"}
    expect(question).to_contain_text("the agent says it is done")
    expect(question.locator('[data-role="question-waiting"]')).to_have_count(0)
    assert [m["result"] for m in server.received() if m.get("id") == 1001 and "result" in m] == [{"action": "accept"}]

    send_prompt(page, "withdraw")
    withdrawn = page.locator('[data-role="question"]').last
    expect(withdrawn).to_have_attribute("data-state", "withdrawn")
    expect(withdrawn).to_contain_text("Withdrawn by the agent.")
    expect(page.locator('[data-role="agent-message"]').last).to_contain_text('"code": -32800')


def test_the_demo_agent_asks_a_form_question(start_server: ServerFactory, page: Page) -> None:
    server = start_server(agent=None)
    open_session(page, server)
    send_prompt(page, "question")
    question = page.locator('[data-role="question"]')
    expect(question).to_contain_text("Set up a new project")
    expect(question.locator('[data-field="coverage"] input')).to_have_value("80")
    question.locator('[data-field="name"] input').fill("demo")
    question.locator('[data-field="token"] input').fill("hidden-token")
    question.locator('[data-answer="accept"]').click()
    reply = page.locator('[data-role="agent-message"]').last
    expect(reply).to_contain_text('"name": "demo"')
    expect(reply).to_contain_text('"coverage": 80')
    expect(reply).to_contain_text('"token": "(hidden)"')
    expect(page.locator("#thread")).not_to_contain_text("hidden-token")


def test_signing_out_of_an_agent_that_offers_it(start_server: ServerFactory, page: Page) -> None:
    server = start_server(agent=AGENT)
    open_session(page, server)
    page.click('[data-action="sign-out"]')
    expect(page.locator('[data-role="notice"]').last).to_contain_text("Signed out of the agent")
    assert [m for m in server.received() if m.get("method") == "logout"] != []
