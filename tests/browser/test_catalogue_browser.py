"""Choosing an agent and a folder on the index, in a real Chromium, lands in a session of that agent there."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Page, expect

from tests.support.browser import send_prompt
from tests.support.catalogue import start_catalogued
from tests.support.servers import ServerFactory


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
