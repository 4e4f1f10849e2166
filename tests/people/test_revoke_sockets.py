"""A revoke closes every socket a person holds on a session, not only its page: Bob, driving Alice's session, has
the agent's sign-in terminal open; once Alice revokes his share (or turns it to watch) that socket closes within a
second and what he types there never reaches the agent's login. Signing out closes it too."""

from __future__ import annotations

import asyncio
import json
import re
import sys
import time
from pathlib import Path

import pytest
import websockets
from websockets.asyncio.client import ClientConnection

from tests.support import probes
from tests.support.people import TEAM, as_person, person_client
from tests.support.restarts import until
from tests.support.servers import AGENTS, Server, ServerFactory
from tests.support.team import new_session, page_socket
from tests.support.urls import URLS, at
from tests.web.test_signins import post, sign_in

pytestmark = pytest.mark.process  # each test starts the server as a process: its subject

AGENT = f"{sys.executable} {AGENTS / 'login_agent.py'}"
ADMINS = ["admins"]
TERMINAL = re.compile(r'data-role="sign-in-terminal"[^>]*data-url="([^"]+)"')


def share_with_bob(server: Server, session_id: str, role: str) -> str:
    """Alice shares her session with Bob (``role``); the share's id, as her Share panel's Revoke names it."""
    alice = person_client(server, "alice", ADMINS)
    answer = alice.post(
        URLS.for_("add_share", session_id=session_id), data={"kind": "person", "grantee": "bob", "role": role}
    )
    assert answer.status_code == 303, answer.text[:300]
    (share_id,) = re.findall(r'/shares/(\d+)/revoke"', alice.get(URLS.for_("session", session_id=session_id)).text)
    return share_id


async def bobs_terminal(server: Server, session_id: str) -> ClientConnection:
    """Bob, a driver, starts the agent's terminal sign-in from the page and opens its socket, at its prompt."""
    async with page_socket(server, session_id, "bob") as (page, _):
        await page.send(json.dumps({"action": "authenticate", "method_id": "login"}))
        found = TERMINAL.search(await until(page, 'data-role="sign-in-terminal"'))
        assert found is not None
    url = server.url.replace("http", "ws") + found.group(1)  # until() unescaped the page's &amp;
    terminal = await websockets.connect(url, additional_headers={**as_person("bob"), "Origin": server.url})
    seen = b""
    async with asyncio.timeout(10):
        while b"Enter the code: " not in seen:
            frame = await terminal.recv()
            seen += frame if isinstance(frame, bytes) else b""
    return terminal


async def closed_within(terminal: ClientConnection, seconds: float) -> int | None:
    """The code ``terminal`` was closed with, if the server closed it within ``seconds`` (else None)."""
    try:
        async with asyncio.timeout(seconds):
            while True:
                await terminal.recv()
    except websockets.ConnectionClosed as closed:
        return closed.rcvd.code if closed.rcvd else None
    except TimeoutError:
        return None


async def type_the_code(terminal: ClientConnection) -> None:
    """Bob types the login's code, as the terminal's page would (a closed socket takes nothing)."""
    try:
        await terminal.send(json.dumps({"type": "input", "data": "4242\r"}))
    except websockets.ConnectionClosed:
        pass


async def after(change: str, server: Server, session_id: str, share_id: str) -> int | None:
    terminal = await bobs_terminal(server, session_id)
    try:
        alice = person_client(server, "alice", ADMINS)
        if change == "revoke":
            answer = await asyncio.to_thread(
                alice.post, URLS.for_("revoke_share", session_id=session_id, share_id=share_id)
            )
        else:
            answer = await asyncio.to_thread(
                alice.post,
                URLS.for_("add_share", session_id=session_id),
                data={"kind": "person", "grantee": "bob", "role": "watch"},
            )
        assert answer.status_code == 303
        code = await closed_within(terminal, 1)
        await type_the_code(terminal)
        await asyncio.sleep(1.5)
        return code
    finally:
        await terminal.close()


@pytest.mark.parametrize("change", ["revoke", "watch"])
def test_a_revoke_or_a_turn_to_watch_closes_the_sign_in_terminal_of_the_driver(
    start_server: ServerFactory, tmp_path: Path, change: str
) -> None:
    tokens = tmp_path / "tokens"
    server = start_server(agent=AGENT, LOGIN_TOKEN_DIR=str(tokens), process=True, **TEAM)
    session_id = new_session(server, "alice", ADMINS)
    share_id = share_with_bob(server, session_id, "drive")
    assert asyncio.run(after(change, server, session_id, share_id)) == 1008
    assert not (tokens / "token").exists(), "Bob's keystrokes reached the agent's login after his share changed"
    # The terminal is still there for Alice, who may drive it: the code she types signs the agent in.
    asyncio.run(alice_signs_in(server, session_id))
    deadline = time.monotonic() + 10
    while not (tokens / "token").exists():
        assert time.monotonic() < deadline, "Alice's keystrokes did not reach the agent's login"
        time.sleep(0.05)


async def alice_signs_in(server: Server, session_id: str) -> None:
    """Alice opens her page, where the terminal Bob started still runs, and types the code into it."""
    url = server.url.replace("http", "ws")
    headers = {**as_person("alice", ADMINS), "Origin": server.url}
    async with websockets.connect(at(url, "socket", session_id=session_id), additional_headers=headers) as page:
        found = TERMINAL.search(str(await page.recv()).replace("&amp;", "&"))
        assert found is not None, "the sign-in terminal was not kept running"
    async with websockets.connect(url + found.group(1), additional_headers=headers) as terminal:
        await terminal.send(json.dumps({"type": "input", "data": "4242\r"}))
        await asyncio.sleep(1)


async def signed_out_while_typing(server: Server, session_id: str, cookie: str) -> int | None:
    """The terminal's socket, opened by a browser's sign-in (token mode): its code once that browser signs out."""
    url = server.url.replace("http", "ws")
    headers = {"Cookie": cookie, "Origin": server.url}
    async with websockets.connect(at(url, "socket", session_id=session_id), additional_headers=headers) as page:
        await page.send(json.dumps({"action": "authenticate", "method_id": "login"}))
        found = TERMINAL.search(await until(page, 'data-role="sign-in-terminal"'))
        assert found is not None
    async with websockets.connect(url + found.group(1), additional_headers=headers) as terminal:
        await terminal.recv()
        assert (await asyncio.to_thread(post, server, cookie, URLS.for_("sign_out"))).status_code == 303
        code = await closed_within(terminal, 1)
        await type_the_code(terminal)
        await asyncio.sleep(1.5)
        return code


def test_signing_out_closes_the_sign_in_terminal(start_server: ServerFactory, tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    server = start_server(agent=AGENT, LOGIN_TOKEN_DIR=str(tokens), process=True)
    session_id = probes.new_session(server)
    assert asyncio.run(signed_out_while_typing(server, session_id, sign_in(server))) == 1008
    assert not (tokens / "token").exists()
