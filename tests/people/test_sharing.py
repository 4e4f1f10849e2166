"""Sharing a session: with a person, a group or by link, to watch or to drive; revoked at once. A watcher's page has
no composer and no buttons, and the socket drops what a watcher sends (the agent receives nothing); who has the
session open shows in its header; the audit log keeps every share and every attributed action."""

from __future__ import annotations

import asyncio
import contextlib
import csv
import io
import json
import re
import signal
import sqlite3
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets

from tests.support.people import TEAM, as_person
from tests.support.restarts import stop, until
from tests.support.servers import Server, ServerFactory
from tests.support.team import new_session, page_socket, prompt, ready
from tests.support.urls import URLS, socket_at

ADMINS = ["admins"]
"""Alice is an admin here, so she owns her sessions whether or not the session records its owner."""


def client(server: Server, name: str, groups: list[str] | None = None) -> httpx.Client:
    http = httpx.Client(base_url=server.url, headers={**as_person(name, groups or []), "Origin": server.url})
    server.clients.append(http)
    return http


def share(server: Server, session_id: str, kind: str, grantee: str, role: str) -> None:
    answer = client(server, "alice", ADMINS).post(
        URLS.for_("add_share", session_id=session_id), data={"kind": kind, "grantee": grantee, "role": role}
    )
    assert answer.status_code == 303, answer.text[:300]


def shares_of(server: Server, session_id: str) -> list[tuple[str, str]]:
    """(share id, kind) of each share on alice's Share panel."""
    page = client(server, "alice", ADMINS).get(URLS.for_("session", session_id=session_id)).text
    return re.findall(r'/shares/(\d+)/revoke"', page), re.findall(r'data-kind="(\w+)"', page)  # type: ignore[return-value]


async def send_as(server: Server, session_id: str, name: str, text: str, groups: list[str] | None = None) -> bool:
    """``name`` opens the page's socket and sends a prompt and a mode change, as its composer and menu would;
    False when the socket's handshake is refused (the session is not theirs to see)."""
    try:
        async with page_socket(server, session_id, name, groups or []) as (socket, _):
            await prompt(socket, text, f"nonce-{name}-{text}")
            await socket.send(json.dumps({"action": "set_mode", "mode_id": "x"}))
            await asyncio.sleep(1)
    except websockets.InvalidStatus:
        return False
    return True


@pytest.fixture
def team(start_server: ServerFactory) -> tuple[Server, str]:
    """A team's server and a session of alice's whose agent is ready."""
    server = start_server(**TEAM)
    session_id = new_session(server, "alice", ADMINS)

    async def wait_ready() -> None:
        async with page_socket(server, session_id, "alice", ADMINS) as (socket, _):
            await ready(socket)

    asyncio.run(wait_ready())
    return server, session_id


def test_a_watcher_sees_no_composer_and_what_they_send_never_reaches_the_agent(team: tuple[Server, str]) -> None:
    server, session_id = team
    assert not asyncio.run(send_as(server, session_id, "bob", "from a stranger"))
    share(server, session_id, "person", "bob", "watch")
    page = client(server, "bob").get(URLS.for_("session", session_id=session_id)).text
    assert 'id="composer"' not in page and 'data-action="cancel"' not in page and 'data-role="rename"' not in page
    assert 'data-role="watching-only"' in page and 'data-role="share-panel"' not in page
    assert asyncio.run(send_as(server, session_id, "bob", "from a watcher"))
    assert server.prompts_received() == []

    share(server, session_id, "person", "bob", "drive")  # the same person again: the role changes
    page = client(server, "bob").get(URLS.for_("session", session_id=session_id)).text
    assert 'id="composer"' in page and 'data-role="watching-only"' not in page
    asyncio.run(send_as(server, session_id, "bob", "echo from a driver"))
    assert server.prompts_received() == ["echo from a driver"]
    alice_sees = client(server, "alice", ADMINS).get(URLS.for_("session", session_id=session_id)).text
    assert 'data-role="sent-by">bob <time' in alice_sees
    ids, kinds = shares_of(server, session_id)
    assert kinds == ["person"]


