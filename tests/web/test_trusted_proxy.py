"""WEBCLIENT_AUTH=trusted-header behind a real proxy (Debian's nginx, its own process): nginx signs people in and
names them; the server believes its headers from nginx alone, pages and web sockets alike, and nginx proves it is
nginx: it connects on the server's unix socket (the recipe of docs/deployment.md), or sends the shared secret.

Issue 22: any program on the machine may connect from the proxy's own address (``127.0.0.2``); one did and named Bob,
then an admin. Here that program (`tests.support.local_attacker`, as ``nobody`` when the tests run as root) gets
nothing."""

from __future__ import annotations

import grp
import os
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from tests.support.local_attacker import AS_NOBODY, attack
from tests.support.nginx import (
    PROXY_ADDRESS,
    SECRET_HEADER,
    TEAM,
    Proxy,
    behind_proxy,
    proxy_in_front,
    socket_folder,
    unix_upstream,
)
from tests.support.people import PROXY_SECRET, SECRET_FILE, naming
from tests.support.servers import ROOT, Server, ServerFactory, free_port, server_command
from tests.support.urls import URLS, at, socket_at

HTML = {"Accept": "text/html,application/xhtml+xml"}
GROUP = "www-data"
"""The socket's group (the proxy's user's, as Debian's nginx has it)."""


@pytest.fixture
def on_socket(start_server: ServerFactory) -> Iterator[tuple[Server, Proxy]]:
    """The recipe: the server on a unix socket of mode 0660 and the proxy's group, nginx in front of it."""
    port = free_port()
    with socket_folder() as path:
        server = start_server(**behind_proxy(port, uds=path), WEBCLIENT_UDS_GROUP=GROUP)
        with proxy_in_front(unix_upstream(path), TEAM, port) as proxy:
            yield server, proxy


@pytest.fixture
def with_secret(start_server: ServerFactory) -> Iterator[tuple[Server, Proxy]]:
    """The alternative: the server on a port, nginx connecting from ``127.0.0.2`` and sending the secret."""
    port = free_port()
    server = start_server(**behind_proxy(port, secret_file=SECRET_FILE))
    with proxy_in_front(server.url, TEAM, port, secret=PROXY_SECRET) as proxy:
        yield server, proxy


@pytest.mark.process
def test_the_proxy_names_each_person_and_a_header_sent_through_it_cannot_change_who(
    on_socket: tuple[Server, Proxy],
) -> None:
    server, proxy = on_socket
    assert httpx.get(proxy.url + "/", headers=HTML).status_code == 401  # nginx's own sign-in first
    alice = httpx.get(proxy.url + "/", auth=proxy.auth("alice"), headers=HTML)
    assert alice.status_code == 200, proxy.log()
    assert "Signed in as alice (admin)" in alice.text
    # Bob writes the headers himself: nginx replaces them with what it knows of him.
    spoofed = {**naming("alice", ["admins"]), **HTML}
    bob = httpx.get(proxy.url + "/", auth=proxy.auth("bob"), headers=spoofed)
    assert bob.status_code == 200
    assert "Signed in as bob<" in bob.text and "alice" not in bob.text
    assert httpx.get(at(proxy.url, "people"), auth=proxy.auth("bob"), headers=spoofed).status_code == 404
    people = httpx.get(at(proxy.url, "people"), auth=proxy.auth("alice"), headers=HTML)
    assert 'data-person-id="bob"' in people.text and "bob@example.com" in people.text


@pytest.mark.process
def test_pages_and_the_session_socket_work_through_the_proxy_on_the_unix_socket(
    on_socket: tuple[Server, Proxy],
) -> None:
    server, proxy = on_socket
    made = httpx.post(at(proxy.url, "new_session"), auth=proxy.auth("alice"), headers={"Origin": proxy.url})
    assert made.status_code == 303, made.text
    session_path = made.headers["location"]
    server.wait_received(lambda m: m.get("method") == "session/new")
    page = httpx.get(proxy.url + session_path, auth=proxy.auth("alice"), headers=HTML)
    assert page.status_code == 200
    url = socket_at(proxy.url, session_path)
    headers = {**proxy.signed_in("alice"), "Origin": proxy.url}
    with connect(url, additional_headers=headers, open_timeout=10) as socket:
        assert socket.recv(timeout=10)  # the page's first update came through nginx
    # A page of another origin (another program's on localhost) does not get the socket.
    with pytest.raises(InvalidStatus) as refused:
        other = {**proxy.signed_in("alice"), "Origin": "http://127.0.0.1:3000"}
        with connect(url, additional_headers=other, open_timeout=10):
            pass
    assert refused.value.response.status_code == 403


@pytest.mark.process
def test_only_the_socket_s_owner_and_group_can_connect(on_socket: tuple[Server, Proxy]) -> None:
    server, _ = on_socket
    assert server.uds is not None
    made = server.uds.stat()
    assert stat.S_ISSOCK(made.st_mode) and stat.S_IMODE(made.st_mode) == 0o660
    assert made.st_gid == grp.getgrnam(GROUP).gr_gid
    if not AS_NOBODY:
        pytest.skip("another user's attempt needs the tests to run as root (as in CI)")
    for headers in (naming("bob"), naming("mallory", ["admins"])):
        outcome = attack(server.uds, "/", headers)
        assert outcome.error == "PermissionError" and outcome.answer == "", outcome
    # Nor is there a port to try from the proxy's address: the server listens on its socket only.
    port = int(server.url.rsplit(":", 1)[1])
    assert attack(("127.0.0.1", port), "/", naming("bob"), source=PROXY_ADDRESS).error == "ConnectionRefusedError"


