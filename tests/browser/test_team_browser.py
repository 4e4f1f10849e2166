"""Issue 14's closing scenario, end to end, as two people see it in two Chromium contexts: through the real nginx
(trusted-header mode, nginx signing people in), and through the real OpenID provider (oidc mode).

The per-part browser tests check each piece in detail (test_signin, test_people, test_sharing, test_rules); this one
walks them in the order a team meets them, on one session: isolation, watch, drive, attribution, the audit log,
a person's rule, an admin's deny, and the inbox.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from tests.browser.test_sharing_browser import share_from_the_panel
from tests.support.browser import Browsers, send_prompt
from tests.support.nginx import TEAM, Proxy, behind_proxy, proxy_in_front, socket_folder, unix_upstream
from tests.support.oidc import PEOPLE, oidc_provider, sign_in_at_provider
from tests.support.servers import ServerFactory, free_port
from tests.support.urls import URLS, at, socket_at

pytestmark = pytest.mark.browser


def socket_status(proxy: Proxy, name: str, session_id: str) -> int:
    """The HTTP status the session's page socket answers ``name`` with, through the proxy (101: it opened)."""
    headers = {**proxy.signed_in(name), "Origin": proxy.url}
    try:
        with connect(socket_at(proxy.url, session_id), additional_headers=headers):
            return 101
    except InvalidStatus as refused:
        return refused.response.status_code


def test_a_team_through_the_proxy_isolation_watch_drive_record_rules_and_inbox(
    start_server: ServerFactory, browsers: Browsers
) -> None:
    port = free_port()
    with socket_folder() as path, proxy_in_front(unix_upstream(path), TEAM, port) as proxy:
        start_server(**behind_proxy(port, uds=path))  # nginx passes requests on once it listens
        alice = browsers.page("alice", http_credentials=proxy.credentials("alice"))
        bob = browsers.page("bob", http_credentials=proxy.credentials("bob"))

        # Alice (an admin) starts a session; to Bob it does not exist: page, socket, index.
        alice.goto(proxy.url + "/")
        alice.click('[data-action="new-session"]')
        expect(alice.locator("#session")).to_have_attribute("data-turn-state", "idle")
        session_id = alice.locator("#session").get_attribute("data-session-id")
        assert session_id
        session_url = alice.url
        refused = bob.goto(session_url)
        assert refused is not None and refused.status == 404, proxy.log()
        assert socket_status(proxy, "alice", session_id) == 101
        assert socket_status(proxy, "bob", session_id) == 404  # the same request as Alice's, but for Bob
        bob.goto(proxy.url + "/")
        expect(bob.locator('[data-role="signed-in"]')).to_contain_text("Signed in as bob")
        expect(bob.locator(f'[data-session-id="{session_id}"]')).to_have_count(0)

        # Shared to watch: Bob follows live, with nothing to press; the header shows them both.
        share_from_the_panel(alice, "bob", "watch")
        bob.goto(session_url)
        expect(bob.locator('[data-role="watching-only"]')).to_be_visible()
        expect(bob.locator("#composer")).to_have_count(0)
        expect(alice.locator('[data-role="presence"]')).to_have_text("alice (owner), bob watching")
        expect(bob.locator('[data-role="presence"]')).to_have_text("alice (owner), bob watching")
        send_prompt(alice, "hello bob, watch this")
        expect(bob.locator('[data-role="user-message"]').last).to_contain_text("hello bob, watch this")
        expect(bob.locator("[data-option-id]")).to_have_count(0)

        # Changed to drive: Bob's open page gets the composer (it loads again by itself); he answers the agent's
        # question, and Alice's card names him.
        share_from_the_panel(alice, "bob", "drive")
        expect(bob.locator("#composer")).to_have_count(1)
        expect(bob.locator('[data-role="watching-only"]')).to_have_count(0)
        for page in (alice, bob):  # both pages loaded again (Alice's after the form): their sockets open
            expect(page.locator("#session")).to_have_attribute("data-connection", "open")
        send_prompt(alice, "permission")
        bob.locator('[data-role="permission"]').last.locator('[data-option-id="allow-once"]').click()
        card = alice.locator('[data-role="permission"]').last
        expect(card.locator('[data-role="by"]')).to_contain_text("by bob, ")

        # The session's audit log, and its CSV, list Bob's answer.
        tab = alice.context.new_page()  # Alice's second tab: the audit log, then the rules page
        tab.goto(at(proxy.url, "session_audit", session_id=session_id))
        by_bob = tab.locator('[data-role="audit-row"][data-person="bob"]')
        expect(by_bob.filter(has_text="allow-once")).to_have_count(1)
        csv = alice.context.request.get(at(proxy.url, "session_audit", session_id=session_id, format="csv"))
        assert csv.ok
        answers = [line for line in csv.text().splitlines() if ",bob,bob," in line]
        assert answers and any("allow-once" in line for line in answers), csv.text()

        # Alice's rule (from the card's "Always in this workspace") answers the next such question by itself.
        send_prompt(alice, "ask edit src/app.py")
        alice.locator('[data-role="permission"]').last.locator('[data-action="always-workspace"]').click()
        expect(alice.locator('[data-role="answered-by-rule"]')).to_have_count(1)
        send_prompt(alice, "ask edit src/app.py")
        expect(alice.locator('[data-role="answered-by-rule"]')).to_have_count(2)
        ruled = alice.locator('[data-role="answered-by-rule"]').last
        expect(ruled).to_contain_text("Allowed by your rule: edit src/app.py")
        expect(ruled.locator('[data-role="rule-link"]')).to_have_attribute("href", URLS.for_("rules") + "#rule-1")

        # An admin's deny rule for everyone refuses a matching question, whoever asks: here Bob's prompt.
        rules = tab
        rules.goto(at(proxy.url, "rules"))
        rules.select_option('[data-role="add-rule"] select[name="decision"]', "deny")
        rules.select_option('[data-role="add-rule"] select[name="tool_kind"]', "execute")
        rules.fill('[data-role="add-rule"] input[name="command_pattern"]', "rm *")
        rules.check('[data-role="add-rule"] input[name="everyone"]')
        rules.click('[data-action="add-rule"]')
        expect(rules.locator('[data-role="everyone-rules"] [data-decision="deny"]')).to_have_count(1)
        send_prompt(bob, "ask execute rm -rf build")
        denied = alice.locator('[data-role="answered-by-rule"]')
        expect(denied).to_have_count(3)
        expect(denied.last).to_contain_text("Denied by a rule for everyone: execute `rm *` (rule 2)")
        expect(alice.locator('[data-role="agent-message"]').last).to_contain_text("answer: reject-once")

        # The inbox lists Bob (a driver) an open question of Alice's session; he answers it there.
        send_prompt(alice, "ask execute make deploy")
        inbox = bob.context.new_page()
        inbox.goto(at(proxy.url, "inbox"))
        item = inbox.locator(".inbox-item")
        expect(item).to_have_count(1)
        expect(item).to_contain_text("make deploy")
        item.locator('[data-option-id="allow-once"]').click()
        expect(inbox.locator('[data-role="inbox-count"]')).to_have_text("Nothing waits for you.")
        expect(alice.locator('[data-role="agent-message"]').last).to_contain_text("answer: allow-once")
        expect(alice.locator('[data-role="permission"]').last.locator('[data-role="by"]')).to_contain_text("by bob, ")