async def close_code_once_revoked(server: Server, socket: Any, session_id: str, share_id: str) -> int | None:
    """Alice revokes the share while ``socket`` is open: the code the server closes it with (None: never closed)."""
    alice = client(server, "alice", ADMINS)
    await asyncio.to_thread(alice.post, URLS.for_("revoke_share", session_id=session_id, share_id=share_id))
    try:
        async with asyncio.timeout(10):
            while True:
                await socket.recv()
    except websockets.ConnectionClosed as closed:
        return closed.rcvd.code if closed.rcvd else None


async def revoked_while_open(server: Server, session_id: str, share_id: str) -> int | None:
    async with page_socket(server, session_id, "bob") as (socket, _):
        return await close_code_once_revoked(server, socket, session_id, share_id)


def test_a_revoke_takes_effect_at_once_and_closes_the_open_page(team: tuple[Server, str]) -> None:
    server, session_id = team
    share(server, session_id, "person", "bob", "drive")
    (share_id,), _ = shares_of(server, session_id)
    assert asyncio.run(revoked_while_open(server, session_id, share_id)) == 1008
    assert shares_of(server, session_id) == ([], [])
    assert not asyncio.run(send_as(server, session_id, "bob", "after the revoke"))
    assert server.prompts_received() == []


def test_a_group_share_lets_its_members_drive(team: tuple[Server, str]) -> None:
    server, session_id = team
    share(server, session_id, "group", "dev", "drive")
    assert not asyncio.run(send_as(server, session_id, "erin", "not in the group", ["ops"]))
    asyncio.run(send_as(server, session_id, "dave", "echo from the group", ["dev"]))
    assert server.prompts_received() == ["echo from the group"]


async def through_the_link(server: Server, session_id: str, cookie: str) -> None:
    url = socket_at(server.url, session_id)
    headers = {**as_person("carol"), "Origin": server.url, "Cookie": cookie}
    async with websockets.connect(url, additional_headers=headers) as socket:
        await socket.recv()
        await prompt(socket, "through a watch link", "n-link")
        await asyncio.sleep(1)


def test_a_link_share_leaves_a_cookie_for_that_session_only(team: tuple[Server, str]) -> None:
    server, session_id = team
    share(server, session_id, "link", "", "watch")
    alice_page = client(server, "alice", ADMINS).get(URLS.for_("session", session_id=session_id)).text
    link = re.search(r'href="([^"]+)" data-role="share-link"', alice_page)
    assert link is not None
    token = link.group(1).split("share=")[1]
    assert f'value="{server.url}{link.group(1)}" aria-label="The share link"' in alice_page  # a whole URL to copy
    carol = client(server, "carol")
    answer = carol.get(link.group(1).replace("&amp;", "&"))
    assert answer.status_code == 200
    set_cookie = answer.headers["set-cookie"]
    assert f"share={token}" in set_cookie and f"Path={URLS.for_('session', session_id=session_id)}" in set_cookie
    assert "HttpOnly" in set_cookie
    assert 'data-role="watching-only"' in answer.text
    asyncio.run(through_the_link(server, session_id, f"share={token}"))
    assert server.prompts_received() == []
    (share_id,), _ = shares_of(server, session_id)
    assert asyncio.run(link_revoked_while_open(server, session_id, share_id, f"share={token}")) == 1008