def test_a_program_on_the_proxys_address_without_the_secret_gets_nothing(
    with_secret: tuple[Server, Proxy],
) -> None:
    server, proxy = with_secret
    alice = httpx.get(proxy.url + "/", auth=proxy.auth("alice"), headers=HTML)
    assert alice.status_code == 200 and "Signed in as alice (admin)" in alice.text, proxy.log()
    made = httpx.post(at(proxy.url, "new_session"), auth=proxy.auth("bob"), headers={"Origin": proxy.url})
    assert made.status_code == 303, made.text
    port = int(server.url.rsplit(":", 1)[1])
    for headers in (naming("bob"), naming("mallory", ["admins"]), {**naming("bob"), SECRET_HEADER: "guessed"}):
        for path in ("/", URLS.for_("people"), made.headers["location"]):
            outcome = attack(("127.0.0.1", port), path, {**headers, **HTML}, source=PROXY_ADDRESS)
            assert outcome.status == 403, outcome
            assert "Signed in" not in outcome.answer and "bob@example.com" not in outcome.answer
    url = socket_at(server.url, made.headers["location"])
    transport = httpx.HTTPTransport(local_address=PROXY_ADDRESS)
    with httpx.Client(transport=transport) as from_proxy_address:  # the same, with a wrong secret, as httpx sends it
        wrong = {**naming("bob"), SECRET_HEADER: PROXY_SECRET + "x", **HTML}
        assert from_proxy_address.get(server.url + "/", headers=wrong).status_code == 403
    with pytest.raises(InvalidStatus) as refused:
        with connect(url, additional_headers={**naming("bob"), "Origin": server.url}, open_timeout=10):
            pass
    assert refused.value.response.status_code == 403


def test_a_proxy_that_sends_the_wrong_secret_is_not_believed(start_server: ServerFactory) -> None:
    port = free_port()
    server = start_server(**behind_proxy(port, secret_file=SECRET_FILE))
    with proxy_in_front(server.url, TEAM, port, secret="not-" + PROXY_SECRET) as proxy:
        refused = httpx.get(proxy.url + "/", auth=proxy.auth("alice"), headers=HTML)
        assert refused.status_code == 403 and "alice" not in refused.text


@pytest.mark.process
def test_on_the_socket_with_a_secret_both_are_needed(start_server: ServerFactory) -> None:
    with socket_folder() as path:
        server = start_server(**behind_proxy(free_port(), uds=path, secret_file=SECRET_FILE))
        with server.http() as on_the_socket:  # the server's own user: it may connect
            assert on_the_socket.get("/", headers={**naming("bob"), **HTML}).status_code == 403
            named = on_the_socket.get("/", headers={**naming("bob"), SECRET_HEADER: PROXY_SECRET, **HTML})
            assert named.status_code == 200 and "Signed in as bob<" in named.text
            assert PROXY_SECRET not in named.text


def refused_at_start(tmp_path: Path, env: dict[str, str]) -> str:
    """What ``python -m webclient`` with ``env`` says on stderr as it refuses to start."""
    full = {**os.environ, "WEBCLIENT_DATA_DIR": str(tmp_path / "data"), **env}
    command = server_command("--port", str(free_port()))
    ended = subprocess.run(command, cwd=ROOT, env=full, capture_output=True, timeout=60)
    said = ended.stderr.decode()
    assert ended.returncode != 0, ended.stdout
    assert said.count("\n") == 1 and "Traceback" not in said, said  # one line
    return said


@pytest.mark.process
@pytest.mark.parametrize("proxies", ["127.0.0.2", "10.1.2.3,0.0.0.0/0", "::1", "::/0"])
def test_trusting_an_address_on_this_machine_alone_stops_the_start(tmp_path: Path, proxies: str) -> None:
    said = refused_at_start(tmp_path, {"WEBCLIENT_AUTH": "trusted-header", "WEBCLIENT_TRUSTED_PROXIES": proxies})
    assert "on this machine" in said and "WEBCLIENT_UDS" in said and "WEBCLIENT_PROXY_SECRET_FILE" in said


@pytest.mark.process
def test_a_secret_every_user_can_read_stops_the_start_without_being_said(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text("everyone-can-read-this\n")
    secret.chmod(0o644)
    env = {"WEBCLIENT_AUTH": "trusted-header", "WEBCLIENT_TRUSTED_PROXIES": "127.0.0.2"}
    said = refused_at_start(tmp_path, {**env, "WEBCLIENT_PROXY_SECRET_FILE": str(secret)})
    assert "every user can read" in said and "everyone-can-read-this" not in said


def test_a_proxy_on_another_machine_may_still_be_trusted_by_its_address(start_server: ServerFactory) -> None:
    server = start_server(WEBCLIENT_AUTH="trusted-header", WEBCLIENT_TRUSTED_PROXIES="10.9.9.9,fd00::/8")
    refused = httpx.get(server.url + "/", headers={**naming("mallory", ["admins"]), **HTML})  # not from 10.9.9.9
    assert refused.status_code == 403 and "mallory" not in refused.text
