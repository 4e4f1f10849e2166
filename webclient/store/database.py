"""Which database the store uses, the engine on it, and the check and migrations that bring it up to date.

A store that cannot be used stops the start with one `StoreError` line: which store (the URL with its password
hidden, or the SQLite file), what went wrong, and what to do. Before anything is written, `migrate` compares the
database's Alembic revision with the migrations this code has, and its tables and columns with `schema.metadata`:
a database a newer server wrote, or one whose tables do not match (made by hand, or left by another program), is
refused rather than written to, since every journal write would fail. Alembic itself (about 80 ms to import) is
imported only when a migration has to run: an up-to-date database is recognised with one query and the file names
of ``migrations/versions`` (``<revision>_<what>.py``; a test checks them against Alembic's own view).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar

import platformdirs
from sqlalchemy import Engine, event, inspect, text
from sqlalchemy import create_engine as create_sync_engine
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError

from webclient.config import Settings
from webclient.store.schema import metadata
from webclient.store.sqlite_engine import SQLiteConnection, SQLiteEngine

if TYPE_CHECKING:  # imported with asyncpg, for PostgreSQL only: it brings SQLAlchemy's ORM (6 MiB) and greenlet
    from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

Done = TypeVar("Done")

Database: TypeAlias = "AsyncEngine | SQLiteEngine"
"""The store's engine: SQLAlchemy's async engine on PostgreSQL (asyncpg), a `SQLiteEngine` on SQLite."""
DatabaseConnection: TypeAlias = "AsyncConnection | SQLiteConnection"
"""A connection of a `Database`."""

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
VERSIONS = MIGRATIONS / "versions"

ADVICE = (
    "choose another folder with --data-dir (WEBCLIENT_DATA_DIR), another database with WEBCLIENT_DATABASE_URL, "
    "or start without a store with WEBCLIENT_STORE=off"
)
MIGRATION_LOCK = 0x77656263_6C69656E >> 1
"""PostgreSQL's advisory lock (a 64-bit key of our own) held while one instance checks and migrates the tables."""
IDLE_IN_TRANSACTION_MS = 10_000
"""How long PostgreSQL lets a transaction wait on its client before it ends it (and lets go of its locks)."""
CONNECT_SECONDS = 10
"""How long a PostgreSQL server has to accept the connection at start (asyncpg waits a minute by default)."""


class StoreError(ValueError):
    """The store cannot be used; the message says which, what went wrong and what to do, in one line (a setting
    to change, like the other `ValueError`s the command line reports at start)."""


def engine_url(url: str) -> str:
    """A database URL as a user writes it (``postgresql://user@host/db``), with the driver named: asyncpg for
    PostgreSQL, the standard library's for SQLite (``sqlite+aiosqlite://``, which the store once used, is read as
    ``sqlite://``).

    Raises:
        StoreError: the URL cannot be read, or names a database the store does not run on.
    """
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise StoreError(
            f"WEBCLIENT_DATABASE_URL is not a database URL (postgresql://user@host/db); {ADVICE}"
        ) from None
    if parsed.drivername in ("postgresql", "postgres"):
        parsed = parsed.set(drivername="postgresql+asyncpg")
    elif parsed.drivername in ("sqlite+aiosqlite", "sqlite+pysqlite"):
        parsed = parsed.set(drivername="sqlite")
    elif parsed.drivername not in ("postgresql+asyncpg", "sqlite"):
        raise StoreError(
            f"{describe(url)}: the store runs on PostgreSQL (postgresql://) or SQLite (sqlite:///FILE), "
            f"not {parsed.drivername}; {ADVICE}"
        )
    return parsed.render_as_string(hide_password=False)


def describe(url: str) -> str:
    """The store a URL names, for a message: the SQLite file, or the URL with its password hidden."""
    try:
        parsed = make_url(url)
    except ArgumentError:
        return "the store's URL"
    if parsed.get_backend_name() == "sqlite":
        return f"the SQLite store {parsed.database}"
    as_written = parsed.set(drivername=parsed.get_backend_name())  # without the driver this code adds
    return f"the store at {as_written.render_as_string(hide_password=True)}"