def test_a_drive_link_is_made_only_once_the_owner_confirms_that_it_runs_with_their_keys(
    team: tuple[Server, str],
) -> None:
    server, session_id = team
    alice = client(server, "alice", ADMINS)
    panel = re.search(
        r'data-role="drive-runs-as-owner">(.*?)</p>', alice.get(URLS.for_("session", session_id=session_id)).text, re.S
    )
    assert panel is not None
    said = " ".join(panel.group(1).split())
    assert "whoever may drive it (and anyone who has a drive link) uses your secrets (your API keys)" in said
    assert "your agents' logins" in said
    assert 'name="owner_keys" value="yes"' in alice.get(URLS.for_("session", session_id=session_id)).text
    unconfirmed = alice.post(URLS.for_("add_share", session_id=session_id), data={"kind": "link", "role": "drive"})
    assert unconfirmed.status_code == 400
    assert "whoever has a drive link runs this session's agent with your secrets" in unconfirmed.text
    assert shares_of(server, session_id) == ([], [])
    watch_link = alice.post(URLS.for_("add_share", session_id=session_id), data={"kind": "link", "role": "watch"})
    assert watch_link.status_code == 303  # watching runs nothing: no confirmation
    confirmed = {"kind": "link", "role": "drive", "owner_keys": "yes"}
    assert alice.post(URLS.for_("add_share", session_id=session_id), data=confirmed).status_code == 303
    page = alice.get(URLS.for_("session", session_id=session_id)).text
    assert re.findall(r'data-kind="link" data-grantee="" data-share-role="(\w+)"', page) == ["watch", "drive"]


async def link_revoked_while_open(server: Server, session_id: str, share_id: str, cookie: str) -> int | None:
    url = socket_at(server.url, session_id)
    headers = {**as_person("carol"), "Origin": server.url, "Cookie": cookie}
    async with websockets.connect(url, additional_headers=headers) as socket:
        await socket.recv()
        return await close_code_once_revoked(server, socket, session_id, share_id)


async def come_and_go(server: Server, session_id: str) -> tuple[str, str]:
    """Alice's header once bob, then abe, have opened her session, and once both have left again."""
    async with page_socket(server, session_id, "alice", ADMINS) as (alice, _):
        for someone in ("bob", "abe"):
            await asyncio.to_thread(share, server, session_id, "person", someone, "watch")
        async with page_socket(server, session_id, "bob") as _, page_socket(server, session_id, "abe") as _:
            everyone = await until(alice, 'data-person="abe"')
            while 'data-person="bob"' not in everyone:
                everyone = await until(alice, 'data-role="presence"')
        gone = await until(alice, 'data-role="presence"')
        while 'data-person="bob"' in gone or 'data-person="abe"' in gone:
            gone = await until(alice, 'data-role="presence"')
    return everyone, gone


def test_the_header_shows_who_has_the_session_open_as_they_come_and_go(team: tuple[Server, str]) -> None:
    server, session_id = team
    everyone, gone = asyncio.run(come_and_go(server, session_id))
    presence = re.search(r'data-role="presence".*?</span> watching</span>', everyone, re.S)
    assert presence is not None
    # By name, not in the order they came: a page that reconnects does not move to the end.
    assert re.findall(r'data-person="(\w+)"', presence.group(0)) == ["abe", "alice", "bob"]
    assert re.findall(r'data-person="(\w+)"', gone) == ["alice"]


def test_the_audit_log_per_session_and_per_server_with_its_exports(team: tuple[Server, str]) -> None:
    server, session_id = team
    share(server, session_id, "person", "bob", "drive")
    asyncio.run(send_as(server, session_id, "bob", "echo audited"))
    time.sleep(0.3)
    alice = client(server, "alice", ADMINS)
    page = alice.get(URLS.for_("session_audit", session_id=session_id))
    assert page.status_code == 200
    assert re.findall(r'data-action="(\w+)" data-person="(\w+)"', page.text) == [
        ("mode", "bob"),
        ("prompt", "bob"),
        ("share", "alice"),
    ]
    exported = alice.get(URLS.for_("session_audit", session_id=session_id), params={"format": "csv"})
    assert exported.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(exported.text)))
    assert [(row["person"], row["action"]) for row in rows] == [("alice", "share"), ("bob", "prompt"), ("bob", "mode")]
    lines = alice.get(URLS.for_("session_audit", session_id=session_id), params={"format": "jsonl"}).text.splitlines()
    assert json.loads(lines[1])["detail"]["text"] == "echo audited"
    bob = client(server, "bob")
    assert bob.get(URLS.for_("session_audit", session_id=session_id)).status_code == 403  # a driver, not the owner
    assert bob.get(URLS.for_("audit")).status_code == 404
    everything = alice.get(URLS.for_("audit"), params={"format": "jsonl"}).text.splitlines()
    assert [json.loads(line)["session"] for line in everything] == [session_id] * 3


