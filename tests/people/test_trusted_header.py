"""Trusted-header sign-in, straight from loopback (the test is the proxy): believed only from a trusted address."""

from __future__ import annotations

from tests.support.people import TEAM, as_person
from tests.support.servers import ServerFactory
from tests.support.urls import URLS


def test_the_proxy_names_the_person_and_the_page_says_who(start_server: ServerFactory) -> None:
    server = start_server(**TEAM)
    page = server.http().get("/", headers=as_person("alice", ["admins", "dev"]))
    assert page.status_code == 200
    assert "Signed in as alice (admin)" in page.text
    bob = server.http().get("/", headers=as_person("bob"))
    assert "Signed in as bob<" in bob.text


def test_without_the_header_nobody_is_signed_in_and_the_token_does_not_help(start_server: ServerFactory) -> None:
    server = start_server(**TEAM)
    refused = server.http().get("/")  # the token in a header, which only token mode believes
    assert refused.status_code == 403
    assert "portal" in refused.text


def test_the_header_from_an_address_that_is_not_a_trusted_proxy_is_ignored(start_server: ServerFactory) -> None:
    server = start_server(**{**TEAM, "WEBCLIENT_TRUSTED_PROXIES": "10.9.9.9"})
    refused = server.http().get("/", headers=as_person("mallory", ["admins"]))
    assert refused.status_code == 403
    assert "mallory" not in refused.text


def test_a_state_changing_request_from_another_site_is_refused_even_with_the_header(
    start_server: ServerFactory,
) -> None:
    server = start_server(**TEAM)
    headers = {**as_person("alice"), "Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}
    refused = server.http().post(URLS.for_("new_session"), headers=headers, data={"agent": ""})
    assert refused.status_code == 403
