"""Signing an agent in with a key from the page, in a real Chromium, on a codex- and gemini-like agent
(``tests/agents/login_agent.py`` with ``$LOGIN_KEYS``): an ``env_var`` method without its variable asks for it right
there, keeps it as the person's secret (never shown again), starts the agent again with it and sends
``authenticate``; a gemini-like API-key method is taken the same way; one that does not sign in says so."""

from __future__ import annotations

import sys
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.support.browser import send_prompt
from tests.support.servers import AGENTS, Server, ServerFactory
from tests.support.urls import at

AGENT = f"{sys.executable} {AGENTS / 'login_agent.py'}"
KEY = "sk-test-0123456789-never-shown"


def start_keys(start_server: ServerFactory, page: Page, **env: str) -> Server:
    server = start_server(agent=AGENT, LOGIN_KEYS="1", **{"GEMINI_API_KEY": "", **env})
    page.goto(server.sign_in_url("/"))
    page.click('[data-action="new-session"]')
    expect(page.locator("#session")).to_have_attribute("data-agent-state", "auth-required")
    expect(page.locator("#session")).to_have_attribute("data-connection", "open")
    return server


def authenticated(server: Server) -> list[str]:
    return [m["params"]["methodId"] for m in server.received() if m.get("method") == "authenticate"]


def test_a_key_given_on_the_page_is_kept_as_a_secret_and_signs_the_agent_in(
    start_server: ServerFactory, page: Page
) -> None:
    server = start_keys(start_server, page)
    auth = page.locator('[data-role="auth"]')
    openai = auth.locator('[data-auth-id="openai-api-key"]')
    # No variable set: a field right there, no button that could only fail.
    expect(openai.locator('[data-env-var="LOGIN_OPENAI_KEY"]')).to_contain_text("not set")
    expect(openai.locator("[data-auth-method]")).to_have_count(0)
    expect(openai.locator('[data-key-var="LOGIN_OPENAI_KEY"]')).to_have_attribute("type", "password")
    expect(openai).to_contain_text("Kept as your secret")
    # The gemini-like method (``_meta["api-key"].provider``) asks for GEMINI_API_KEY the same way.
    gemini = auth.locator('[data-auth-id="gemini-api-key"]')
    expect(gemini.locator('[data-key-var="GEMINI_API_KEY"]')).to_be_visible()
    expect(gemini.locator("[data-auth-method]")).to_have_count(0)
    # Only the login that may open a browser on the server says so; keys and Vertex AI do not.
    expect(auth.locator('[data-auth-id="chatgpt"] [data-role="browser-sign-in"]')).to_be_visible()
    expect(auth.locator('[data-role="browser-sign-in"]')).to_have_count(1)

    openai.locator('[data-key-var="LOGIN_OPENAI_KEY"]').fill(KEY)
    openai.locator('[data-action="sign-in-with-key"]').click()
    expect(page.locator("#session")).to_have_attribute("data-agent-state", "ready")
    expect(page.locator('[data-role="auth"]')).to_have_count(0)
    # The agent was started again (with the key in its environment: its authenticate succeeded), then signed in.
    assert [m["method"] for m in server.received() if m.get("method") in ("initialize", "authenticate")] == [
        "initialize",
        "initialize",
        "authenticate",
    ]
    assert authenticated(server) == ["openai-api-key"]
    send_prompt(page, "hello")
    expect(page.locator('[data-role="agent-message"]').last).to_have_text("signed in and working (openai-api-key)")

    # The key is nowhere to be seen again: not on the page, its protocol log, the secrets page, the data folder.
    assert KEY not in page.content()
    session_url = page.url
    page.goto(session_url + "/log")
    expect(page.locator("body")).to_contain_text("authenticate")
    assert KEY not in page.content()
    page.goto(at(server.url, "secrets"))
    expect(page.locator("body")).to_contain_text("LOGIN_OPENAI_KEY")
    assert KEY not in page.content()
    assert server.data_dir is not None
    for path in Path(server.data_dir).rglob("*"):
        assert not path.is_file() or KEY.encode() not in path.read_bytes(), path


def test_a_method_that_did_not_sign_in_says_so_and_another_key_can_be_given(
    start_server: ServerFactory, page: Page
) -> None:
    server = start_keys(start_server, page, GEMINI_API_KEY="bad-key")
    gemini = page.locator('[data-auth-id="gemini-api-key"]')
    # Its variable is set in the server's environment: its button sends authenticate.
    expect(gemini.locator('[data-env-var="GEMINI_API_KEY"]')).to_contain_text("set in the server's environment now")
    gemini.locator('[data-auth-method="gemini-api-key"]').click()
    expect(page.locator('[data-role="auth-error"]')).to_have_text(
        "Still not signed in: the agent says “Authentication required” after “Gemini API key”."
    )
    expect(page.locator("#session")).to_have_attribute("data-agent-state", "auth-required")
    assert authenticated(server) == ["gemini-api-key"]
    # Another key, given on the page, replaces the server's for this person's agent.
    gemini.locator("summary", has_text="Use another key").click()
    gemini.locator('[data-key-var="GEMINI_API_KEY"]').fill("good-key-1")
    gemini.locator('[data-action="sign-in-with-key"]').click()
    expect(page.locator("#session")).to_have_attribute("data-agent-state", "ready")
    send_prompt(page, "hello")
    expect(page.locator('[data-role="agent-message"]').last).to_have_text("signed in and working (gemini-api-key)")
    assert authenticated(server) == ["gemini-api-key", "gemini-api-key"]
