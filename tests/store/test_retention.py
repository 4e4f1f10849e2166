"""Retention on both databases: old sessions go, recent and live ones stay; the store-wide cap deletes the least
recently active first; a session's journal past its cap ends with a notice, and nothing more of it is stored."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import func, select, update

from webclient.session.agent_entry import AgentEntry
from webclient.session.agent_spec import AgentSpec
from webclient.store import retention as retention_module
from webclient.store.retention import MB, Limits, Retention
from webclient.store.schema import journal, sessions
from webclient.store.store import SessionJournal, Store

pytestmark = pytest.mark.migrated

SPEC = AgentSpec(AgentEntry("agent", ["my-agent"]), Path("/srv/project"))
NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


async def stored_sessions(store: Store) -> set[str]:
    async with store.engine.connect() as connection:
        return set((await connection.execute(select(sessions.c.id))).scalars())


async def journal_rows(store: Store, session_id: str | None = None) -> list[tuple[str, int, str, str]]:
    query = select(journal.c.session_id, journal.c.seq, journal.c.kind, journal.c.body).order_by(
        journal.c.session_id, journal.c.seq
    )
    if session_id is not None:
        query = query.where(journal.c.session_id == session_id)
    async with store.engine.connect() as connection:
        return [tuple(row) for row in await connection.execute(query)]  # type: ignore[misc]


async def make_session(
    store: Store, session_id: str, last_active: datetime, chars: int = 100, ended: bool = True
) -> None:
    """A stored session with ``chars`` characters of journal, last active then (ended, unless ``ended`` is False)."""
    recorder = store.open_journal(session_id, "mine", SPEC, last_active.timestamp())
    recorder.record("protocol", "in", "x" * chars)
    if ended:
        recorder.state("ended", None, None, 0)
    await recorder.flush()
    async with store.engine.begin() as connection:
        await connection.execute(update(sessions).where(sessions.c.id == session_id).values(last_activity=last_active))


@pytest.mark.asyncio
async def test_sessions_older_than_keep_days_are_deleted_with_their_journal_and_recent_and_live_ones_stay(
    database_url: str,
) -> None:
    store = await Store.open_url(database_url)
    try:
        await make_session(store, "old", NOW - timedelta(days=40))
        await make_session(store, "older", NOW - timedelta(days=400))
        await make_session(store, "recent", NOW - timedelta(days=2))
        await make_session(store, "running", NOW - timedelta(days=90), ended=False)  # this process runs it
        retention = Retention(store.engine, store.writer, Limits(keep_days=30))
        deleted = await retention.apply(now=NOW)
        assert [d.session_id for d in deleted] == ["older", "old"]  # least recently active first
        assert "WEBCLIENT_KEEP_DAYS=30" in deleted[0].why
        assert await stored_sessions(store) == {"recent", "running"}
        assert {row[0] for row in await journal_rows(store)} == {"recent", "running"}
        assert await retention.apply(now=NOW) == []  # nothing more to do

        # Once it ends it is no longer live, and its age counts.
        SessionJournal(store.writer, "running").state("ended", None, None, 0)
        await store.flush()
        async with store.engine.begin() as connection:
            old = NOW - timedelta(days=90)
            await connection.execute(update(sessions).where(sessions.c.id == "running").values(last_activity=old))
        assert [d.session_id for d in await retention.apply(now=NOW)] == ["running"]
    finally:
        await store.close()


@pytest.mark.asyncio
async def test_past_the_store_cap_the_least_recently_active_sessions_go_first_but_never_a_live_one(
    database_url: str,
) -> None:
    store = await Store.open_url(database_url)
    try:
        # 4 sessions of 300,000 characters each: 1.2 MB in all, 0.7 MB allowed.
        await make_session(store, "live", NOW - timedelta(days=9), 300_000, ended=False)
        await make_session(store, "a", NOW - timedelta(days=8), 300_000)
        await make_session(store, "b", NOW - timedelta(days=7), 300_000)
        await make_session(store, "c", NOW - timedelta(days=1), 300_000)
        retention = Retention(store.engine, store.writer, Limits(max_store_chars=int(0.7 * MB)))
        deleted = await retention.apply(now=NOW)
        assert [(d.session_id, d.chars) for d in deleted] == [("a", 300_000), ("b", 300_000)]
        assert "over WEBCLIENT_MAX_STORE_MB=0.7" in deleted[0].why
        assert await stored_sessions(store) == {"live", "c"}
        async with store.engine.connect() as connection:
            total = (await connection.execute(select(func.sum(func.length(journal.c.body))))).scalar_one()
        assert total == 600_000
        assert await retention.apply(now=NOW) == []
    finally:
        await store.close()


@pytest.mark.asyncio
async def test_a_journal_past_the_session_cap_ends_with_a_notice_and_nothing_after_it_is_stored(
    database_url: str,
) -> None:
    store = await Store.open_url(database_url)
    try:
        Retention(store.engine, store.writer, Limits(max_session_chars=1_000))
        big = store.open_journal("big", "mine", SPEC, NOW.timestamp())
        small = store.open_journal("small", "mine", SPEC, NOW.timestamp())
        for n in range(30):
            big.record("protocol", "in", f"{n:03d}" + "x" * 97)  # 100 characters each
            small.record("protocol", "in", "y")
        await store.flush()
        big.record("protocol", "in", "later" * 50)  # in another batch: still cut
        big.state("idle", "A title", None, 1)  # the session's row still follows
        await store.flush()

        rows = await journal_rows(store, "big")
        assert [seq for _, seq, _, _ in rows] == list(range(1, 12))  # 10 rows of 100 fit in 1,000; the 11th is cut
        _, seq, kind, body = rows[-1]
        notice = json.loads(body)
        assert (kind, notice["cut"]) == ("notice", 11)
        assert notice["why"] == "the journal of this session was cut at 0.001 MB: what came after is not stored"
        assert len(await journal_rows(store, "small")) == 30  # another session is not cut
        async with store.engine.connect() as connection:
            title = (await connection.execute(select(sessions.c.title).where(sessions.c.id == "big"))).scalar_one()
        assert title == "A title"
    finally:
        await store.close()


@pytest.mark.asyncio
async def test_a_journal_begun_before_a_restart_counts_what_it_already_holds(database_url: str) -> None:
    first = await Store.open_url(database_url)
    recorder = first.open_journal("resumed", "mine", SPEC, NOW.timestamp())
    for _ in range(8):
        recorder.record("protocol", "in", "z" * 100)
    await first.close()

    store = await Store.open_url(database_url)
    try:
        Retention(store.engine, store.writer, Limits(max_session_chars=1_000))
        store.writer._seqs["resumed"] = 8  # as a resumed session's journal goes on: numbered after what is stored
        for _ in range(5):
            store.writer.append("resumed", "protocol", "in", "z" * 100)
        await store.flush()
        rows = await journal_rows(store, "resumed")
        assert [kind for _, _, kind, _ in rows] == ["protocol"] * 10 + ["notice"]
    finally:
        await store.close()


@pytest.mark.asyncio
async def test_many_sessions_are_deleted_a_few_per_transaction(
    database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(retention_module, "BATCH_SESSIONS", 2)
    store = await Store.open_url(database_url)
    try:
        for n in range(5):
            await make_session(store, f"old-{n}", NOW - timedelta(days=100 + n))
        await make_session(store, "kept", NOW)
        deleted = await Retention(store.engine, store.writer, Limits(keep_days=1)).apply(now=NOW)
        assert [d.session_id for d in deleted] == [f"old-{n}" for n in reversed(range(5))]
        assert await stored_sessions(store) == {"kept"}
        assert {row[0] for row in await journal_rows(store)} == {"kept"}
    finally:
        await store.close()


@pytest.mark.asyncio
async def test_what_else_a_deleted_session_has_goes_with_it(database_url: str) -> None:
    store = await Store.open_url(database_url)
    try:
        await make_session(store, "old", NOW - timedelta(days=40))
        await make_session(store, "recent", NOW - timedelta(days=2))
        retention = Retention(store.engine, store.writer, Limits(keep_days=30))
        gone: list[str] = []
        retention.deleted = gone.extend  # the app gives it the checkpoints' (webclient.agents.checkpoint_stores)
        await retention.apply(now=NOW)
        assert gone == ["old"]
    finally:
        await store.close()
