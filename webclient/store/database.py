"""Which database the store uses, the async engine on it, and the migrations that bring it up to date."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import platformdirs
from alembic import command
from alembic.config import Config
from sqlalchemy import event
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from webclient.config import Settings

MIGRATIONS = Path(__file__).resolve().parent / "migrations"


def engine_url(url: str) -> str:
    """A database URL as a user writes it (``postgresql://user@host/db``), with the async driver named."""
    parsed = make_url(url)
    if parsed.drivername in ("postgresql", "postgres"):
        parsed = parsed.set(drivername="postgresql+asyncpg")
    elif parsed.drivername == "sqlite":
        parsed = parsed.set(drivername="sqlite+aiosqlite")
    return parsed.render_as_string(hide_password=False)


def database_url(settings: Settings) -> str:
    """The store's URL: ``WEBCLIENT_DATABASE_URL`` (PostgreSQL), else SQLite in the data folder (created if needed)."""
    if settings.database_url:
        return engine_url(settings.database_url)
    folder = settings.data_dir or Path(platformdirs.user_data_dir("acp-webclient"))
    folder.mkdir(parents=True, exist_ok=True)
    return f"sqlite+aiosqlite:///{folder / 'webclient.sqlite3'}"


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    # Write-ahead logging lets readers (the log page, history) read while the journal writes; NORMAL syncs at
    # checkpoints only, which WAL keeps safe from corruption (a power cut may lose the last batches).
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def create_engine(url: str) -> AsyncEngine:
    engine = create_async_engine(engine_url(url))
    if engine.dialect.name == "sqlite":
        event.listen(engine.sync_engine, "connect", _sqlite_pragmas)
    return engine


def _upgrade(connection: Connection) -> None:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    command.upgrade(config, "head")


async def migrate(engine: AsyncEngine) -> None:
    """Bring the database's tables up to the newest migration (an empty database gets them all)."""
    async with engine.begin() as connection:
        await connection.run_sync(_upgrade)
