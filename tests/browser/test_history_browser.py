"""The history in a real Chromium: a search finds a session by what its agent said, and its row leads to it."""

from __future__ import annotations

import asyncio
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.support.browser import open_session, send_prompt
from tests.support.servers import ServerFactory
from webclient.session.agent_entry import AgentEntry
from webclient.session.agent_spec import AgentSpec
from webclient.store.store import Store


def test_a_search_finds_a_session_by_a_word_the_demo_agent_said(start_server: ServerFactory, page: Page) -> None:
    server = start_server(agent=None)
    open_session(page, server)
    session_url = page.url
    send_prompt(page, "markdown")
    expect(page.locator("#session")).to_have_attribute("data-turn-state", "idle", timeout=20_000)
    expect(page.locator('[data-role="agent-message"]').last).to_contain_text("showcase")
    session_id = page.locator("#session").get_attribute("data-session-id")

    page.goto(server.url + "/")
    page.fill('form[data-role="search"] input[name="q"]', "showcase")
    page.keyboard.press("Enter")
    row = page.locator(f'[data-session-id="{session_id}"]')
    expect(row.locator('[data-role="matches"] mark').first).to_have_text(re.compile("showcase", re.IGNORECASE))
    expect(page).to_have_url(re.compile(r"\?q=showcase$"))
    row.locator(".history-title").click()
    expect(page).to_have_url(session_url)
    expect(page.locator("#session")).to_have_attribute("data-session-id", str(session_id))


def fill(folder: Path) -> None:
    async def go() -> None:
        store = await Store.open_url(f"sqlite:///{folder / 'webclient.sqlite3'}")
        try:
            spec = AgentSpec(AgentEntry("agent", ["stored-agent"]), Path("/srv/project"))
            for n, words in enumerate(["the parser is slow", "the lexer is fast", "a slow lexer and parser"]):
                recorder = store.open_journal(f"s{n}", "stored", spec, 1_700_000_000.0 + n)
                recorder.state("ended", f"Session {n}", "Stored", 1)
                recorder.words("agent", words)
        finally:
            await store.close()

    # Playwright's sync API keeps an event loop running in this thread: the store is filled in another.
    with ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, go()).result()


def test_typing_a_search_shows_the_matching_sessions_without_leaving_the_page(
    start_server: ServerFactory, page: Page, tmp_path: Path
) -> None:
    folder = tmp_path / "data"
    folder.mkdir()
    fill(folder)
    server = start_server(WEBCLIENT_DATA_DIR=str(folder))
    page.goto(server.sign_in_url("/"))
    rows = page.locator("[data-session-id]")
    expect(rows).to_have_count(3)
    page.evaluate("window.sameDocument = true")  # gone if the page were loaded again
    page.locator('form[data-role="search"] input[name="q"]').press_sequentially("slow pars", delay=30)
    expect(rows).to_have_count(2)
    expect(page).to_have_url(re.compile(r"\?q=slow(\+|%20)pars$"))
    assert page.evaluate("window.sameDocument") is True
    expect(page.locator('form[data-role="search"] input[name="q"]')).to_be_focused()
    expect(rows.nth(0).locator("mark")).to_have_text(["slow", "parser"])
    expect(rows.nth(1).locator("mark")).to_have_text(["parser", "slow"])

    rows.nth(0).locator('[data-action="archive"]').click()  # a plain form: back to the same search
    expect(rows).to_have_count(1)
    expect(page.locator('form[data-role="search"] input[name="q"]')).to_have_value("slow pars")
    page.locator('[data-role="archived-toggle"]').click()
    expect(rows).to_have_count(2)
    expect(rows.nth(0).locator('[data-role="archived"]')).to_be_visible()


def test_renaming_a_session_from_its_page(start_server: ServerFactory, page: Page) -> None:
    server = start_server(agent=None)
    open_session(page, server)
    rename = page.locator('details[data-role="rename"]')
    rename.locator("summary").click()
    rename.locator('input[name="title"]').fill("Release checklist")
    rename.locator('[data-action="rename"]').click()
    expect(page.locator('h1[data-role="title"]')).to_have_text("Release checklist")
    expect(rename).not_to_have_attribute("open", "")
    page.goto(server.url + "/")
    expect(page.locator(".history-title").first).to_have_text("Release checklist")
