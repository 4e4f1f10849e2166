"""Retention in a real server, on both databases: the pass at start deletes old sessions and says so; the periodic
pass never deletes a running session; a session past ``WEBCLIENT_MAX_SESSION_MB`` ends its journal with a notice."""

from __future__ import annotations

import asyncio
import functools
import json
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from sqlalchemy import select, update

from tests.store.test_server_journal import prompt_and_answer, stored
from tests.support.servers import Server, ServerFactory, stop_server
from tests.support.urls import at
from webclient.session.agent_entry import AgentEntry
from webclient.session.agent_spec import AgentSpec
from webclient.store.database import create_engine
from webclient.store.schema import sessions
from webclient.store.store import Store

SPEC = AgentSpec(AgentEntry("agent", ["my-agent"]), Path("/srv/project"))


def server_store(start_server: ServerFactory, database_url: str, tmp_path: Path, **env: str) -> tuple[Server, str]:
    """A server on the store at ``database_url`` (SQLite: in its data folder), and the store's URL."""
    if database_url.startswith("sqlite"):
        url = f"sqlite:///{tmp_path / 'data' / 'webclient.sqlite3'}"
        return start_server(WEBCLIENT_DATA_DIR=str(tmp_path / "data"), **env), url
    return start_server(WEBCLIENT_DATABASE_URL=database_url, **env), database_url


async def add_sessions(url: str, last_active: dict[str, datetime]) -> None:
    """Stored sessions (ended) with these last activities, as an earlier server left them."""
    store = await Store.open_url(url)
    try:
        for session_id, when in last_active.items():
            recorder = store.open_journal(session_id, "mine", SPEC, when.timestamp())
            recorder.record("protocol", "in", '{"jsonrpc":"2.0","id":0,"result":{}}')
            recorder.state("ended", None, None, 0)
        await store.flush()
        await set_last_activity(store.engine.url.render_as_string(hide_password=False), last_active)
    finally:
        await store.close()


async def set_last_activity(url: str, last_active: dict[str, datetime]) -> None:
    engine = create_engine(url)
    try:
        async with engine.begin() as connection:
            for session_id, when in last_active.items():
                await connection.execute(update(sessions).where(sessions.c.id == session_id).values(last_activity=when))
    finally:
        await engine.dispose()


async def stored_ids(url: str) -> set[str]:
    engine = create_engine(url)
    try:
        async with engine.connect() as connection:
            return set((await connection.execute(select(sessions.c.id))).scalars())
    finally:
        await engine.dispose()


def wait_for(test: object, timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while not test():  # type: ignore[operator]
        assert time.monotonic() < deadline, "never happened"
        time.sleep(0.1)


def output(server: Server) -> str:
    """Stop the server (SIGTERM) and return what it printed."""
    server.process.terminate()
    return server.process.communicate(timeout=15)[0].decode()


@pytest.mark.process
@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)  # PostgreSQL: tests/store
def test_the_pass_at_start_deletes_old_sessions_and_says_so_and_a_running_one_is_never_deleted(
    start_server: ServerFactory, database_url: str, tmp_path: Path
) -> None:
    url = database_url
    if database_url.startswith("sqlite"):
        (tmp_path / "data").mkdir()
        url = f"sqlite:///{tmp_path / 'data' / 'webclient.sqlite3'}"
    now = datetime.now(UTC)
    asyncio.run(add_sessions(url, {"old": now - timedelta(days=45), "recent": now - timedelta(days=3)}))

    env = {"WEBCLIENT_KEEP_DAYS": "30", "WEBCLIENT_RETENTION_SECONDS": "0.3"}
    server, url = server_store(functools.partial(start_server, process=True), database_url, tmp_path, **env)
    wait_for(lambda: asyncio.run(stored_ids(url)) == {"recent"})

    # A session this server runs, idle and (as far as the store says) last active long ago, is kept pass after pass.
    running = httpx.post(at(server.url, "new_session"), headers=server.headers).headers["location"].rsplit("/", 1)[1]
    wait_for(lambda: running in asyncio.run(stored_ids(url)))
    asyncio.run(set_last_activity(url, {running: now - timedelta(days=60), "recent": now - timedelta(days=60)}))
    wait_for(lambda: asyncio.run(stored_ids(url)) == {running})  # "recent" is now old, and goes
    time.sleep(1)  # three more passes
    assert asyncio.run(stored_ids(url)) == {running}

    said = output(server)
    assert "the store deleted 1 session last active before" in said and "(WEBCLIENT_KEEP_DAYS=30): old" in said
    assert "(WEBCLIENT_KEEP_DAYS=30): recent" in said


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)  # PostgreSQL: tests/store
def test_a_session_past_its_cap_ends_its_journal_with_a_notice(
    start_server: ServerFactory, database_url: str, tmp_path: Path
) -> None:
    server, url = server_store(start_server, database_url, tmp_path, WEBCLIENT_MAX_SESSION_MB="0.001")
    session_id = asyncio.run(prompt_and_answer(server))  # the page goes on as ever
    stop_server(server)

    row, entries = asyncio.run(stored(url, session_id))
    assert row.state == "idle"  # the session's row follows the session to the server's stop, which is no end
    assert [entry.seq for entry in entries] == list(range(1, len(entries) + 1))
    *kept, last = entries
    assert sum(len(entry.body) for entry in kept) <= 1_000
    assert json.loads(kept[0].body)["method"] == "initialize"  # what fits is kept, from the start
    assert last.kind == "notice" and json.loads(last.body) == {
        "cut": last.seq,
        "why": "the journal of this session was cut at 0.001 MB: what came after is not stored",
    }
