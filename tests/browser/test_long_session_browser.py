"""A long session in the browser opens at its end, and a link to an older entry opens the page around it: in a real
Chromium, the entry is in view, and scrolling down loads the later entries up to the newest."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.browser.test_flood_browser import CARDS, FLOOD_AGENT, flood
from tests.support.servers import ServerFactory


def test_a_link_to_an_old_entry_shows_it_and_scrolling_down_reaches_the_newest(
    start_server: ServerFactory, page: Page
) -> None:
    server = start_server(agent=FLOOD_AGENT, FLOOD_COUNT="300")
    flood(page, server, 300)
    session_url = page.url.split("?")[0].split("#")[0]
    newest = page.locator('[data-tool-call-id="flood-300"]').get_attribute("id")
    assert newest is not None and newest.startswith("entry-")
    seq = f"entry-{int(newest.removeprefix('entry-')) - 250}"  # flood-50's card
    page.goto("about:blank")  # a link followed from elsewhere (the same page would only scroll)
    page.goto(f"{session_url}#{seq}")  # the page lacks it (it holds the newest 30): it opens on the window around it
    linked = page.locator(f"#{seq}")
    expect(linked).to_have_attribute("data-tool-call-id", "flood-50")
    expect(linked).to_be_in_viewport()
    assert f"at={seq.removeprefix('entry-')}" in page.url
    expect(page.locator('[data-tool-call-id="flood-300"]')).to_have_count(0)
    for _ in range(20):  # each scroll to the bottom loads the next window ("Show later"), up to the newest
        page.evaluate("window.scrollTo(0, document.scrollingElement.scrollHeight)")
        page.wait_for_timeout(200)
        if page.locator('[data-tool-call-id="flood-300"]').count():
            break
    expect(page.locator('[data-tool-call-id="flood-300"]')).to_be_attached()
    ids = page.locator(CARDS).evaluate_all("cards => cards.map(card => card.dataset.toolCallId)")
    start = int(ids[0].removeprefix("flood-"))
    assert ids == [f"flood-{n}" for n in range(start, 301)]  # in order, none missing, none twice
    expect(page.locator('[data-action="show-later"]')).to_have_count(0)
