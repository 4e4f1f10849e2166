"""WEBCLIENT_AUTH=oidc through a real OpenID provider (oidc-provider-mock, its own process, PKCE required), driven
by a script as a browser would go: the sign-in page, the provider, the callback, the people kept."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from tests.support.oidc import PEOPLE, Provider, oidc_provider, provider_answer
from tests.support.servers import Server, ServerFactory, stop_server
from tests.support.urls import at
from webclient.people.person import LOCAL
from webclient.render.urls import OIDC_CALLBACK_PATH, OIDC_START_PATH

HTML = {"Accept": "text/html,application/xhtml+xml"}


@pytest.fixture(scope="module")
def provider(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Provider]:
    """One provider for the module's tests (a process of its own, a second of a core to start): each sign-in is a
    code of its own, and nothing a test does changes the people it offers."""
    with oidc_provider(PEOPLE, tmp_path_factory.mktemp("provider") / "provider.log") as running:
        yield running


def start(server: Server, next_path: str = "/") -> tuple[str, str]:
    """``/signin/oidc``: where the server sends the browser, and the cookie that binds the sign-in to it."""
    response = httpx.get(server.url + OIDC_START_PATH, params={"next": next_path}, follow_redirects=False)
    assert response.status_code == 303, response.text
    return response.headers["location"], response.headers["set-cookie"].split(";", 1)[0]


def sign_in(server: Server, sub: str, next_path: str = "/") -> tuple[httpx.Response, str]:
    """The whole round trip as ``sub``: the callback's answer and the sign-in cookie it set (``name=value``)."""
    authorize, binding = start(server, next_path)
    back = provider_answer(authorize, sub)
    answer = httpx.get(back, headers={"Cookie": binding, **HTML}, follow_redirects=False)
    cookie = answer.headers.get("set-cookie", "").split(";", 1)[0]
    return answer, cookie


def test_a_person_signs_in_through_the_provider_with_pkce_and_lands_where_they_were_going(
    start_server: ServerFactory, provider: Provider
) -> None:
    server = start_server(**provider.settings())
    refused = httpx.get(at(server.url, "new_session", x="1"), headers=HTML)
    assert refused.status_code == 401 and 'data-action="sign-in-oidc"' in refused.text
    assert 'name="token"' not in refused.text  # no token in this mode
    authorize, _ = start(server, "/?page=1")
    query = parse_qs(urlsplit(authorize).query)
    assert authorize.startswith(provider.issuer + "/")
    assert query["code_challenge_method"] == ["S256"] and len(query["code_challenge"][0]) == 43
    assert query["redirect_uri"] == [server.url + OIDC_CALLBACK_PATH]
    answer, cookie = sign_in(server, "alice", "/?page=1")
    assert answer.status_code == 303 and answer.headers["location"] == "/?page=1"
    index = httpx.get(server.url + "/", headers={"Cookie": cookie, **HTML})
    assert index.status_code == 200
    assert "Signed in as Alice Archer (admin)" in index.text
    bob_answer, bob = sign_in(server, "bob")
    bob_index = httpx.get(server.url + "/", headers={"Cookie": bob, **HTML}).text
    assert "Signed in as Bob Baker<" in bob_index and 'data-action="people"' not in bob_index
    people = httpx.get(at(server.url, "people"), headers={"Cookie": cookie, **HTML})
    assert 'data-person-id="alice"' in people.text and 'data-person-id="bob"' in people.text
    assert "groups: admins, dev" in people.text and "bob@example.com" in people.text
    assert len(re.findall(r'data-action="revoke-signin"', people.text)) == 2
    assert httpx.get(at(server.url, "people"), headers={"Cookie": bob, **HTML}).status_code == 404
    assert httpx.get(server.url + "/", headers={"Authorization": f"token {server.token}"}).status_code == 401


def test_a_callback_opened_in_another_browser_or_twice_signs_nobody_in(
    start_server: ServerFactory, provider: Provider
) -> None:
    server = start_server(**provider.settings())
    authorize, binding = start(server)
    back = provider_answer(authorize, "alice")
    elsewhere = httpx.get(back, headers=HTML, follow_redirects=False)  # a link someone was sent: no binding cookie
    assert elsewhere.status_code == 401 and "another browser" in elsewhere.text
    assert "set-cookie" not in elsewhere.headers
    again = httpx.get(back, headers={"Cookie": binding, **HTML}, follow_redirects=False)
    assert again.status_code == 401 and "sign in again" in again.text  # the sign-in it named is spent
    forged = httpx.get(server.url + OIDC_CALLBACK_PATH, params={"state": "x", "code": "y"}, headers={"Cookie": binding})
    assert forged.status_code == 401


