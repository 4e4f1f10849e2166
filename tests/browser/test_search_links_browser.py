"""A search's hit deep in a long session, clicked in a real Chromium: the session's page opens on the window around the
entry it was said in, scrolled to it and outlined, though the page holds only a window of the session's entries."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.support.servers import ServerFactory
from tests.web.test_search_links import fill


def test_clicking_a_hit_deep_in_a_long_session_shows_its_entry(
    start_server: ServerFactory, page: Page, tmp_path: Path
) -> None:
    folder = tmp_path / "data"
    folder.mkdir()
    with ThreadPoolExecutor(1) as thread:  # Playwright's event loop runs in this one
        prompts = thread.submit(fill, folder, 1_000).result()  # 2,000 entries
    server = start_server(WEBCLIENT_DATA_DIR=str(folder))
    page.goto(server.sign_in_url("/"))
    page.fill('form[data-role="search"] input[name="q"]', "marker0100")
    page.keyboard.press("Enter")
    hit = page.locator('[data-session-id="long"] [data-role="match"]')
    expect(hit).to_have_count(1)
    hit.click()

    seq = prompts[100]
    expect(page).to_have_url(f"{server.url}/sessions/long?at={seq}#entry-{seq}")
    entry = page.locator(f"#entry-{seq}")
    expect(entry).to_contain_text("prompt number 100: marker0100")
    expect(entry).to_be_in_viewport()
    assert entry.evaluate("element => getComputedStyle(element).outlineStyle") == "solid"  # the link's target
    expect(page.locator(f"#entry-{prompts[999]}")).to_have_count(0)  # the page holds the window around it
    expect(page.locator('[data-action="show-later"]')).to_be_attached()
