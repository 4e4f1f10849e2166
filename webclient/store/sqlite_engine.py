"""The store's engine on SQLite: SQLAlchemy Core's sync engine over the standard library's driver, each call run in a
small pool of threads, with the part of `sqlalchemy.ext.asyncio.AsyncEngine`'s API that the store uses.

`sqlalchemy.ext.asyncio` imports SQLAlchemy's ORM (which the store does not use) and greenlet, and aiosqlite keeps a
thread for each pooled connection besides: about 8 MiB of an idle server's memory. PostgreSQL keeps the async engine
(asyncpg has no thread to hand work to); `webclient.store.database.create_engine` picks one by the URL.

A connection's calls run one after another, each in whichever thread of the pool is free (SQLite's driver lets a
connection move between threads once the pool owns it, and SQLAlchemy sets that up for a file). What a statement
returns is fetched in the thread, so that the caller's `CursorResult` reads rows from memory on the event loop, as
the async engine's do.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import Any, TypeVar

from sqlalchemy import Engine
from sqlalchemy.engine import URL, Connection, CursorResult, Dialect, Row
from sqlalchemy.engine.cursor import FullyBufferedCursorFetchStrategy
from sqlalchemy.sql import Executable
from sqlalchemy.util.typing import TupleAny

Done = TypeVar("Done")

THREADS = 15
"""At most one thread for each connection the pool lends at once (SQLAlchemy's QueuePool: 5 kept, 10 more), so that
a connection waiting for the pool never holds up the ones that would give theirs back. They start as needed: an idle
server has one."""


class SQLiteEngine:
    """A sync engine whose calls run in threads, used from the event loop as an `AsyncEngine` is."""

    def __init__(self, sync_engine: Engine) -> None:
        self.sync_engine = sync_engine
        self._threads: concurrent.futures.ThreadPoolExecutor | None = None

    @property
    def url(self) -> URL:
        return self.sync_engine.url

    @property
    def dialect(self) -> Dialect:
        return self.sync_engine.dialect

    def submit(self, work: Callable[[], Done]) -> concurrent.futures.Future[Done]:
        if self._threads is None:
            self._threads = concurrent.futures.ThreadPoolExecutor(THREADS, thread_name_prefix="sqlite")
        return self._threads.submit(work)

    @contextlib.asynccontextmanager
    async def connect(self) -> AsyncIterator[SQLiteConnection]:
        """A connection from the pool, given back (what it did not commit rolled back) at the end."""
        checkout = self.submit(self.sync_engine.connect)
        try:
            connection = SQLiteConnection(self, await asyncio.wrap_future(checkout))
        except asyncio.CancelledError:
            checkout.add_done_callback(_close_unused)  # the thread may be taking one from the pool: give it back
            raise
        try:
            yield connection
        finally:
            await connection.close()

    @contextlib.asynccontextmanager
    async def begin(self) -> AsyncIterator[SQLiteConnection]:
        """A connection in a transaction, committed at the end unless an exception ends it (then rolled back)."""
        async with self.connect() as connection:
            yield connection
            await connection.commit()

    async def dispose(self) -> None:
        """Close the pool's connections and let the threads end (the next call starts them again)."""
        threads, self._threads = self._threads, None
        if threads is not None:
            await asyncio.wrap_future(threads.submit(self.sync_engine.dispose))
            threads.shutdown(wait=False)  # idle now, but for work whose caller was cancelled: it ends on its own
        else:
            self.sync_engine.dispose()


class SQLiteConnection:
    """A pooled connection of a `SQLiteEngine`, used from the event loop as an `AsyncConnection` is."""

    def __init__(self, engine: SQLiteEngine, sync_connection: Connection) -> None:
        self.engine = engine
        self.sync_connection = sync_connection
        self._last: concurrent.futures.Future[Any] | None = None

    @property
    def dialect(self) -> Dialect:
        return self.engine.dialect

    async def _call(self, work: Callable[[], Done]) -> Done:
        self._last = self.engine.submit(work)
        return await asyncio.wrap_future(self._last)

    async def execute(self, statement: Executable, parameters: Any = None) -> CursorResult[*TupleAny]:
        """What the statement returns, its rows (if any) already fetched."""
        return await self._call(functools.partial(_execute_fetched, self.sync_connection, statement, parameters))

    async def run_sync(self, work: Callable[..., Done], *args: Any, **kwargs: Any) -> Done:
        """``work(sync_connection, *args, **kwargs)``, run in a thread."""
        return await self._call(functools.partial(work, self.sync_connection, *args, **kwargs))

    async def stream(self, statement: Executable) -> SQLiteStream:
        """The statement's rows, to be read in parts (`SQLiteStream.partitions`), each fetched in a thread."""
        return SQLiteStream(self, await self._call(functools.partial(self.sync_connection.execute, statement)))

    async def commit(self) -> None:
        await self._call(self.sync_connection.commit)

    async def close(self) -> None:
        # After the last call, even one whose caller was cancelled while it ran; then back to the pool (rolled back).
        last = self._last
        await asyncio.shield(asyncio.wrap_future(self.engine.submit(functools.partial(_close_after, self, last))))


class SQLiteStream:
    """Rows a `SQLiteConnection.stream` read: `partitions` fetches each part in a thread, as the caller asks."""

    def __init__(self, connection: SQLiteConnection, result: CursorResult[*TupleAny]) -> None:
        self.connection = connection
        self.result = result

    async def partitions(self, size: int) -> AsyncIterator[Sequence[Row[*TupleAny]]]:
        parts: Iterator[Sequence[Row[*TupleAny]]] = self.result.partitions(size)
        while (part := await self.connection._call(functools.partial(next, parts, None))) is not None:
            yield part


def _execute_fetched(connection: Connection, statement: Executable, parameters: Any) -> CursorResult[*TupleAny]:
    result = connection.execute(statement, parameters)
    if result.returns_rows:
        # The rows are read here, in the thread; the result then hands them out from memory (as the async engine's
        # do), so that no call on the event loop steps SQLite.
        result.cursor_strategy = FullyBufferedCursorFetchStrategy(result.cursor)
    return result


def _close_after(connection: SQLiteConnection, last: concurrent.futures.Future[Any] | None) -> None:
    if last is not None:
        concurrent.futures.wait([last])
    connection.sync_connection.close()


def _close_unused(checkout: concurrent.futures.Future[Connection]) -> None:
    if not checkout.cancelled() and checkout.exception() is None:
        checkout.result().close()
