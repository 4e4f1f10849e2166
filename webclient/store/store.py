"""The store a server keeps its sessions in: opened (and migrated) at start, closed (flushed) at stop."""

from __future__ import annotations

import shlex
from datetime import UTC, datetime

from sqlalchemy.ext.asyncio import AsyncEngine

from webclient.config import Settings
from webclient.session.agent_spec import AgentSpec
from webclient.store.database import create_engine, database_url, migrate
from webclient.store.journal import JournalWriter


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

    async def flush(self) -> None:
        await self.writer.flush()

    async def close(self) -> None:
        await self.writer.close()
        await self.engine.dispose()
