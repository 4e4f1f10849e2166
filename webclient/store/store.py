"""The store a server keeps its sessions in: opened (and migrated) at start, closed (flushed) at stop."""

from __future__ import annotations

import asyncio
import shlex
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import cast

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from webclient.config import Settings
from webclient.session.agent_spec import AgentSpec
from webclient.session.recorder import JournalRow, StoredSession
from webclient.store.database import create_engine, database_url, migrate
from webclient.store.journal import JournalWriter
from webclient.store.retention import delete_sessions
from webclient.store.schema import journal, sessions


class SessionJournal:
    """One session's journal (a `webclient.session.recorder.Recorder`): everything goes to the store's writer."""

    __slots__ = ("session_id", "writer")

    def __init__(self, writer: JournalWriter, session_id: str) -> None:
        self.writer = writer
        self.session_id = session_id

    def record(self, kind: str, direction: str, body: str) -> None:
        self.writer.append(self.session_id, kind, direction, body)

    def state(self, state: str, title: str | None, agent: str | None, turns: int) -> None:
        self.writer.set_state(self.session_id, {"state": state, "title": title, "agent_name": agent})

    def words(self, role: str, text: str) -> None:
        pass  # the search over transcripts keeps them (to come)

    async def flush(self) -> None:
        await self.writer.flush()


class Store:
    """Sessions and their journals in one database (a `webclient.session.recorder.SessionRecords`)."""

    def __init__(self, engine: AsyncEngine, writer: JournalWriter) -> None:
        self.engine = engine
        self.writer = writer

    @classmethod
    async def open(cls, settings: Settings) -> Store:
        """The store the settings name, its tables migrated to the newest version, its writer running."""
        return await cls.open_url(database_url(settings))

    @classmethod
    async def open_url(cls, url: str) -> Store:
        engine = create_engine(url)
        try:
            await migrate(engine)
        except BaseException:
            await engine.dispose()
            raise
        writer = JournalWriter(engine)
        writer.start()
        return cls(engine, writer)

    def open_journal(self, session_id: str, agent: str, spec: AgentSpec, created: float) -> SessionJournal:
        when = datetime.fromtimestamp(created, UTC)
        self.writer.add_session(
            {
                "id": session_id,
                "agent": agent,
                "agent_name": None,
                "agent_command": shlex.join(spec.argv),
                "workspace": str(spec.cwd),
                "title": None,
                "created": when,
                "last_activity": when,
                "state": "starting",
            }
        )
        return SessionJournal(self.writer, session_id)

    async def reopen(self, session_id: str) -> StoredSession | None:
        await self.writer.flush()  # what a forgotten session recorded last may still be on its way
        async with self.engine.connect() as connection:
            row = (await connection.execute(select(sessions).where(sessions.c.id == session_id))).first()
            if row is None:
                return None
            last_seq = select(func.max(journal.c.seq)).where(journal.c.session_id == session_id)
            last = (await connection.execute(last_seq)).scalar()
        self.writer.continue_numbering(session_id, last or 0)
        return StoredSession(
            id=row.id,
            agent=row.agent,
            command=row.agent_command,
            workspace=Path(row.workspace),
            created=row.created.timestamp(),
            journal=self._journal(session_id),
            recorder=SessionJournal(self.writer, session_id),
        )

    async def _journal(self, session_id: str, batch: int = 20_000) -> AsyncIterator[Sequence[JournalRow]]:
        """A session's journal in batches, the next one read (in the driver's thread or socket) while the caller
        replays this one: reading 100,000 records takes about a third of what replaying them does."""
        records = select(journal.c.kind, journal.c.direction, journal.c.body).where(journal.c.session_id == session_id)
        async with self.engine.connect() as connection:
            result = await connection.stream(records.order_by(journal.c.seq))
            # An async generator, which SQLAlchemy's annotations call a coroutine.
            batches = cast("AsyncIterator[Sequence[JournalRow]]", result.tuples().partitions(batch))
            reading = asyncio.ensure_future(anext(batches, None))
            while (rows := await reading) is not None:
                reading = asyncio.ensure_future(anext(batches, None))
                yield rows

    async def delete(self, session_id: str) -> None:
        await self.writer.flush()
        self.writer.drop(session_id)
        async with self.engine.begin() as connection:
            await delete_sessions(connection, [session_id])
        self.writer.forget(session_id)

    def seal(self) -> None:
        """Record nothing more: the server stops, and what its sessions do while they close (their open questions
        cancelled, their agents ending) did not happen to them; after a restart they show what they showed."""
        self.writer.sealed = True

    async def flush(self) -> None:
        await self.writer.flush()

    async def close(self) -> None:
        await self.writer.close()
        await self.engine.dispose()
