"""Each person's own: a session is its owner's (and the admins'); to anyone else every route of it and both its web
sockets answer as if it did not exist. Walks the route table, so a route added later is checked too."""

from __future__ import annotations

import base64
import re
import sqlite3
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from tests.support.agent_env import new_session
from tests.support.nginx import Member, behind_proxy, proxy_in_front, socket_folder, unix_upstream
from tests.support.people import TEAM, as_person, person_client
from tests.support.servers import Server, ServerFactory, free_port, stop_server
from tests.support.urls import URLS
from webclient.render.urls import ROUTES, Urls
from webclient.web.app import routes

ADMIN = ["admins"]
SOCKETS = {"socket", "sign_in_terminal"}
LAST = ("delete_session",)
"""Walked last: after it, the session is gone."""
BOB = as_person("bob")
Opens = Callable[[str, str], bool]
"""Whether a session's web socket (its route name, the session's id) opens for bob."""


def session_routes() -> list[tuple[str, str]]:
    """Every (route name, method) of a session's HTTP routes, from the app's own table (deleting last)."""
    walked = []
    for route in routes():
        name = getattr(route, "name", "")
        if "{session_id}" in ROUTES.get(name, "") and name not in SOCKETS:
            walked += [(name, method) for method in sorted(getattr(route, "methods", None) or ()) if method != "HEAD"]
    return sorted(walked, key=lambda pair: pair[0] in LAST)


def url_of(name: str, session_id: str) -> str:
    """The route's URL for ``session_id``, its other path parameters filled with numbers that may exist."""
    params = {key: 1 if key == "seq" else 0 for key in re.findall(r"\{(\w+)", ROUTES[name]) if key != "session_id"}
    return Urls().for_(name, session_id=session_id, **params)


def call(client: httpx.Client, name: str, method: str, session_id: str) -> httpx.Response:
    url = url_of(name, session_id)
    if method == "GET":
        return client.get(url, params={"path": "notes.txt", "q": "n"})
    if name == "attachments":
        return client.post(url, files={"file": ("a.txt", b"hello", "text/plain")})
    return client.post(url, data={"prompt": "from someone else", "nonce": "x", "archived": "1"})


def socket_opens(server: Server, name: str, session_id: str, who: dict[str, str]) -> bool:
    """Whether the web socket's handshake is accepted for ``who`` (the headers of a person)."""
    return opens(server.url, name, session_id, who)


def opens(base: str, name: str, session_id: str, headers: dict[str, str]) -> bool:
    """Whether the web socket ``name`` of the session at ``base`` (the server, or the proxy in front) opens for a
    handshake with ``headers``; a refusal must be the 404 its page gets."""
    url = base.replace("http", "ws") + url_of(name, session_id)
    try:
        with connect(url, additional_headers={**headers, "Origin": base}, open_timeout=10):
            return True
    except InvalidStatus as refused:
        assert refused.response.status_code == 404, (name, refused.response.status_code)
        return False


def walk(server: Server, alice: httpx.Client, bob: httpx.Client, admin: httpx.Client, bob_socket: Opens) -> int:
    """Bob walks every route and socket of Alice's session and gets what a session that does not exist answers; Alice
    and an admin are let through. The number of HTTP route-methods walked."""
    (server.workspace / "notes.txt").write_text("hello\n")
    mine, for_admin = new_session(alice), new_session(alice)
    server.wait_received(lambda m: m.get("method") == "session/new")
    walked = session_routes()
    named = {name for name, path in ROUTES.items() if "{session_id}" in path}
    assert {name for name, _ in walked} | SOCKETS == named  # every route of a session, each method it answers

    for name, method in walked:  # as bob: every route as for a session that does not exist
        missing = call(bob, name, method, "nosuchsession")
        refused = call(bob, name, method, mine)
        assert (refused.status_code, refused.text) == (missing.status_code, missing.text), (name, method)
        # Deleting one that is gone is done (back to the index, 303), as before: the same for one that is not his.
        assert (refused.status_code, refused.text) == ((303, "") if name in LAST else (404, "No such session"))
    for name in sorted(SOCKETS):
        assert not bob_socket(name, mine), name
    assert not any(m.get("method") == "session/prompt" for m in server.received())  # bob's prompt never reached it
    assert alice.get(URLS.for_("session", session_id=mine)).status_code == 200  # nor did his delete

    for client, session_id in ((alice, mine), (admin, for_admin)):  # the owner, and an admin: let through
        for name, method in walked:
            answer = call(client, name, method, session_id)
            assert answer.status_code != 403 and answer.text != "No such session", (name, method, answer.text[:200])
    assert (
        alice.get(URLS.for_("session", session_id=for_admin)).status_code == 404
    )  # the admin's walk deleted it (the owner's, hers)
    assert alice.get(URLS.for_("session", session_id=mine)).status_code == 404
    return len(walked)


def test_every_session_route_and_socket_is_404_to_another_person_and_open_to_its_owner_and_admins(
    start_server: ServerFactory,
) -> None:
    server = start_server(**TEAM)
    alice, bob, admin = (person_client(server, n, g) for n, g in (("alice", ()), ("bob", ()), ("root", ADMIN)))
    walked = walk(server, alice, bob, admin, lambda name, session_id: opens(server.url, name, session_id, BOB))
    print(f"\nisolation: {walked} HTTP route-methods and {len(SOCKETS)} web sockets checked per person")