def test_two_people_signed_in_by_the_provider_share_by_name(
    start_server: ServerFactory, browsers: Browsers, tmp_path: Path
) -> None:
    with oidc_provider(PEOPLE, tmp_path / "provider.log") as provider:
        server = start_server(**provider.settings())
        alice, bob = browsers.page("alice"), browsers.page("bob")
        for page, sub in ((bob, "bob"), (alice, "alice")):  # Bob first: the Share panel knows him by his name
            page.goto(server.url + "/")
            page.click('[data-action="sign-in-oidc"]')
            sign_in_at_provider(page, sub)
            expect(page).to_have_url(server.url + "/")
        alice.click('[data-action="new-session"]')
        expect(alice.locator("#session")).to_have_attribute("data-turn-state", "idle")
        session_url = alice.url
        refused = bob.goto(session_url)
        assert refused is not None and refused.status == 404
        bob.goto(server.url + "/")

        alice.click('[data-role="share-panel"] summary')
        alice.fill('[data-role="share-grantee"]', "Bob Baker")
        alice.select_option('[data-role="share-role"]', "watch")
        alice.click('[data-action="share"]')
        expect(alice.locator('[data-role="share"][data-grantee="bob"]')).to_have_attribute("data-share-role", "watch")
        bob.goto(session_url)
        expect(bob.locator('[data-role="watching-only"]')).to_be_visible()
        expect(alice.locator('[data-role="presence"]')).to_have_text("Alice Archer (owner), Bob Baker watching")
        send_prompt(alice, "hello Bob")
        expect(bob.locator('[data-role="user-message"]').last).to_contain_text("hello Bob")

        # The server's audit log, linked for admins beside the people page, has both sign-ins and the share.
        alice.goto(server.url + "/")
        alice.click('[data-action="audit"]')
        sign_ins = alice.locator('[data-role="audit-row"][data-action="sign-in"]')
        expect(sign_ins).to_have_count(2)
        expect(sign_ins.and_(alice.locator('[data-person="bob"]'))).to_contain_text("Bob Baker")
        expect(alice.locator('[data-role="audit-row"][data-action="share"]')).to_contain_text("role: watch")
        bob.goto(server.url + "/")
        expect(bob.locator('[data-action="audit"]')).to_have_count(0)
