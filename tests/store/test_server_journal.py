"""A real server with the scripted agent keeps the session's row and journal in the store, on both databases."""

from __future__ import annotations

import asyncio
import functools
import json
import re
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets
from sqlalchemy import select

from tests.support.servers import Server, ServerFactory, stop_server
from tests.support.urls import URLS, socket_at
from webclient.people.person import LOCAL
from webclient.store.database import create_engine
from webclient.store.schema import journal, sessions

PROMPTED = {"action": "prompt", "text": "permission", "uploads": [], "mentions": []}


async def prompt_and_answer(server: Server) -> str:
    """Open a session, prompt ``permission`` and choose allow-once, over the page's socket; returns its id."""
    async with httpx.AsyncClient(base_url=server.url, headers=server.headers) as http:
        response = await http.post(URLS.for_("new_session"))
    location = response.headers["location"]
    connect = functools.partial(websockets.connect, additional_headers=server.headers)
    async with connect(socket_at(server.url, location)) as socket:
        frame = str(await socket.recv())
        nonce = re.search(r'id="prompt-nonce" value="([^"]+)"', frame)
        while 'data-agent-state="ready"' not in frame:
            frame = str(await socket.recv())
        assert nonce is not None
        await socket.send(json.dumps({"action": "prompt", "prompt": "permission", "nonce": nonce.group(1)}))
        while "data-option-id" not in frame:
            frame = str(await socket.recv())
        request_id = re.search(r'"request_id": "([^"]+)"', frame.replace("&#34;", '"'))
        assert request_id is not None
        answer = {"action": "permission", "request_id": request_id.group(1), "option_id": "allow-once"}
        await socket.send(json.dumps(answer))
        server.wait_received(lambda m: m.get("result", {}).get("outcome") is not None)
        while 'data-turn-state="idle"' not in frame:
            frame = str(await socket.recv())
    return location.rsplit("/", 1)[1]


async def stored(url: str, session_id: str) -> tuple[Any, list[Any]]:
    engine = create_engine(url)
    try:
        async with engine.connect() as connection:
            row = (await connection.execute(select(sessions).where(sessions.c.id == session_id))).one()
            entries = list(
                await connection.execute(
                    select(journal).where(journal.c.session_id == session_id).order_by(journal.c.seq)
                )
            )
    finally:
        await engine.dispose()
    return row, entries


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)  # PostgreSQL: tests/store
def test_the_journal_holds_the_protocol_both_ways_and_the_users_actions_in_order(
    start_server: ServerFactory, database_url: str, tmp_path: Path
) -> None:
    if database_url.startswith("sqlite"):
        server = start_server(WEBCLIENT_DATA_DIR=str(tmp_path / "data"))
        url = f"sqlite:///{tmp_path / 'data' / 'webclient.sqlite3'}"
    else:
        server = start_server(WEBCLIENT_DATABASE_URL=database_url)
        url = database_url
    session_id = asyncio.run(prompt_and_answer(server))
    stop_server(server)  # a clean stop writes everything recorded

    row, entries = asyncio.run(stored(url, session_id))
    assert row.state == "idle"  # as it last was: a server's stop does not end it (the index says Stopped)
    assert row.workspace == str(server.workspace)
    assert "scripted_agent.py" in row.agent_command and row.agent
    assert row.created <= row.last_activity
    assert [entry.seq for entry in entries] == list(range(1, len(entries) + 1))

    def find(kind: str, direction: str, test: Any) -> int:
        """The place in the journal of the first entry that passes ``test``."""
        for place, entry in enumerate(entries):
            if entry.kind == kind and entry.direction == direction and test(json.loads(entry.body)):
                return place
        raise AssertionError(f"no {kind} {direction} entry like that in {[e.body[:80] for e in entries]}")

    # The protocol lines as they went over the wire (the agent's record of what it received matches).
    received = [json.loads(entry.body) for entry in entries if entry.kind == "protocol" and entry.direction == "out"]
    assert received == server.received()
    order = [
        find("protocol", "out", lambda m: m.get("method") == "initialize"),
        find("protocol", "in", lambda m: "agentCapabilities" in m.get("result", {})),
        find("protocol", "out", lambda m: m.get("method") == "session/new"),
        find("action", "user", lambda a: {**a, "by": None} == {**PROMPTED, "by": None} and a["by"]["id"] == LOCAL.id),
        find("protocol", "out", lambda m: m.get("method") == "session/prompt"),
        find("protocol", "in", lambda m: m.get("method") == "session/request_permission"),
        find("action", "user", lambda a: a["action"] == "permission" and a["option_id"] == "allow-once"),
        find("protocol", "out", lambda m: m.get("result", {}).get("outcome", {}).get("optionId") == "allow-once"),
        find("protocol", "in", lambda m: m.get("result", {}).get("stopReason") == "end_turn"),
    ]
    assert order == sorted(order)
    updates = [place for place, e in enumerate(entries) if e.kind == "protocol" and '"session/update"' in e.body]
    assert any(order[4] < place < order[-1] for place in updates)  # the turn's own updates, in the turn
