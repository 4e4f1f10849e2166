"""Retention: the store's limits on age and size, applied at start and then every ``WEBCLIENT_RETENTION_SECONDS``.

Three limits, each off at 0:

- ``WEBCLIENT_KEEP_DAYS``: sessions last active longer ago are deleted (their journal with them).
- ``WEBCLIENT_MAX_STORE_MB``: while the journals hold more text than this in all, whole sessions are deleted, the
  least recently active first.
- ``WEBCLIENT_MAX_SESSION_MB``: applied as the journal is written (`JournalWriter.session_cap`): a session past it
  gets one ``notice`` row saying from which record its journal is cut, and nothing more. Cutting the journal's end,
  never its middle, keeps what is stored replayable: the rebuilt thread ends with the notice.

A session this process is running (`JournalWriter.live`) is never deleted. Sizes are characters of journal text
(``length(body)``, which both databases count alike; bytes for ASCII); the database's own overhead is not counted,
and SQLite reuses the pages of deleted rows rather than shrinking its file. Each deletion is logged: which sessions,
how old or how large, and which limit.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Column, delete, func, select

from webclient.config import Settings
from webclient.store.database import Database, DatabaseConnection
from webclient.store.journal import JournalWriter
from webclient.store.schema import journal, metadata, sessions

log = logging.getLogger(__name__)

MB = 1_000_000
"""Characters of journal text per MB of a limit."""
BATCH_SESSIONS = 100
BATCH_CHARS = 20 * MB
"""At most so many sessions, or journal characters, are deleted per transaction: a long delete would hold SQLite's
one writer, and the journal's batches would wait for it."""


@dataclass(frozen=True)
class Limits:
    keep_days: float = 0.0
    max_session_chars: int = 0
    max_store_chars: int = 0

    @classmethod
    def from_settings(cls, settings: Settings) -> Limits:
        return cls(settings.keep_days, int(settings.max_session_mb * MB), int(settings.max_store_mb * MB))


@dataclass(frozen=True)
class Deleted:
    """A session retention deleted, and why."""

    session_id: str
    last_activity: datetime
    chars: int
    why: str


def _ids(deleted: Sequence[Deleted], most: int = 20) -> str:
    shown = ", ".join(d.session_id for d in deleted[:most])
    return shown + (f" and {len(deleted) - most} more" if len(deleted) > most else "")


def _referring() -> list[Column[Any]]:
    """The columns of `schema.metadata` whose foreign key names a session."""
    return [
        key.parent
        for table in reversed(metadata.sorted_tables)
        for key in table.foreign_keys
        if key.column is sessions.c.id
    ]


async def delete_sessions(connection: DatabaseConnection, session_ids: Sequence[str]) -> None:
    """Delete sessions and everything that refers to them, in the transaction of ``connection``."""
    # What refers to the sessions (their journal, ...) would go with them (ON DELETE CASCADE); deleted first,
    # explicitly, it goes whatever its foreign key says.
    for column in _referring():
        await connection.execute(delete(column.table).where(column.in_(session_ids)))
    await connection.execute(delete(sessions).where(sessions.c.id.in_(session_ids)))


