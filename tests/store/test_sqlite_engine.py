"""The SQLite store's engine (`webclient.store.sqlite_engine`) behaves as the async engine did: a transaction commits
at the end or rolls back on an exception, rows are read off the event loop, a streamed query comes in parts, and a
connection whose caller was cancelled goes back to the pool."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from sqlalchemy import Connection, text

from webclient.store.database import create_engine
from webclient.store.sqlite_engine import SQLiteEngine

pytestmark = pytest.mark.asyncio


@pytest_asyncio.fixture
async def engine(tmp_path: Path) -> AsyncIterator[SQLiteEngine]:
    made = create_engine(f"sqlite:///{tmp_path / 'store.sqlite3'}")
    assert isinstance(made, SQLiteEngine)
    async with made.begin() as connection:
        await connection.execute(text("create table t (n integer)"))
    yield made
    await made.dispose()


async def numbers(engine: SQLiteEngine) -> list[int]:
    async with engine.connect() as connection:
        return list((await connection.execute(text("select n from t order by n"))).scalars())


async def test_a_transaction_commits_at_its_end_and_rolls_back_on_an_exception(engine: SQLiteEngine) -> None:
    async with engine.begin() as connection:
        await connection.execute(text("insert into t values (1)"))
    with pytest.raises(LookupError):
        async with engine.begin() as connection:
            await connection.execute(text("insert into t values (2)"))
            raise LookupError
    async with engine.connect() as connection:  # not committed: rolled back when given back
        await connection.execute(text("insert into t values (3)"))
    assert await numbers(engine) == [1]


async def test_rows_are_fetched_in_a_thread_and_read_from_memory(engine: SQLiteEngine) -> None:
    async with engine.begin() as connection:
        await connection.execute(text("insert into t values (:n)"), [{"n": n} for n in range(5)])
    stepped_on: list[str] = []

    async with engine.connect() as connection:
        # Every step of the statement is traced: the thread it runs in is the one that called the driver.
        await connection.run_sync(
            lambda sync: sync.connection.driver_connection.set_trace_callback(  # type: ignore[union-attr]
                lambda _sql: stepped_on.append(threading.current_thread().name)
            )
        )
        result = await connection.execute(text("select n from t order by n"))
        assert result.rowcount == -1
        assert result.first() == (0,)
        changed = await connection.execute(text("update t set n = n + 10 where n < 2"))
        assert changed.rowcount == 2
        await connection.run_sync(lambda sync: sync.connection.driver_connection.set_trace_callback(None))  # type: ignore[union-attr]
    assert stepped_on and threading.main_thread().name not in stepped_on


async def test_a_streamed_query_comes_in_parts(engine: SQLiteEngine) -> None:
    async with engine.begin() as connection:
        await connection.execute(text("insert into t values (:n)"), [{"n": n} for n in range(7)])
    async with engine.connect() as connection:
        streamed = await connection.stream(text("select n from t order by n"))
        parts = [[n for (n,) in part] async for part in streamed.partitions(3)]
    assert parts == [[0, 1, 2], [3, 4, 5], [6]]


async def test_a_cancelled_caller_gives_its_connection_back(engine: SQLiteEngine) -> None:
    started, release = threading.Event(), threading.Event()

    def slow(_: Connection) -> None:
        started.set()
        release.wait(5)

    async def use() -> None:
        async with engine.connect() as connection:
            await connection.run_sync(slow)

    for _ in range(20):  # more than the pool lends (5 kept, 10 more): each must come back
        task = asyncio.create_task(use())
        await asyncio.to_thread(started.wait, 5)
        task.cancel()
        release.set()  # the call ends after its caller has gone; the connection is given back then
        with pytest.raises(asyncio.CancelledError):
            await task
        started.clear()
        release.clear()
    assert await asyncio.wait_for(numbers(engine), 5) == []
