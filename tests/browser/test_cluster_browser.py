"""Two people on two instances of one service (one PostgreSQL), in a real Chromium: both see the same live turn, one
answers its question through the instance that does not run the session, and the other sees it answered."""

from __future__ import annotations

import signal

from playwright.sync_api import expect

from tests.support.browser import Browsers, open_session, send_prompt, until_connected
from tests.support.cluster import one_service, signed_in
from tests.support.postgres import Cluster
from tests.support.restarts import stop
from tests.support.servers import ServerFactory


def test_a_turn_seen_on_two_instances_is_answered_on_the_one_that_does_not_run_it(
    start_server: ServerFactory, browsers: Browsers, postgresql: Cluster
) -> None:
    service = one_service(postgresql)
    owner = signed_in(start_server(agent=None, process=True, **service))
    other = signed_in(start_server(agent=None, process=True, **service))
    here, there = browsers.page("on the owner"), browsers.page("on the other instance")
    open_session(here, owner)
    session_path = here.url.removeprefix(owner.url)
    there.goto(other.sign_in_url(session_path))
    until_connected(there)

    send_prompt(there, "edit")  # typed where the session does not run
    for page in (here, there):
        expect(page.locator('[data-role="tool-call"] [data-option-id]').first).to_be_visible()
    there.locator('[data-role="tool-call"] [data-option-id]').first.click()
    for page in (here, there):
        expect(page.locator('[data-role="tool-call"] .answered').first).to_be_visible()
        expect(page.locator("#session")).to_have_attribute("data-turn-state", "idle")
    expect(here.locator('[data-role="tool-call"] [data-option-id]')).to_have_count(0)


def test_a_page_on_the_other_instance_reconnects_by_itself_when_the_owner_dies_and_keeps_the_thread(
    start_server: ServerFactory, browsers: Browsers, postgresql: Cluster
) -> None:
    service = one_service(postgresql)
    doomed = signed_in(start_server(agent=None, process=True, **service))
    survivor = signed_in(start_server(agent=None, process=True, **service))
    owner_page = browsers.page("on the owner")
    open_session(owner_page, doomed)
    session_path = owner_page.url.removeprefix(doomed.url)
    owner_page.close()
    page = browsers.page("on the survivor")
    page.goto(survivor.sign_in_url(session_path))
    send_prompt(page, "markdown")
    expect(page.locator("#thread table").first).to_be_visible()

    stop(doomed, signal.SIGKILL)
    # Nobody reloads: the page reconnects until the session runs on the survivor, and says it moved.
    expect(page.get_by_text("The session moved to another instance")).to_be_visible(timeout=20_000)
    expect(page.locator("#thread table").first).to_be_visible()  # what it showed before is still there
    expect(page.locator("#session")).to_have_attribute("data-connection", "open")
    send_prompt(page, "markdown")  # and it answers again, on the survivor
    expect(page.locator("#thread table")).to_have_count(2, timeout=20_000)