def test_a_refusal_at_the_provider_is_said_on_the_sign_in_page(start_server: ServerFactory, provider: Provider) -> None:
    server = start_server(**provider.settings())
    authorize, binding = start(server)
    denied = httpx.post(authorize, data={"action": "deny"}, follow_redirects=False)
    assert denied.status_code == 302
    answer = httpx.get(denied.headers["location"], headers={"Cookie": binding, **HTML})
    assert answer.status_code == 401 and "refused" in answer.text


def test_no_one_signs_in_as_token_modes_person(start_server: ServerFactory, provider: Provider) -> None:
    """A provider's subject that is the id token mode's person has (whose sessions are the operator's) is refused."""
    server = start_server(**provider.settings())
    answer, cookie = sign_in(server, LOCAL.id)
    assert answer.status_code == 401 and "This account&#39;s id is one this server keeps." in answer.text
    assert cookie == "" or httpx.get(server.url + "/", headers={"Cookie": cookie, **HTML}).status_code == 401


@pytest.mark.process  # two servers on one data folder
def test_through_a_proxy_the_provider_sends_the_browser_back_to_the_proxy_and_one_sign_in_serves_two_instances(
    start_server: ServerFactory, provider: Provider, tmp_path: Path
) -> None:
    """Two instances of one service (one store) behind a proxy at ``http://127.0.0.1:8080`` (this test, sending what
    nginx sends: the browser's ``Host``): the callback is the proxy's URL, and the cookie it sets works on both."""
    proxy = "http://127.0.0.1:8080"
    shared = {**provider.settings(), "WEBCLIENT_TRUSTED_PROXIES": "127.0.0.1"}
    shared["WEBCLIENT_DATA_DIR"] = str(tmp_path / "data")
    first, second = start_server(**shared), start_server(**shared)
    through = {"Host": "127.0.0.1:8080", "X-Forwarded-For": "127.0.0.9", **HTML}
    started = httpx.get(first.url + OIDC_START_PATH, headers=through, follow_redirects=False)
    assert started.status_code == 303, started.text
    query = parse_qs(urlsplit(started.headers["location"]).query)
    assert query["redirect_uri"] == [proxy + OIDC_CALLBACK_PATH]
    binding = started.headers["set-cookie"].split(";", 1)[0]
    back = provider_answer(started.headers["location"], "alice").replace(proxy, first.url)
    answer = httpx.get(back, headers={**through, "Cookie": binding}, follow_redirects=False)
    assert answer.status_code == 303, answer.text
    cookie = answer.headers["set-cookie"].split(";", 1)[0]
    assert cookie.startswith("webclient-8080=")
    for instance in (first, second):
        index = httpx.get(instance.url + "/", headers={**through, "Cookie": cookie})
        assert index.status_code == 200 and "Signed in as Alice Archer" in index.text


@pytest.mark.process  # three servers on one data folder, one of them stopped midway
def test_a_sign_in_under_way_is_finished_by_another_instance_or_after_a_restart_and_only_once(
    start_server: ServerFactory, provider: Provider, tmp_path: Path
) -> None:
    """Sign-ins under way are kept in the store, not in the process that started them: the provider may send the
    browser back through the proxy to another instance, or to this one after a restart."""
    proxy = "http://127.0.0.1:8080"
    shared = {**provider.settings(), "WEBCLIENT_TRUSTED_PROXIES": "127.0.0.1"}
    shared["WEBCLIENT_DATA_DIR"] = str(tmp_path / "data")
    through = {"Host": "127.0.0.1:8080", "X-Forwarded-For": "127.0.0.9", **HTML}

    def begin(server: Server) -> tuple[str, str]:
        started = httpx.get(server.url + OIDC_START_PATH, headers=through, follow_redirects=False)
        assert started.status_code == 303, started.text
        return provider_answer(started.headers["location"], "alice"), started.headers["set-cookie"].split(";", 1)[0]

    def back_on(server: Server, back: str, binding: str) -> httpx.Response:
        url = back.replace(proxy, server.url)
        return httpx.get(url, headers={**through, "Cookie": binding}, follow_redirects=False)

    first, second = start_server(process=True, **shared), start_server(process=True, **shared)
    back, binding = begin(first)
    assert back_on(second, back, binding).status_code == 303
    again = back_on(first, back, binding)
    assert again.status_code == 401 and "sign in again" in again.text  # finished once, wherever it is asked again
    back, binding = begin(second)
    stop_server(second)
    restarted = start_server(process=True, **shared)
    answer = back_on(restarted, back, binding)
    assert answer.status_code == 303, answer.text
    cookie = answer.headers["set-cookie"].split(";", 1)[0]
    assert "Signed in as Alice Archer" in httpx.get(first.url + "/", headers={**through, "Cookie": cookie}).text
