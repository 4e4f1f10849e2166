"""The store on both databases: migrations on an empty one, the writer's batches, flush, and its memory bound."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, event, inspect, select, text

from webclient.session.agent_entry import AgentEntry
from webclient.session.agent_spec import AgentSpec
from webclient.store.schema import journal, sessions
from webclient.store.store import Store

SPEC = AgentSpec(AgentEntry("agent", ["my-agent", "--acp"]), Path("/srv/project"))


async def rows(store: Store, session_id: str) -> list[tuple[int, str, str, str]]:
    async with store.engine.connect() as connection:
        result = await connection.execute(
            select(journal.c.seq, journal.c.kind, journal.c.direction, journal.c.body)
            .where(journal.c.session_id == session_id)
            .order_by(journal.c.seq)
        )
        return [tuple(row) for row in result]  # type: ignore[misc]


@pytest.mark.asyncio
async def test_migrations_make_the_tables_on_an_empty_database_and_run_again_as_a_no_op(database_url: str) -> None:
    store = await Store.open_url(database_url)
    try:
        async with store.engine.connect() as connection:
            tables = await connection.run_sync(lambda sync: set(inspect(sync).get_table_names()))
            version = (await connection.execute(text("select version_num from alembic_version"))).scalar_one()
        made = {"sessions", "journal", "folders", "signins_started", "instances", "session_leases", "mcp_servers"}
        assert made <= tables
        assert version == "0009"
    finally:
        await store.close()
    again = await Store.open_url(database_url)  # the next start finds the tables up to date
    await again.close()


@pytest.mark.asyncio
@pytest.mark.migrated
async def test_many_records_go_in_few_transactions_and_flush_waits_for_them(database_url: str) -> None:
    store = await Store.open_url(database_url)
    try:
        recorder = store.open_journal("s1", "mine", SPEC, 1_700_000_000.0)
        for n in range(10_000):
            recorder.record("protocol", "in", json.dumps({"n": n}))
        await recorder.flush()
        # One transaction per full batch (5,000 rows) at most, not one per record.
        assert store.writer.transactions <= 3
        stored = await rows(store, "s1")
        assert [seq for seq, *_ in stored] == list(range(1, 10_001))
        assert [json.loads(body)["n"] for *_, body in stored] == list(range(10_000))
        async with store.engine.connect() as connection:
            row = (await connection.execute(select(sessions).where(sessions.c.id == "s1"))).one()
        assert (row.agent, row.agent_command, row.workspace, row.state) == (
            "mine",
            "my-agent --acp",
            "/srv/project",
            "starting",
        )
        assert row.last_activity >= row.created

        recorder.state("idle", "Fix the tests", "Scripted agent", 1)
        recorder.record("action", "user", '{"action": "stop"}')
        await recorder.flush()  # what was recorded before flush() is in the database when it returns
        async with store.engine.connect() as connection:
            row = (await connection.execute(select(sessions).where(sessions.c.id == "s1"))).one()
        assert (row.state, row.title, row.agent_name) == ("idle", "Fix the tests", "Scripted agent")
        assert (await rows(store, "s1"))[-1] == (10_001, "action", "user", '{"action": "stop"}')
        await recorder.flush()  # nothing pending: returns at once
    finally:
        await store.close()


@pytest.mark.asyncio
@pytest.mark.migrated
async def test_records_past_the_bound_are_dropped_and_a_notice_says_how_many(database_url: str) -> None:
    store = await Store.open_url(database_url)
    try:
        store.writer.max_rows = 10
        recorder = store.open_journal("s2", "mine", SPEC, 1_700_000_000.0)
        for n in range(25):  # the writer cannot run in between: the database is "too slow"
            recorder.record("terminal", "agent", str(n))
        await recorder.flush()
        stored = await rows(store, "s2")
        assert [seq for seq, *_ in stored[:10]] == list(range(1, 11))
        seq, kind, direction, body = stored[10]
        assert (seq, kind, direction, json.loads(body)["dropped"]) == (26, "notice", "store", 15)
    finally:
        await store.close()


@pytest.mark.asyncio
@pytest.mark.migrated
async def test_close_writes_what_is_pending(database_url: str) -> None:
    store = await Store.open_url(database_url)
    recorder = store.open_journal("s3", "mine", SPEC, 1_700_000_000.0)
    recorder.record("protocol", "out", '{"jsonrpc":"2.0","method":"session/cancel"}')
    await store.close()
    reopened = await Store.open_url(database_url)
    try:
        assert await rows(reopened, "s3") == [(1, "protocol", "out", '{"jsonrpc":"2.0","method":"session/cancel"}')]
    finally:
        await reopened.close()


@pytest.mark.asyncio
@pytest.mark.migrated
async def test_lone_surrogates_and_nul_are_stored_as_json_escapes(database_url: str) -> None:
    store = await Store.open_url(database_url)
    try:
        recorder = store.open_journal("s4", "mine", SPEC, 1_700_000_000.0)
        line = json.dumps({"text": "caf\udce9 \ud800 \x00 é"}, ensure_ascii=False)
        recorder.record("protocol", "in", line)
        recorder.state("idle", "bad \udcff title", None, 0)
        await recorder.flush()
        [(_, _, _, body)] = await rows(store, "s4")
        assert json.loads(body) == {"text": "caf\udce9 \ud800 \x00 é"}  # the same characters come back
        async with store.engine.connect() as connection:
            title = (await connection.execute(select(sessions.c.title).where(sessions.c.id == "s4"))).scalar_one()
        assert title == "bad \\udcff title"
    finally:
        await store.close()


@pytest.mark.asyncio
@pytest.mark.migrated
async def test_the_event_loop_runs_no_statement_of_the_journal(database_url: str) -> None:
    # Building and running a batch cost the event loop about 0.2 ms per 4 KiB row: the sink's thread does it all.
    loop_thread = threading.current_thread()
    WRITES = ("INSERT INTO sessions", "INSERT INTO journal", "UPDATE sessions")
    on_the_loop: list[str] = []

    def executing(_connection: Any, _cursor: Any, statement: str, *_: Any) -> None:
        if threading.current_thread() is loop_thread and statement.startswith(WRITES):
            on_the_loop.append(statement)

    store = await Store.open_url(database_url)
    event.listen(Engine, "before_cursor_execute", executing)
    try:
        recorder = store.open_journal("s5", "mine", SPEC, 1_700_000_000.0)
        for n in range(300):
            recorder.record("protocol", "in", json.dumps({"n": n}))
        recorder.state("idle", "A title", None, 1)
        await recorder.flush()
        assert [seq for seq, *_ in await rows(store, "s5")] == list(range(1, 301))
        assert on_the_loop == []
    finally:
        event.remove(Engine, "before_cursor_execute", executing)
        await store.close()


@pytest.mark.asyncio
@pytest.mark.migrated
async def test_a_backlog_is_written_in_bounded_batches_one_after_the_other(database_url: str) -> None:
    store = await Store.open_url(database_url)
    try:
        store.writer.batch_rows = 100
        store.writer.batch_chars = 1_000
        recorder = store.open_journal("s6", "mine", SPEC, 1_700_000_000.0)
        transactions = store.writer.transactions
        for n in range(250):  # taken while the writer cannot run: one backlog
            recorder.record("protocol", "in", json.dumps({"n": n}))
        recorder.record("protocol", "in", "x" * 3_000)  # past batch_chars alone: a batch of its own
        await recorder.flush()
        # 100 rows (890 characters), 100 (1,000), 50, and the long one alone.
        assert store.writer.transactions - transactions == 4
        assert [seq for seq, *_ in await rows(store, "s6")] == list(range(1, 252))
    finally:
        await store.close()
