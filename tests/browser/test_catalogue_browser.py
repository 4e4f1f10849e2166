"""Choosing an agent and a folder on the index, in a real Chromium, lands in a session of that agent there."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.support.browser import send_prompt
from tests.support.catalogue import start_catalogued
from tests.support.servers import AGENTS, ServerFactory


def test_choosing_an_agent_and_a_folder_on_the_index(start_server: ServerFactory, page: Page, tmp_path: Path) -> None:
    catalogued = start_catalogued(start_server, tmp_path)
    page.goto(catalogued.server.sign_in_url("/"))
    expect(page.locator('[data-action="new-session"]')).to_have_count(4)

    # A folder outside the agent's roots: refused on the index, the folder kept to correct it.
    page.fill('input[name="workspace"]', str(catalogued.outside))
    page.click('[data-action="new-session"][data-agent="beta"]')
    expect(page.locator('[data-role="refused"]')).to_contain_text("is outside what the agent beta may use")
    expect(page.locator('input[name="workspace"]')).to_have_value(str(catalogued.outside))

    project = catalogued.home / "project"
    page.fill('input[name="workspace"]', str(project))
    page.click('[data-action="new-session"][data-agent="beta"]')
    expect(page.locator("#session")).to_have_attribute("data-turn-state", "idle")
    send_prompt(page, "hello")
    expect(page.locator('[data-role="agent-message"]')).to_have_text("ok")
    [new] = catalogued.session_new("beta")
    assert new["params"]["cwd"] == str(project.resolve())
    assert catalogued.received("alpha") == []


def test_an_agents_own_sessions_are_listed_from_the_index_and_from_another_site_only_by_a_press(
    start_server: ServerFactory, page: Page, tmp_path: Path
) -> None:
    """Its link on the index lists them (the browser says the request comes from our page); a link on another site
    shows the button that lists them, and starts nothing until it is pressed."""
    sessions_file = tmp_path / "agent-sessions.json"
    lister = f"{sys.executable} {AGENTS / 'resumable_agent.py'}"
    server = start_server(agent=lister, RESUME_MODE="list", SESSIONS_FILE=str(sessions_file))
    sessions_file.write_text(json.dumps({"own-1": {"cwd": str(server.workspace), "title": "Mine", "turns": []}}))
    page.goto(server.sign_in_url("/"))
    page.click('[data-action="agent-sessions"]')
    expect(page.locator('[data-agent-session-id="own-1"]')).to_be_visible()
    listing_url = page.url
    starts = sum(m.get("method") == "initialize" for m in server.received())

    other_site = tmp_path / "other-site.html"
    other_site.write_text(f'<a id="lure" href="{listing_url}">free stuff</a>')
    page.goto(other_site.as_uri())
    page.click("#lure")
    expect(page.locator('[data-action="list-agent-sessions"]')).to_be_visible()
    assert sum(m.get("method") == "initialize" for m in server.received()) == starts
    page.click('[data-action="list-agent-sessions"]')
    expect(page.locator('[data-agent-session-id="own-1"]')).to_be_visible()