def database_url(settings: Settings) -> str:
    """The store's URL: ``WEBCLIENT_DATABASE_URL`` (PostgreSQL), else SQLite in the data folder (created if needed).

    Raises:
        StoreError: the data folder cannot be made.
    """
    if settings.database_url:
        return engine_url(settings.database_url)
    folder = settings.data_dir or Path(platformdirs.user_data_dir("acp-webclient"))
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)  # the journal holds all that was said: the user's only
    except OSError as error:
        raise StoreError(f"the data folder {folder} cannot be made ({error.strerror or error}); {ADVICE}") from None
    return f"sqlite:///{folder / 'webclient.sqlite3'}"


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    # Write-ahead logging lets readers (the log page, history) read while the journal writes; NORMAL syncs at
    # checkpoints only, which WAL keeps safe from corruption (a power cut may lose the last batches).
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def create_engine(url: str) -> Database:
    """The engine on the store at ``url``: a `SQLiteEngine` on SQLite, the async engine on PostgreSQL."""
    url = engine_url(url)
    if make_url(url).get_backend_name() == "sqlite":
        return SQLiteEngine(_sqlite_engine(url))
    return _postgresql_engine(url)


def _postgresql_engine(url: str) -> AsyncEngine:
    from sqlalchemy.ext.asyncio import create_async_engine

    # A transaction left open by a client that went away without a word (a broken link: no reset ever comes) would
    # hold its locks for hours, a session's lease among them: PostgreSQL ends it once it has waited this long.
    settings = {"idle_in_transaction_session_timeout": str(IDLE_IN_TRANSACTION_MS)}
    return create_async_engine(engine_url(url), connect_args={"timeout": CONNECT_SECONDS, "server_settings": settings})


def _sqlite_engine(url: str) -> Engine:
    """A synchronous engine on the SQLite store at ``url``, with the standard library's driver."""
    engine = create_sync_engine(engine_url(url))
    event.listen(engine, "connect", _sqlite_pragmas)
    return engine


class ThreadConnection:
    """A thread of its own with a connection of its own to the store at ``url``, for work that must not wait on the
    event loop nor hold it: the journal's writes (`webclient.store.journal_sink`) and the history's reads
    (`webclient.store.store.Store.history`). SQLite goes through the standard library's driver; PostgreSQL through
    asyncpg on the thread's own event loop, with SQLAlchemy's sync API over it. One thread: work runs one at a time."""

    def __init__(self, url: str, name: str) -> None:
        self.url = url
        self.sqlite = make_url(url).get_backend_name() == "sqlite"
        self._thread = ThreadPoolExecutor(1, thread_name_prefix=name)
        self._engine: Engine | None = None
        self._async_engine: AsyncEngine | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def run(self, work: Callable[[Connection], Done], *, transaction: bool) -> Done:
        """What ``work`` returns, run in the thread on the connection (in one transaction, committed, when asked).

        Raises:
            Exception: whatever the database or its driver raised (a transaction is then rolled back).
        """
        return await asyncio.get_running_loop().run_in_executor(self._thread, self._run, work, transaction)

    def call_soon(self, work: Callable[[], None]) -> None:
        """Run ``work`` in the thread, after what is queued, without waiting (nothing once closed)."""
        with contextlib.suppress(RuntimeError):  # closed
            self._thread.submit(work)

    async def close(self) -> None:
        await asyncio.get_running_loop().run_in_executor(self._thread, self._dispose)
        self._thread.shutdown()

    # -- in the thread ------------------------------------------------------------------------------

    def _run(self, work: Callable[[Connection], Done], transaction: bool) -> Done:
        if self.sqlite:
            if self._engine is None:
                self._engine = _sqlite_engine(self.url)
            with self._engine.begin() if transaction else self._engine.connect() as connection:
                return work(connection)
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
            self._async_engine = _postgresql_engine(self.url)
        return self._loop.run_until_complete(self._run_async(work, transaction))

    async def _run_async(self, work: Callable[[Connection], Done], transaction: bool) -> Done:
        assert self._async_engine is not None
        async with self._async_engine.begin() if transaction else self._async_engine.connect() as connection:
            return await connection.run_sync(work)

    def _dispose(self) -> None:
        if self._engine is not None:
            self._engine.dispose()
        if self._loop is not None:
            assert self._async_engine is not None
            self._loop.run_until_complete(self._async_engine.dispose())
            self._loop.close()


