"""Several instances on one PostgreSQL (real processes, on loopback): a session made on one is seen live and driven
through another, a new session is found at once wherever the next request lands, and a session whose instance dies
is taken up by another within 15 s, its page reconnected to the same thread."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
import signal
import time

import asyncpg
import httpx
import pytest
import websockets

from tests.support.postgres import Cluster
from tests.support.restarts import PERMISSION_ASKED, created, stop, until
from tests.support.servers import Server, ServerFactory
from tests.support.urls import URLS, socket_at

TOKEN = "one-token-for-every-instance"
KEY = "one-server-key-for-every-instance"


def one_service(postgresql: Cluster) -> dict[str, str]:
    """What the instances of one service share: the database, the sign-in token and the server key."""
    return {"WEBCLIENT_DATABASE_URL": postgresql.new_database(), "WEBCLIENT_TOKEN": TOKEN, "WEBCLIENT_SECRET_KEY": KEY}


def signed_in(server: Server) -> Server:
    """``server`` as a script signed in to the service sees it (the shared token)."""
    return dataclasses.replace(server, token=TOKEN)


async def lease_holder(database: str, session_id: str) -> str | None:
    """The address of the instance whose lease on ``session_id`` has not expired, as the database says."""
    connection = await asyncpg.connect(database)
    try:
        return await connection.fetchval(
            "SELECT i.address FROM session_leases l JOIN instances i ON i.id = l.instance "
            "WHERE l.session_id = $1 AND l.expires > now()",
            session_id,
        )
    finally:
        await connection.close()


async def journal_holding(database: str, session_id: str, text: str) -> int:
    """How many of the session's journal records hold ``text``."""
    connection = await asyncpg.connect(database)
    try:
        found = await connection.fetchval(
            "SELECT count(*) FROM journal WHERE session_id = $1 AND strpos(body, $2) > 0", session_id, text
        )
        return int(found)
    finally:
        await connection.close()


async def first_frame(server: Server, session_id: str) -> str:
    async with websockets.connect(
        socket_at(server.url, session_id), additional_headers=server.headers, max_size=None, open_timeout=5
    ) as socket:
        return str(await socket.recv())


@pytest.mark.process
def test_a_page_on_another_instance_shows_the_turn_live_and_answers_its_question(
    start_server: ServerFactory, postgresql: Cluster
) -> None:
    service = one_service(postgresql)
    owner = signed_in(start_server(agent=None, process=True, **service))
    other = signed_in(start_server(agent=None, process=True, **service))

    async def scenario() -> None:
        async with httpx.AsyncClient(base_url=owner.url, headers=owner.headers) as http:
            session_id = created(await http.post(URLS.for_("new_session"))).rsplit("/", 1)[1]
        assert await lease_holder(service["WEBCLIENT_DATABASE_URL"], session_id) == owner.url
        # Asked for at once on the other instance: found (forwarded to its owner), not 404.
        async with httpx.AsyncClient(base_url=other.url, headers=other.headers) as http:
            page = await http.get(URLS.for_("session", session_id=session_id))
            assert page.status_code == 200 and session_id in page.text
            # Its socket is the browser's origin's (the instance it asked), not the owner's that rendered it.
            assert f'"{other.url.replace("http", "ws", 1)}/sessions/{session_id}/ws' in page.text
        connect = {"additional_headers": owner.headers, "max_size": None}
        async with (
            websockets.connect(socket_at(other.url, session_id), **connect) as through_other,
            websockets.connect(socket_at(owner.url, session_id), **connect) as on_owner,
        ):
            nonce = re.search(r'id="prompt-nonce" value="([^"]+)"', str(await through_other.recv()))
            assert nonce is not None
            await until(through_other, 'data-agent-state="ready"')
            prompt = {"action": "prompt", "prompt": "edit", "nonce": nonce.group(1) + "-1"}
            await through_other.send(json.dumps(prompt))
            asked = await until(through_other, PERMISSION_ASKED)
            await until(on_owner, PERMISSION_ASKED)  # the owner's own page sees the same question
            option = re.search(r'"option_id": "([^"]+)", "request_id": "([^"]+)"', asked)
            assert option is not None
            answer = {"action": "permission", "request_id": option.group(2), "option_id": option.group(1)}
            await through_other.send(json.dumps(answer))  # answered through the instance that does not run it
            await until(on_owner, 'data-turn-state="idle"')
            await until(through_other, 'data-turn-state="idle"')
        async with httpx.AsyncClient(base_url=other.url, headers=other.headers) as http:
            exported = (await http.get(URLS.for_("export", session_id=session_id))).text
        assert exported.count("You chose:") == 1 or "allow" in exported.lower(), exported[:2000]

    asyncio.run(scenario())