@pytest.mark.process
def test_the_same_walk_through_the_real_proxy(start_server: ServerFactory) -> None:
    """As above, with nginx in front signing the three in (tests/support/nginx.py): what a team deploys."""
    port = free_port()
    members = (Member("alice", "a-pass"), Member("bob", "b-pass"), Member("root", "r-pass", groups=("admins",)))
    with socket_folder() as path, proxy_in_front(unix_upstream(path), members, port) as proxy:
        server = start_server(**behind_proxy(port, uds=path))
        alice, bob, admin = (
            httpx.Client(base_url=proxy.url, auth=proxy.auth(name), headers={"Origin": proxy.url})
            for name in ("alice", "bob", "root")
        )
        server.clients += [alice, bob, admin]
        signed_in_as_bob = {"Authorization": "Basic " + base64.b64encode(b"bob:b-pass").decode()}
        walk(server, alice, bob, admin, lambda name, session_id: opens(proxy.url, name, session_id, signed_in_as_bob))


def test_sockets_open_for_the_owner_and_an_admin(start_server: ServerFactory) -> None:
    server = start_server(**TEAM)
    session_id = new_session(person_client(server, "alice"))
    assert socket_opens(server, "socket", session_id, as_person("alice"))
    assert socket_opens(server, "socket", session_id, as_person("root", ADMIN))
    assert not socket_opens(server, "socket", session_id, as_person("bob"))
    # The sign-in terminal: the owner's handshake is accepted (then told there is no terminal), bob's refused.
    assert socket_opens(server, "sign_in_terminal", session_id, as_person("alice"))
    assert not socket_opens(server, "sign_in_terminal", session_id, as_person("bob"))


def share(server: Server, session_id: str, kind: str, grantee: str, role: str) -> None:
    """A row of ``shares``, as the sharing feature writes it."""
    assert server.store_dir is not None
    with sqlite3.connect(server.store_dir / "webclient.sqlite3") as db:
        db.execute(
            "INSERT INTO shares (session_id, kind, grantee, role, created, created_by) VALUES (?, ?, ?, ?, ?, ?)",
            (session_id, kind, grantee, role, datetime.now(UTC).isoformat(" "), "alice"),
        )


def stored_state(server: Server, session_id: str) -> str:
    assert server.store_dir is not None
    with sqlite3.connect(server.store_dir / "webclient.sqlite3") as db:
        return str(db.execute("SELECT state FROM sessions WHERE id = ?", (session_id,)).fetchone()[0])


def listed(client: httpx.Client, query: str = "") -> set[str]:
    return set(re.findall(r'data-session-id="([^"]+)"', client.get("/", params={"q": query} if query else None).text))


def test_the_index_and_the_search_show_a_person_their_own_and_shared_sessions_and_an_admin_all(
    start_server: ServerFactory,
) -> None:
    server = start_server(**TEAM)
    alice, bob, admin = (person_client(server, n, g) for n, g in (("alice", ()), ("bob", ["dev"]), ("root", ADMIN)))
    hers, his = new_session(alice), new_session(bob)
    for client, session_id in ((alice, hers), (bob, his)):
        client.post(URLS.for_("prompt", session_id=session_id), data={"prompt": "zebra crossing", "nonce": "n1"})
    deadline = time.monotonic() + 15
    while listed(admin, "zebra") != {hers, his}:
        assert time.monotonic() < deadline, "the prompts never reached the search"
        time.sleep(0.2)
    assert listed(alice) == listed(alice, "zebra") == {hers}
    assert listed(bob) == listed(bob, "zebra") == {his}
    assert listed(admin) == {hers, his}
    share(server, hers, "group", "dev", "watch")
    assert listed(bob) == listed(bob, "zebra") == {hers, his}
    share(server, his, "link", "sometoken", "drive")  # a link opens a session; it lists it for no one
    assert listed(alice) == {hers}


def test_the_owner_is_stored_and_read_back_after_a_restart(start_server: ServerFactory, tmp_path: Path) -> None:
    data = {"WEBCLIENT_DATA_DIR": str(tmp_path / "data")}
    first = start_server(**TEAM, **data)
    session_id = new_session(person_client(first, "alice"))
    first.wait_received(lambda m: m.get("method") == "session/new")
    stop_server(first)
    second = start_server(**TEAM, **data)
    bob, alice = person_client(second, "bob"), person_client(second, "alice")
    assert bob.get(URLS.for_("session", session_id=session_id)).status_code == 404
    assert bob.post(URLS.for_("archive_session", session_id=session_id), data={"archived": "1"}).status_code == 404
    assert (
        alice.post(URLS.for_("archive_session", session_id=session_id), data={"archived": "0"}).status_code == 303
    )  # from its row
    assert alice.get(URLS.for_("confirm_delete", session_id=session_id)).status_code == 200
    time.sleep(1)  # what a rebuild writes (its state: stopped) would be written by now
    assert stored_state(second, session_id) != "stopped"  # not rebuilt for any of that: its journal not read
    assert alice.get(URLS.for_("session", session_id=session_id)).status_code == 200  # rebuilt: still hers
    deadline = time.monotonic() + 10
    while stored_state(second, session_id) != "stopped":  # rebuilt for her (what the check above would see)
        assert time.monotonic() < deadline
        time.sleep(0.1)
    assert person_client(second, "root", ADMIN).get(URLS.for_("session", session_id=session_id)).status_code == 200
    assert listed(person_client(second, "bob")) == set()
