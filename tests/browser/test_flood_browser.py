"""A long session in the browser: the page holds a window of the newest entries and loads older ones as the
user scrolls up, without moving what they read; a thread over its cap says it dropped the oldest."""

from __future__ import annotations

import sys

from playwright.sync_api import Page, expect

from tests.support.browser import until_connected
from tests.support.servers import AGENTS, Server, ServerFactory

FLOOD_AGENT = f"{sys.executable} {AGENTS / 'flood_agent.py'}"
CARDS = '[data-role="tool-call"]'


def flood(page: Page, server: Server, last: int) -> None:
    page.goto(server.sign_in_url("/"))
    page.click('[data-action="new-session"]')
    expect(page.locator("#session")).to_have_attribute("data-turn-state", "idle")
    until_connected(page)
    page.fill('[data-role="prompt"] textarea[name="prompt"]', "flood")
    page.keyboard.press("Enter")
    expect(page.locator(f'[data-tool-call-id="flood-{last}"]')).to_be_visible(timeout=60_000)
    expect(page.locator("#session")).to_have_attribute("data-turn-state", "idle", timeout=60_000)


def test_scrolling_up_loads_earlier_entries_in_place(start_server: ServerFactory, page: Page) -> None:
    server = start_server(agent=FLOOD_AGENT, FLOOD_COUNT="20000")
    flood(page, server, 20000)
    page.reload()
    expect(page.locator(CARDS)).to_have_count(30)
    first = page.locator('[data-tool-call-id="flood-19971"]')
    expect(first).to_be_visible()
    page.evaluate("window.scrollTo(0, 0)")
    before = first.bounding_box()
    expect(page.locator('[data-tool-call-id="flood-19941"]')).to_be_attached()
    expect(page.locator(CARDS)).to_have_count(60)
    after = first.bounding_box()
    assert before is not None and after is not None
    assert abs(after["y"] - before["y"]) < 50, f"what the user read moved from {before['y']} to {after['y']}"
    # Further up, the next window; the cards come in order.
    page.evaluate("window.scrollTo(0, 0)")
    expect(page.locator(CARDS)).to_have_count(90)
    ids = page.locator(CARDS).evaluate_all("cards => cards.map(card => card.dataset.toolCallId)")
    assert ids == [f"flood-{n}" for n in range(19911, 20001)]


def test_a_thread_over_its_cap_says_it_dropped_the_oldest(start_server: ServerFactory, page: Page) -> None:
    server = start_server(agent=FLOOD_AGENT, FLOOD_COUNT="1000", WEBCLIENT_MAX_ENTRIES="300")
    flood(page, server, 1000)
    page.reload()
    notice = page.locator('[data-role="entries-dropped"]')
    for _ in range(10):  # each scroll to the top loads one more window, until the oldest kept entry
        page.evaluate("window.scrollTo(0, 0)")
        page.wait_for_timeout(300)
        if notice.count():
            break
    expect(notice).to_contain_text("Older entries were dropped to keep memory bounded")
    kept = page.locator(CARDS).count()
    assert 300 <= kept <= 330
    expect(notice).to_contain_text(f"({kept:,} entries kept)")
    expect(page.locator('[data-tool-call-id="flood-1000"]')).to_be_attached()
    expect(page.locator('[data-tool-call-id="flood-1"]')).to_have_count(0)