def test_a_watcher_may_not_prompt_upload_or_end_over_http_either(team: tuple[Server, str]) -> None:
    server, session_id = team
    share(server, session_id, "person", "bob", "watch")
    bob = client(server, "bob")
    assert (
        bob.post(URLS.for_("prompt", session_id=session_id), data={"prompt": "echo by form", "nonce": "f1"}).status_code
        == 403
    )
    upload = bob.post(
        URLS.for_("attachments", session_id=session_id), files={"file": ("a.txt", b"hello", "text/plain")}
    )
    assert upload.status_code == 403
    assert bob.post(URLS.for_("end_session", session_id=session_id)).status_code == 403
    time.sleep(0.5)
    assert server.prompts_received() == []
    assert (
        'data-agent-state="ready"'
        in client(server, "alice", ADMINS).get(URLS.for_("session", session_id=session_id)).text
    )


def test_the_shares_come_back_with_the_session_after_a_restart(start_server: ServerFactory, tmp_path: Path) -> None:
    data = {"WEBCLIENT_DATA_DIR": str(tmp_path / "data")}
    first = start_server(**TEAM, **data)
    session_id = new_session(first, "alice", ADMINS)
    share(first, session_id, "person", "bob", "drive")
    share(first, session_id, "person", "carol", "watch")
    stop(first, signal.SIGTERM)

    second = start_server(**TEAM, **data)
    assert 'id="composer"' in client(second, "bob").get(URLS.for_("session", session_id=session_id)).text
    assert 'data-role="watching-only"' in client(second, "carol").get(URLS.for_("session", session_id=session_id)).text
    assert shares_of(second, session_id)[1] == ["person", "person"]


HOSTILE = '<img src=x onerror="alert(1)">'


async def hostile_prompt(server: Server, session_id: str) -> str:
    async with page_socket(server, session_id, "alice", ADMINS) as (alice, _):
        async with page_socket(server, session_id, HOSTILE) as (hostile, nonce):
            await prompt(hostile, "echo hi", nonce)
            async with asyncio.timeout(20):  # the frames as they come (`until` unescapes them)
                while 'data-role="sent-by"' not in (frame := str(await alice.recv())):
                    pass
            return frame


def test_a_hostile_name_shows_as_text_everywhere(team: tuple[Server, str]) -> None:
    server, session_id = team
    share(server, session_id, "person", HOSTILE, "drive")
    frame = asyncio.run(hostile_prompt(server, session_id))
    alice = client(server, "alice", ADMINS)
    pages = [
        frame,
        alice.get(URLS.for_("session", session_id=session_id)).text,
        alice.get(URLS.for_("session_audit", session_id=session_id)).text,
        alice.get(URLS.for_("audit")).text,
    ]
    for page in pages:
        assert "<img" not in page
    assert "&lt;img src=x" in pages[1] and "&lt;img src=x" in pages[2]


def test_a_person_is_found_by_name_or_email_among_those_who_signed_in(
    start_server: ServerFactory, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    server = start_server(**TEAM, WEBCLIENT_DATA_DIR=str(data))
    session_id = new_session(server, "alice", ADMINS)
    with contextlib.closing(sqlite3.connect(data / "webclient.sqlite3")) as db, db:
        db.execute(
            "INSERT INTO people (id, name, email, groups, admin, first_seen, last_seen) "
            "VALUES ('u-42', 'Bob Builder', 'bob@example.com', '[]', 0, '2026-01-01', '2026-01-01')"
        )
    share(server, session_id, "person", "bob builder", "watch")
    share(server, session_id, "person", "BOB@example.com", "drive")
    share(server, session_id, "person", "someone-new", "watch")
    page = client(server, "alice", ADMINS).get(URLS.for_("session", session_id=session_id)).text
    listed = re.findall(r'data-grantee="([^"]*)" data-share-role="(\w+)"', page)
    assert listed == [("u-42", "drive"), ("someone-new", "watch")]
    assert '<option value="u-42">Bob Builder</option>' in page
