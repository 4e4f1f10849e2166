"""Two people in two browsers on one team's server: alice shares her session from its Share panel; bob, a driver,
answers her agent's question and her card names him; carol, a watcher, follows live with nothing to press; the
header shows who has the session open."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.support.browser import Browsers, until_connected
from tests.support.people import TEAM, as_person
from tests.support.servers import Server, ServerFactory
from tests.support.team import new_session
from tests.support.urls import at
from tests.web.test_socket import SENT
from webclient.web.live.session_socket import VIEWING


def share_from_the_panel(page: Page, grantee: str, role: str) -> None:
    page.click('[data-role="share-panel"] summary')
    page.fill('[data-role="share-grantee"]', grantee)
    page.select_option('[data-role="share-role"]', role)
    page.click('[data-action="share"]')
    expect(page.locator(f'[data-role="share"][data-grantee="{grantee}"]')).to_have_attribute("data-share-role", role)


def test_a_driver_answers_a_watcher_follows_and_the_card_names_who_answered(
    start_server: ServerFactory, browsers: Browsers
) -> None:
    server: Server = start_server(**TEAM)
    session_id = new_session(server, "alice", ["admins"])
    url = at(server.url, "session", session_id=session_id)
    alice = browsers.page("alice", extra_http_headers=as_person("alice", ["admins"]))
    alice.goto(url)
    expect(alice.locator("#session")).to_have_attribute("data-agent-state", "ready")
    share_from_the_panel(alice, "bob", "drive")
    share_from_the_panel(alice, "carol", "watch")

    bob, carol = (browsers.page(name, extra_http_headers=as_person(name)) for name in ("bob", "carol"))
    bob.goto(url)
    carol.goto(url)
    expect(alice.locator('[data-role="presence"]')).to_have_text("alice (owner), bob driving, carol watching")
    expect(carol.locator("#composer")).to_have_count(0)
    expect(carol.locator('[data-role="watching-only"]')).to_be_visible()
    expect(carol.locator('[data-role="share-panel"]')).to_have_count(0)

    until_connected(alice)
    alice.fill("#prompt-input", "permission")
    alice.keyboard.press("Enter")
    expect(carol.locator('[data-role="waiting-for-driver"]')).to_be_visible()
    expect(carol.locator('[data-role="turn-state"]')).to_have_text("Waiting for an answer")  # not for her
    expect(alice.locator('[data-role="turn-state"]')).to_have_text("Waiting for you")
    expect(carol.locator("[data-option-id]")).to_have_count(0)
    sent = set(SENT.findall(carol.content())) | set(SENT.findall(carol.content().replace("&quot;", '"')))
    assert {first or second for first, second in sent} <= VIEWING  # nothing on a watcher's page changes the session
    assert {first or second for first, second in SENT.findall(alice.content())} - VIEWING  # as the owner's does
    bob.click('[data-option-id="allow-once"]')
    by = alice.locator('[data-role="permission"] [data-role="by"]')
    expect(by).to_contain_text("by bob, ")
    expect(alice.locator('[data-role="permission"] .answered')).to_contain_text("Allow once by bob")
    expect(carol.locator('[data-role="permission"] [data-role="by-name"]')).to_have_text("bob")
    expect(carol.locator('[data-role="sent-by"]')).to_contain_text("alice")

    carol.close()
    expect(alice.locator('[data-role="presence"]')).to_have_text("alice (owner), bob driving")


def test_a_drive_link_takes_the_owners_tick_that_it_runs_with_their_keys(
    start_server: ServerFactory, browsers: Browsers
) -> None:
    server: Server = start_server(**TEAM)
    session_id = new_session(server, "alice", ["admins"])
    url = at(server.url, "session", session_id=session_id)
    alice = browsers.page("alice", extra_http_headers=as_person("alice", ["admins"]))
    alice.goto(url)
    alice.click('[data-role="share-panel"] summary')
    expect(alice.locator('[data-role="drive-runs-as-owner"]')).to_be_visible()
    expect(alice.locator('[data-role="drive-runs-as-owner"]')).to_contain_text("anyone who has a drive link")
    alice.select_option('[data-role="share-kind"]', "link")
    alice.select_option('[data-role="share-role"]', "drive")
    alice.click('[data-action="share"]')
    expect(alice.locator("body")).to_contain_text("Not shared: whoever has a drive link runs this session's agent")
    alice.goto(url)
    alice.click('[data-role="share-panel"] summary')
    alice.select_option('[data-role="share-kind"]', "link")
    alice.select_option('[data-role="share-role"]', "drive")
    alice.check('[data-role="share-owner-keys"]')
    alice.click('[data-action="share"]')
    expect(alice.locator('[data-role="share"][data-kind="link"]')).to_have_attribute("data-share-role", "drive")
