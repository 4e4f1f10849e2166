"""A long session in the browser opens at its end, and a link to an older entry opens the page around it: in a real
Chromium, the entry is in view, and scrolling down loads the later entries up to the newest. A long answer shows its
end, and its earlier parts on request."""

from __future__ import annotations

import asyncio
import re
from concurrent.futures import ThreadPoolExecutor

from playwright.sync_api import Page, expect

from tests.browser.test_flood_browser import CARDS, FLOOD_AGENT, flood
from tests.support.browser import until_connected
from tests.support.restarts import drive
from tests.support.servers import ServerFactory
from tests.support.urls import URLS


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


def test_a_long_answer_shows_its_end_and_its_earlier_parts_on_request(start_server: ServerFactory, page: Page) -> None:
    server = start_server(agent=FLOOD_AGENT)
    text = "\n\n".join(f"Paragraph {number:05d} " + "lorem ipsum " * 7 for number in range(2500))  # 250 kB
    with ThreadPoolExecutor(1) as thread:  # Playwright's event loop runs in this one
        session_id = thread.submit(asyncio.run, drive(server, [text])).result()
    page.goto(server.sign_in_url(URLS.for_("session", session_id=session_id)))
    answer = page.locator('[data-role="agent-message"]')
    expect(answer).to_contain_text("Paragraph 02499")
    assert "Paragraph 00000" not in answer.inner_text()
    until_connected(page)
    page.locator('[data-action="message-earlier"]').click()  # 100 kB a part: two parts before the end shown
    expect(answer).to_contain_text("Paragraph 01000")
    assert "Paragraph 00000" not in answer.inner_text()
    page.locator('[data-action="message-earlier"]').click()
    expect(answer).to_contain_text("Paragraph 00000")
    expect(page.locator('[data-action="message-earlier"]')).to_have_count(0)
    shown = answer.inner_text()
    numbers = [int(number) for number in re.findall(r"Paragraph (\d{5})", shown)]
    assert numbers == list(range(2500))  # in order, none missing, none twice
