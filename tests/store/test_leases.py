"""Who runs which session when several instances share one PostgreSQL (`webclient.store.leases`), against the real
database: a lease is taken once, held until it expires, then taken over; the journal writer's fence sees only the
leases its instance holds; and an instance cut off in the middle of a write does not keep its lease locked."""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from datetime import UTC, datetime

import pytest
from sqlalchemy import insert, text
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.support.postgres import Cluster
from webclient.store import leases
from webclient.store.database import create_engine, migrate
from webclient.store.leases import Held, Taken
from webclient.store.schema import sessions


async def database(postgresql: Cluster) -> AsyncEngine:
    engine = create_engine(postgresql.new_database())
    await migrate(engine)
    assert isinstance(engine, AsyncEngine)
    return engine


async def a_session(engine: AsyncEngine, state: str = "idle") -> str:
    session_id, now = secrets.token_urlsafe(9), datetime.now(UTC)
    row = {"id": session_id, "agent": "demo", "agent_command": "demo", "workspace": "/w", "created": now}
    async with engine.begin() as connection:
        await connection.execute(insert(sessions).values(**row, last_activity=now, state=state, owner="alice"))
    return session_id


@pytest.mark.asyncio
async def test_a_lease_is_taken_once_held_until_it_expires_then_taken_over(postgresql: Cluster) -> None:
    engine = await database(postgresql)
    try:
        await leases.register(engine, "a", "http://a:8000")
        await leases.register(engine, "b", "http://b:8000")
        session_id = await a_session(engine)
        taken = await asyncio.gather(*(leases.take(engine, session_id, me, 0.5) for me in ("a", "b")))
        assert sorted(type(got).__name__ for got in taken) in (["Held", "Taken"], ["NoneType", "Taken"])
        holder = "a" if isinstance(taken[0], Taken) else "b"
        other = "b" if holder == "a" else "a"
        assert await leases.take(engine, session_id, other, 0.5) == Held(holder, f"http://{holder}:8000")
        assert await leases.take(engine, "no-such-session", other, 0.5) is None
        await asyncio.sleep(0.6)  # not renewed: expired
        assert await leases.take(engine, session_id, other, 0.5) == Taken(f"http://{holder}:8000", "idle")
        held, alive = await leases.heartbeat(engine, holder, 0.5, False, 0, 0)
        assert held == set()  # the former holder learns it lost the lease
        assert holder in {instance.id for instance in alive}  # itself, beating now
    finally:
        await engine.dispose()


@pytest.mark.asyncio
async def test_the_fence_sees_the_leases_of_this_instance_alone_and_counts_follow_them(postgresql: Cluster) -> None:
    engine = await database(postgresql)
    try:
        await leases.register(engine, "a", None)
        mine, theirs, ended = await a_session(engine), await a_session(engine, "running"), await a_session(engine)
        assert isinstance(await leases.take(engine, mine, "a", 30), Taken)
        assert isinstance(await leases.take(engine, theirs, "b", 30), Taken)
        async with engine.begin() as connection:
            fenced = await connection.run_sync(lambda sync: leases.fenced(sync, "a", [mine, theirs, ended]))
        assert fenced == {mine}
        assert await leases.running(engine) == {"a": 1, "b": 1}
        assert await leases.owned_elsewhere(engine, "a", "alice") == (1, 1)  # b's, running
        assert await leases.owned_elsewhere(engine, "b", "alice") == (1, 1)  # a's, idle: live, its agent running
        await leases.release(engine, "a", [mine])
        assert await leases.running(engine) == {"b": 1}
    finally:
        await engine.dispose()


@pytest.mark.slow
@pytest.mark.asyncio
async def test_an_instance_cut_off_in_the_middle_of_a_write_does_not_keep_the_lease_locked(
    postgresql: Cluster,
) -> None:
    """Its transaction (the journal writer's, with the lease locked FOR SHARE) never ends from its side: a takeover
    does not wait on it (1 s), and PostgreSQL ends that transaction after `IDLE_IN_TRANSACTION_MS`."""
    engine = await database(postgresql)
    cut_off = create_engine(engine.url.render_as_string(hide_password=False))
    assert isinstance(cut_off, AsyncEngine)
    try:
        session_id = await a_session(engine)
        assert isinstance(await leases.take(engine, session_id, "a", 0.3), Taken)
        stuck = await cut_off.connect()
        await stuck.begin()
        await stuck.run_sync(lambda sync: leases.fenced(sync, "a", [session_id]))  # ...and then nothing more
        await asyncio.sleep(0.4)  # its lease expired
        began = time.monotonic()
        with pytest.raises(Exception, match="lock"):
            await leases.take(engine, session_id, "b", 8)
        assert time.monotonic() - began < 3
        deadline = time.monotonic() + 15
        while True:
            try:
                got = await leases.take(engine, session_id, "b", 8)
            except Exception:  # still locked
                got = None
            if isinstance(got, Taken):
                break
            assert time.monotonic() < deadline, "the cut-off transaction kept the lease locked"
            await asyncio.sleep(0.5)
        async with engine.connect() as connection:
            query = text("SELECT instance FROM session_leases WHERE session_id = :id")
            holder = await connection.scalar(query, {"id": session_id})
        assert holder == "b"
        with contextlib.suppress(Exception):  # PostgreSQL ended its transaction, and its connection with it
            await stuck.close()
    finally:
        await cut_off.dispose()
        await engine.dispose()
