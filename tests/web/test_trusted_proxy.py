"""WEBCLIENT_AUTH=trusted-header behind a real proxy (Debian's nginx, its own process): nginx signs people in and
names them; the server believes its headers from nginx's address only, pages and web sockets alike."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from tests.support.nginx import PROXY_ADDRESS, TEAM, Proxy, behind_proxy, proxy_in_front
from tests.support.people import as_person
from tests.support.servers import Server, ServerFactory, free_port

HTML = {"Accept": "text/html,application/xhtml+xml"}


@pytest.fixture
def team(start_server: ServerFactory) -> Iterator[tuple[Server, Proxy]]:
    port = free_port()
    server = start_server(**behind_proxy(port))
    with proxy_in_front(server.url, TEAM, port) as proxy:
        yield server, proxy


def test_the_proxy_names_each_person_and_a_header_sent_through_it_cannot_change_who(
    team: tuple[Server, Proxy],
) -> None:
    server, proxy = team
    assert httpx.get(proxy.url + "/", headers=HTML).status_code == 401  # nginx's own sign-in first
    alice = httpx.get(proxy.url + "/", auth=proxy.auth("alice"), headers=HTML)
    assert alice.status_code == 200, proxy.log()
    assert "Signed in as alice (admin)" in alice.text
    # Bob writes the headers himself: nginx replaces them with what it knows of him.
    spoofed = {**as_person("alice", ["admins"]), **HTML}
    bob = httpx.get(proxy.url + "/", auth=proxy.auth("bob"), headers=spoofed)
    assert bob.status_code == 200
    assert "Signed in as bob<" in bob.text and "alice" not in bob.text
    assert httpx.get(proxy.url + "/admin/people", auth=proxy.auth("bob"), headers=spoofed).status_code == 404
    people = httpx.get(proxy.url + "/admin/people", auth=proxy.auth("alice"), headers=HTML)
    assert 'data-person-id="bob"' in people.text and "bob@example.com" in people.text


def test_the_header_sent_straight_to_the_server_is_ignored(team: tuple[Server, Proxy]) -> None:
    server, _ = team
    for headers in (as_person("alice", ["admins"]), {}):
        straight = httpx.get(server.url + "/", headers={**headers, **HTML})
        assert straight.status_code == 403 and "portal" in straight.text
        assert "alice" not in straight.text
    # Nor does naming the proxy in X-Forwarded-For (which uvicorn believes from loopback unless told not to).
    forged = {**as_person("alice", ["admins"]), "X-Forwarded-For": PROXY_ADDRESS, **HTML}
    assert httpx.get(server.url + "/", headers=forged).status_code == 403
    url = server.url.replace("http", "ws") + "/sessions/0/ws"
    with pytest.raises(InvalidStatus) as refused:
        with connect(url, additional_headers={**as_person("alice"), "Origin": server.url}, open_timeout=10):
            pass
    assert refused.value.response.status_code == 403


def test_pages_and_the_session_socket_work_through_the_proxy(team: tuple[Server, Proxy]) -> None:
    server, proxy = team
    made = httpx.post(proxy.url + "/sessions", auth=proxy.auth("alice"), headers={"Origin": proxy.url})
    assert made.status_code == 303, made.text
    session_path = made.headers["location"]
    server.wait_received(lambda m: m.get("method") == "session/new")
    page = httpx.get(proxy.url + session_path, auth=proxy.auth("alice"), headers=HTML)
    assert page.status_code == 200
    url = proxy.url.replace("http", "ws") + session_path + "/ws"
    basic = httpx.BasicAuth(*proxy.auth("alice"))
    authorization = next(basic.auth_flow(httpx.Request("GET", proxy.url))).headers["Authorization"]
    headers = {"Authorization": authorization, "Origin": proxy.url}
    with connect(url, additional_headers=headers, open_timeout=10) as socket:
        assert socket.recv(timeout=10)  # the page's first update came through nginx
