"""Signed-in sessions kept on the server (token mode here; OpenID in test_oidc_signin.py): a random cookie per
sign-in, sign-out, an admin's Revoke (its web sockets closed too), a restart, and the people page."""

from __future__ import annotations

import re
import time
from pathlib import Path

import httpx
import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from tests.support.own_server import launch, stop
from tests.support.people import TEAM, as_person
from tests.support.probes import new_session, port_of
from tests.support.servers import SCRIPTED_AGENT, Server, ServerFactory
from tests.support.urls import URLS, at, socket_at

HTML = {"Accept": "text/html,application/xhtml+xml"}


def sign_in(server: Server, user_agent: str = "test browser") -> str:
    """Open the sign-in URL as a browser would: ``name=value`` of the cookie it gets."""
    response = httpx.get(server.sign_in_url("/"), headers={"User-Agent": user_agent}, follow_redirects=False)
    assert response.status_code == 303, response.text
    return response.headers["set-cookie"].split(";", 1)[0]


def page_status(server: Server, cookie: str, path: str = "/") -> httpx.Response:
    return httpx.get(server.url + path, headers={**HTML, "Cookie": cookie})


def post(server: Server, cookie: str, path: str) -> httpx.Response:
    return httpx.post(server.url + path, headers={"Cookie": cookie, "Origin": server.url}, follow_redirects=False)


def signin_ids(html: str) -> list[str]:
    return re.findall(r'action="/admin/signins/([0-9a-f]{64})/revoke"', html)


def test_each_sign_in_is_its_own_random_cookie_and_sign_out_ends_only_that_one(start_server: ServerFactory) -> None:
    server = start_server()
    first, second = sign_in(server), sign_in(server)
    assert first != second  # not derived from the token: one per sign-in
    assert server.token not in first
    for cookie in (first, second):
        index = page_status(server, cookie)
        assert index.status_code == 200 and 'data-action="sign-out"' in index.text
        assert "Signed in as" not in index.text  # token mode's one person is never named
    signed_out = post(server, first, URLS.for_("sign_out"))
    assert signed_out.status_code == 303 and signed_out.headers["location"] == URLS.sign_in()
    assert "Max-Age=0" in signed_out.headers["set-cookie"] or "expires=" in signed_out.headers["set-cookie"].lower()
    after = page_status(server, first)
    assert after.status_code == 401 and f'action="{URLS.sign_in()}"' in after.text  # the sign-in page again
    assert page_status(server, second).status_code == 200  # the other browser stays signed in
    assert server.http().get("/").status_code == 200  # and a script's token is not a sign-in to end


def test_the_admin_page_lists_the_sign_ins_and_revoke_ends_one_and_closes_its_socket(
    start_server: ServerFactory,
) -> None:
    server = start_server()
    session_id = new_session(server)
    mine, lost = sign_in(server, "my laptop"), sign_in(server, "the lost phone")
    people = page_status(server, mine, URLS.for_("people"))
    assert people.status_code == 200
    assert "my laptop" in people.text and "the lost phone" in people.text
    ids = signin_ids(people.text)
    assert len(ids) == 2
    url = socket_at(f"http://127.0.0.1:{port_of(server)}", session_id)
    with connect(url, additional_headers={"Cookie": lost, "Origin": server.url}, open_timeout=10) as socket:
        socket.recv(timeout=10)  # the page's first update: the socket is open and signed in
        # The phone is the row the page marks as not this browser's: revoke it.
        rows = people.text.split("<tr data-signin=")[1:]
        phone = next(i for i, row in zip(ids, rows, strict=True) if "the lost phone" in row)
        revoked = post(server, mine, URLS.for_("revoke_signin", signin_id=phone))
        assert revoked.status_code == 303 and revoked.headers["location"] == URLS.for_("people")
        with pytest.raises(ConnectionClosed) as closed:
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                socket.recv(timeout=10)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008
    after = page_status(server, lost, URLS.for_("session", session_id=session_id))
    assert after.status_code == 401 and f'action="{URLS.sign_in()}"' in after.text
    assert page_status(server, mine).status_code == 200
    assert signin_ids(page_status(server, mine, URLS.for_("people")).text) == [i for i in ids if i != phone]


def test_a_sign_in_outlives_a_restart_but_not_a_new_token(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    data = {"WEBCLIENT_DATA_DIR": str(tmp_path / "data")}

    def carried(cookie: str, server: Server) -> str:
        """The cookie is named by port: carry it over to the new server's."""
        return f"webclient-{port_of(server)}=" + cookie.split("=", 1)[1]

    server = launch(workspace, SCRIPTED_AGENT, token="the-token", **data)
    try:
        cookie = sign_in(server)
    finally:
        stop(server)
    server = launch(workspace, SCRIPTED_AGENT, token="the-token", **data)
    try:
        assert page_status(server, carried(cookie, server)).status_code == 200
        assert page_status(server, carried(cookie, server)[:-2] + "xx").status_code == 401
    finally:
        stop(server)
    # A new token (the old one leaked, say) ends every sign-in made with the old one.
    server = launch(workspace, SCRIPTED_AGENT, token="a-new-token", **data)
    try:
        assert page_status(server, carried(cookie, server)).status_code == 401
        fresh = sign_in(server)
        assert len(signin_ids(page_status(server, fresh, URLS.for_("people")).text)) == 1
    finally:
        stop(server)


def test_the_people_page_is_for_admins_and_the_proxys_people_are_kept(start_server: ServerFactory) -> None:
    server = start_server(**TEAM)
    alice = {**as_person("alice", ["admins", "dev"]), **HTML}
    bob = {**as_person("bob", ["dev"]), **HTML}
    index = httpx.get(server.url + "/", headers=bob)  # bob is seen
    assert index.status_code == 200
    assert 'data-action="sign-out"' not in index.text  # the proxy signs people in and out
    assert 'data-action="people"' not in index.text
    assert httpx.get(at(server.url, "people"), headers=bob).status_code == 404  # not his
    people = httpx.get(at(server.url, "people"), headers=alice)
    assert people.status_code == 200
    assert 'data-person-id="alice"' in people.text and 'data-person-id="bob"' in people.text
    assert "bob@example.com" in people.text and "groups: dev" in people.text
    assert 'data-action="people"' in httpx.get(server.url + "/", headers=alice).text


def test_each_person_has_their_own_page_token(start_server: ServerFactory) -> None:
    """For a browser that says neither Origin nor Sec-Fetch-Site, the page's token is the only proof a post comes
    from our page: Alice's cannot pass for Bob's."""
    server = start_server(**TEAM)

    def page_token(name: str) -> str:
        found = re.search(
            r'name="csrf-token" content="([0-9a-f]+)"', httpx.get(server.url, headers=as_person(name)).text
        )
        assert found is not None
        return found[1]

    alice, bob = page_token("alice"), page_token("bob")
    assert alice != bob
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    with_alices = httpx.post(
        at(server.url, "new_session"), content=f"csrf={alice}", headers={**as_person("bob"), **form}
    )
    assert with_alices.status_code == 403
    with_his = httpx.post(at(server.url, "new_session"), content=f"csrf={bob}", headers={**as_person("bob"), **form})
    assert with_his.status_code == 303