@pytest.mark.process
def test_a_session_whose_instance_dies_is_taken_up_by_another_within_15_seconds(
    start_server: ServerFactory, postgresql: Cluster
) -> None:
    service = one_service(postgresql)
    database = service["WEBCLIENT_DATABASE_URL"]
    doomed = signed_in(start_server(agent=None, process=True, **service))
    survivor = signed_in(start_server(agent=None, process=True, **service))

    async def made_and_shown() -> str:
        async with httpx.AsyncClient(base_url=doomed.url, headers=doomed.headers) as http:
            session_id = created(await http.post(URLS.for_("new_session"))).rsplit("/", 1)[1]
        async with websockets.connect(
            socket_at(doomed.url, session_id), additional_headers=doomed.headers, max_size=None
        ) as socket:
            await until(socket, 'data-agent-state="ready"')
        return session_id

    session_id = asyncio.run(made_and_shown())
    killed = time.monotonic()
    stop(doomed, signal.SIGKILL)

    async def reconnect() -> str:
        """What a page does: reconnect through an instance that answers, until the session is back."""
        while True:
            try:
                frame = await first_frame(survivor, session_id)
            except (OSError, websockets.exceptions.WebSocketException):
                await asyncio.sleep(0.5)
                continue
            if "moved to another instance" in frame:
                return frame
            await asyncio.sleep(0.5)

    frame = asyncio.run(asyncio.wait_for(reconnect(), 30))
    took = time.monotonic() - killed
    assert took < 15, f"taken up {took:.1f} s after the kill"
    assert asyncio.run(lease_holder(database, session_id)) == survivor.url
    assert session_id in frame
    deadline = time.monotonic() + 10  # the journal's batches are written a moment later
    while asyncio.run(journal_holding(database, session_id, "moved to another instance")) == 0:
        assert time.monotonic() < deadline, "the move is not on record"
        time.sleep(0.2)
    print(f"taken up by the other instance {took:.1f} s after kill -9")


@pytest.mark.process
def test_an_instance_that_stops_hands_its_idle_sessions_over_asleep(
    start_server: ServerFactory, postgresql: Cluster
) -> None:
    """SIGTERM (a rolling deploy): the idle session's agent sleeps, its lease goes, and the next page on another
    instance wakes it there."""
    service = one_service(postgresql)
    stopping = signed_in(start_server(agent=None, process=True, **service, WEBCLIENT_DRAIN_SECONDS="20"))
    staying = signed_in(start_server(agent=None, process=True, **service))

    async def made() -> str:
        async with httpx.AsyncClient(base_url=stopping.url, headers=stopping.headers) as http:
            session_id = created(await http.post(URLS.for_("new_session"))).rsplit("/", 1)[1]
        async with websockets.connect(
            socket_at(stopping.url, session_id), additional_headers=stopping.headers, max_size=None
        ) as socket:
            await until(socket, 'data-agent-state="ready"')
        return session_id

    session_id = asyncio.run(made())
    began = time.monotonic()
    assert stopping.process is not None
    stopping.process.send_signal(signal.SIGTERM)
    stopping.process.wait(timeout=20)  # nothing under way: it hands over and stops well before its 20 s
    assert time.monotonic() - began < 10

    async def woken_elsewhere() -> str:
        async with websockets.connect(
            socket_at(staying.url, session_id), additional_headers=staying.headers, max_size=None
        ) as socket:
            ready = await until(socket, 'data-agent-state="ready"')
            # Handed over, not taken up as from an instance that died (which says so in the thread).
            assert "moved to another instance" not in ready
            return ready

    asyncio.run(woken_elsewhere())
    database = service["WEBCLIENT_DATABASE_URL"]
    assert asyncio.run(lease_holder(database, session_id)) == staying.url
    # Put to sleep by the instance that stopped (on record), not taken up as from one that died.
    assert asyncio.run(journal_holding(database, session_id, '"action": "sleep"')) == 1
    assert asyncio.run(journal_holding(database, session_id, "moved to another instance")) == 0
    stop(stopping, signal.SIGTERM)