class Retention:
    """Applies the limits to one store: `apply` once, or `start` a task that applies them now and periodically."""

    def __init__(self, engine: Database, writer: JournalWriter, limits: Limits, interval: float = 3600.0) -> None:
        self.engine = engine
        self.writer = writer
        self.limits = limits
        self.interval = interval
        self._task: asyncio.Task[None] | None = None
        writer.session_cap = limits.max_session_chars or None
        self.deleted: Callable[[Sequence[str]], None] | None = None
        """What else goes with the sessions it deleted (their checkpoints: `webclient.agents.checkpoint_stores`)."""
        self.deleting: Callable[[Sequence[str]], Awaitable[None]] | None = None
        """What must be read of sessions before they are deleted, their journal with them (where their worktrees
        are: `webclient.agents.session_worktrees.RetiredWorktrees`), for ``deleted`` to let go of it after."""

    @classmethod
    def start(cls, engine: Database, writer: JournalWriter, settings: Settings) -> Retention:
        retention = cls(engine, writer, Limits.from_settings(settings), settings.retention_seconds)
        if retention.limits.keep_days or retention.limits.max_store_chars:
            retention._task = asyncio.create_task(retention._run(), name="store retention")
        return retention

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _run(self) -> None:
        while True:
            try:
                await self.apply()
            except Exception:
                log.exception("the store's retention pass failed; it runs again in %g s", self.interval)
            await asyncio.sleep(self.interval)

    async def apply(self, now: datetime | None = None) -> list[Deleted]:
        """Delete the sessions the limits say, the oldest first; returns them (each also logged)."""
        await self.writer.flush()  # sizes and last activities as recorded so far
        deleted = []
        if self.limits.keep_days:
            deleted += await self._too_old((now or datetime.now(UTC)) - timedelta(days=self.limits.keep_days))
        if self.limits.max_store_chars:
            deleted += await self._too_large(self.limits.max_store_chars)
        return deleted

    async def _sizes(self, before: datetime | None = None) -> list[tuple[str, datetime, int]]:
        """(id, last activity, characters of journal) of every stored session not live, least recently active first."""
        size = select(func.coalesce(func.sum(func.length(journal.c.body)), 0)).where(
            journal.c.session_id == sessions.c.id
        )
        query = select(sessions.c.id, sessions.c.last_activity, size.scalar_subquery()).order_by(
            sessions.c.last_activity, sessions.c.id
        )
        if before is not None:
            query = query.where(sessions.c.last_activity < before)
        async with self.engine.connect() as connection:
            rows = (await connection.execute(query)).all()
        live = self.writer.live
        return [(str(i), last, int(chars)) for i, last, chars in rows if i not in live]

    async def _too_old(self, before: datetime) -> list[Deleted]:
        why = f"last active before {before:%Y-%m-%d %H:%M} UTC (WEBCLIENT_KEEP_DAYS={self.limits.keep_days:g})"
        deleted = [Deleted(i, last, chars, why) for i, last, chars in await self._sizes(before)]
        await self._delete(deleted)
        if deleted:
            count = f"{len(deleted)} session{'s' if len(deleted) > 1 else ''}"
            log.warning("the store deleted %s %s: %s", count, why, _ids(deleted))
        return deleted

    async def _too_large(self, cap: int) -> list[Deleted]:
        async with self.engine.connect() as connection:
            total = int(
                (await connection.execute(select(func.coalesce(func.sum(func.length(journal.c.body)), 0)))).scalar_one()
            )
        if total <= cap:
            return []
        mb = f"{cap / MB:g}"
        deleted = []
        for session_id, last, chars in await self._sizes():
            if total <= cap:
                break
            why = f"the store held {total / MB:.1f} MB, over WEBCLIENT_MAX_STORE_MB={mb}"
            deleted.append(Deleted(session_id, last, chars, why))
            total -= chars
        await self._delete(deleted)
        for gone in deleted:
            log.warning(
                "the store deleted session %s (last active %s, %.1f MB): %s",
                gone.session_id,
                f"{gone.last_activity:%Y-%m-%d %H:%M}",
                gone.chars / MB,
                gone.why,
            )
        if total > cap:
            log.warning("the store still holds %.1f MB, over %s MB: the rest is running sessions", total / MB, mb)
        return deleted

    async def _delete(self, deleted: Sequence[Deleted]) -> None:
        chunks: list[list[str]] = []
        chars = 0
        for gone in deleted:
            if not chunks or chars + gone.chars > BATCH_CHARS or len(chunks[-1]) >= BATCH_SESSIONS:
                chunks.append([])
                chars = 0
            chunks[-1].append(gone.session_id)
            chars += gone.chars
        for chunk in chunks:
            if self.deleting is not None:
                await self.deleting(chunk)
            async with self.engine.begin() as connection:
                await delete_sessions(connection, chunk)
            for session_id in chunk:
                self.writer.forget(session_id)
            if self.deleted is not None:
                await asyncio.to_thread(self.deleted, chunk)