def known_revisions() -> list[str]:
    """The revisions of ``migrations/versions``, oldest first, read from the file names (no Alembic import)."""
    return sorted(m.group(1) for p in VERSIONS.glob("*.py") if (m := re.match(r"([0-9a-z]+)_\w+\.py$", p.name)))


def _revisions(connection: Connection) -> list[str] | None:
    """The database's Alembic revisions, or None when it has no ``alembic_version`` table."""
    if not inspect(connection).has_table("alembic_version"):
        return None
    return [str(r) for r in connection.execute(text("select version_num from alembic_version")).scalars()]


def _upgrade(connection: Connection) -> None:
    from alembic import command  # here: 80 ms to import, only when there is something to migrate
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    command.upgrade(config, "head")


def _unknown_revisions(revisions: list[str]) -> list[str]:
    """Which of ``revisions`` no migration of this code made (asked of Alembic, for a database not up to date)."""
    from alembic.script import ScriptDirectory
    from alembic.util import CommandError

    scripts = ScriptDirectory(str(MIGRATIONS))
    unknown = []
    for revision in revisions:
        try:
            if scripts.get_revision(revision) is None:
                unknown.append(revision)
        except CommandError:
            unknown.append(revision)
    return unknown


def _mismatch(connection: Connection) -> list[str]:
    """What the database lacks of `schema.metadata`: whole tables, or columns of a table."""
    inspector = inspect(connection)
    tables = set(inspector.get_table_names())
    missing = []
    for table in metadata.sorted_tables:
        if table.name not in tables:
            missing.append(f"table {table.name}")
            continue
        present = {column["name"] for column in inspector.get_columns(table.name)}
        lacking = [column.name for column in table.columns if column.name not in present]
        if lacking:
            missing.append(f"columns {', '.join(lacking)} of table {table.name}")
    return missing


def _prepare(connection: Connection, where: str) -> None:
    revisions = _revisions(connection)
    known = known_revisions()
    if revisions is None:
        ours = sorted(set(inspect(connection).get_table_names()) & set(metadata.tables))
        if ours:
            raise StoreError(
                f"{where} has tables ({', '.join(ours)}) but no alembic_version table: they were made by hand or by "
                f"another program, and this server will not write to them; {ADVICE}"
            )
        _upgrade(connection)
    elif revisions != known[-1:]:
        unknown = _unknown_revisions(revisions)
        if unknown:
            raise StoreError(
                f"{where} is at revision {', '.join(unknown)}, newer than this server knows (its newest is "
                f"{known[-1]}): a newer version of the web client wrote it. Upgrade this one, or {ADVICE}"
            )
        _upgrade(connection)
    missing = _mismatch(connection)
    if missing:
        raise StoreError(
            f"{where} says it is at revision {', '.join(_revisions(connection) or [])} but lacks "
            f"{'; '.join(missing)}: it was changed by hand or by another program; {ADVICE}"
        )


def _reason(error: BaseException) -> str:
    """What went wrong, in the driver's words, without SQLAlchemy's statement and link."""
    cause = error.orig if isinstance(error, DBAPIError) and error.orig is not None else error
    said = str(cause).strip().splitlines()[0] if str(cause).strip() else type(cause).__name__
    return said.removeprefix("[Errno 111] ")


async def migrate(engine: Database) -> None:
    """Check the database and bring its tables up to the newest migration (an empty database gets them all).

    Raises:
        StoreError: the database cannot be reached or opened, was written by a newer server, or its tables do not
            match this code's.
    """
    where = describe(engine.url.render_as_string(hide_password=False))
    try:
        async with engine.begin() as connection:
            if engine.url.get_backend_name() == "postgresql":
                # Instances of one service start together: one migrates, the others wait, then find it done.
                await connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK})
            await connection.run_sync(_prepare, where)
    except StoreError:
        raise
    except Exception as error:  # whatever the driver raises, one line says it at start
        raise StoreError(f"{where} cannot be opened: {_reason(error)}; {ADVICE}") from error


async def check(url: str) -> None:
    """Open the store at ``url`` once and bring it up to date, then let it go (the command line's check at start).

    Raises:
        StoreError: as `migrate`.
    """
    engine = create_engine(url)
    try:
        await migrate(engine)
    finally:
        await engine.dispose()
