"""Two people in two Chromium contexts, signed in through a real OpenID provider (Alice an admin) or a real proxy:
sign-in, the admins' page, Revoke (the revoked browser's open page is told, its next page is the sign-in page),
sign-out; and through nginx, a session page whose web socket is proxied too."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.support.nginx import TEAM, behind_proxy, proxy_in_front, socket_folder, unix_upstream
from tests.support.oidc import PEOPLE, Provider, oidc_provider, sign_in_at_provider
from tests.support.servers import Server, ServerFactory, free_port
from tests.support.urls import URLS


@pytest.fixture
def provider(tmp_path: Path) -> Iterator[Provider]:
    with oidc_provider(PEOPLE, tmp_path / "provider.log") as running:
        yield running


@pytest.fixture
def two_pages(browser: Browser) -> Iterator[tuple[Page, Page]]:
    contexts = [browser.new_context(viewport={"width": 1100, "height": 900}) for _ in range(2)]
    pages = [context.new_page() for context in contexts]
    errors: list[str] = []
    for page in pages:
        page.set_default_timeout(15_000)
        page.on("pageerror", lambda error: errors.append(str(error)))
    yield pages[0], pages[1]
    for context in contexts:
        context.close()
    assert not errors, f"JavaScript errors in the pages: {errors}"


def sign_in(page: Page, server: Server, sub: str, path: str = "/") -> None:
    response = page.goto(server.url + path)
    assert response is not None and response.status == 401
    page.click('[data-action="sign-in-oidc"]')
    sign_in_at_provider(page, sub)
    expect(page).to_have_url(server.url + path)


def test_two_people_sign_in_through_the_provider_and_an_admin_revokes_one(
    start_server: ServerFactory, provider: Provider, two_pages: tuple[Page, Page]
) -> None:
    server = start_server(**provider.settings())
    alice, bob = two_pages
    sign_in(alice, server, "alice")
    expect(alice.locator('[data-role="signed-in"]')).to_contain_text("Signed in as Alice Archer (admin)")
    sign_in(bob, server, "bob")
    expect(bob.locator('[data-role="signed-in"]')).to_contain_text("Signed in as Bob Baker")
    expect(bob.locator('[data-action="people"]')).to_have_count(0)  # not an admin
    bob.click('[data-action="new-session"]')
    expect(bob.locator("#session")).to_have_attribute("data-turn-state", "idle")
    session_url = bob.url

    alice.click('[data-action="people"]')
    expect(alice.locator('[data-person-id="bob"]')).to_contain_text("Bob Baker")
    expect(alice.locator('[data-person-id="alice"]')).to_contain_text("(this browser)")
    alice.locator('[data-person-id="bob"] [data-action="revoke-signin"]').click()
    expect(alice.locator('[data-person-id="bob"] [data-role="no-signins"]')).to_be_visible()

    # Bob's open page hears at once that he is signed out; his next page is the sign-in page.
    expect(bob.locator("#session")).to_have_attribute("data-connection", "signed-out")
    response = bob.goto(session_url)
    assert response is not None and response.status == 401
    expect(bob.locator('[data-action="sign-in-oidc"]')).to_be_visible()

    # He signs in again, back where he was going; then signs himself out.
    bob.click('[data-action="sign-in-oidc"]')
    sign_in_at_provider(bob, "bob")
    expect(bob).to_have_url(session_url)
    bob.goto(server.url + "/")
    bob.click('[data-action="sign-out"]')
    expect(bob).to_have_url(server.url + URLS.sign_in())
    response = bob.goto(server.url + "/")
    assert response is not None and response.status == 401
    alice.reload()
    expect(alice.locator('[data-person-id="bob"] [data-role="no-signins"]')).to_be_visible()
    expect(alice.locator('[data-person-id="alice"] [data-action="revoke-signin"]')).to_have_count(1)


def test_two_people_behind_real_nginx_each_named_and_the_session_socket_proxied(
    start_server: ServerFactory, browser: Browser
) -> None:
    port = free_port()
    with socket_folder() as path, proxy_in_front(unix_upstream(path), TEAM, port) as proxy:
        server = start_server(**behind_proxy(port, uds=path))
        contexts: list[Any] = []
        try:
            for name in ("alice", "bob"):
                context = browser.new_context(http_credentials=proxy.credentials(name))  # type: ignore[arg-type]
                contexts.append(context)
            alice, bob = (context.new_page() for context in contexts)
            alice.goto(proxy.url + "/")
            expect(alice.locator('[data-role="signed-in"]')).to_contain_text("Signed in as alice (admin)")
            bob.goto(proxy.url + "/")
            expect(bob.locator('[data-role="signed-in"]')).to_contain_text("Signed in as bob")
            expect(bob.locator('[data-role="signed-in"]')).not_to_contain_text("admin")
            alice.click('[data-action="new-session"]')
            expect(alice.locator("#session")).to_have_attribute("data-turn-state", "idle")
            expect(alice.locator("#session")).to_have_attribute("data-connection", "open")  # its scripts run
            alice.fill('[data-role="prompt"] textarea[name="prompt"]', "hello through the proxy")
            alice.keyboard.press("Enter")
            server.wait_received(lambda m: m.get("method") == "session/prompt")
        finally:
            for context in contexts:
                context.close()
