"""Sharing by e-mail names only whoever's provider verified that address: Mallory, whose provider let her type
Bob's address without checking it (no ``email_verified``, or ``false``), or who chose it as her name, gets none of
the sessions shared with Bob's address. Through a real OpenID provider (oidc-provider-mock) choosing the claims."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.support.oidc import PEOPLE, Provider, oidc_provider
from tests.support.servers import Server, ServerFactory
from tests.support.urls import URLS
from tests.web.test_oidc_signin import HTML, sign_in

IMPOSTORS = (
    {"sub": "mallory", "name": "Mallory", "email": "bob@example.com"},  # the provider says nothing of checking it
    {"sub": "trudy", "name": "Trudy", "email": "bob@example.com", "email_verified": False},
    {"sub": "eve", "name": "bob@example.com"},  # an address as her name
)


@pytest.fixture(scope="module")
def provider(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Provider]:
    """One provider for the module's tests (a process of its own, a second of a core to start): each sign-in is a
    code of its own, and nothing a test does changes the people it offers."""
    with oidc_provider([*PEOPLE, *IMPOSTORS], tmp_path_factory.mktemp("provider") / "provider.log") as running:
        yield running


def signed_in(server: Server, sub: str) -> httpx.Client:
    answer, cookie = sign_in(server, sub)
    assert answer.status_code == 303, answer.text[:300]
    client = httpx.Client(base_url=server.url, headers={"Cookie": cookie, "Origin": server.url, **HTML})
    server.clients.append(client)
    return client


@pytest.mark.parametrize("impostor", [claims["sub"] for claims in IMPOSTORS])
def test_sharing_by_email_names_only_a_verified_address(
    start_server: ServerFactory, provider: Provider, impostor: str
) -> None:
    server = start_server(**provider.settings())
    alice, them = signed_in(server, "alice"), signed_in(server, impostor)
    created = alice.post(URLS.for_("new_session"))
    assert created.status_code == 303
    session = created.headers["location"]

    def share_with_bobs_address() -> None:
        form = {"kind": "person", "grantee": "bob@example.com", "role": "drive"}
        assert alice.post(session + "/shares", data=form).status_code == 303

    share_with_bobs_address()
    assert them.get(session).status_code == 404  # as if it did not exist
    if impostor != "eve":
        assert "bob@example.com" not in alice.get(URLS.for_("people")).text  # an address nobody verified is not kept
    bob = signed_in(server, "bob")
    share_with_bobs_address()  # now that Bob's verified address is known, it names him
    assert bob.get(session).status_code == 200
    assert them.get(session).status_code == 404
