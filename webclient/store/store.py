"""The store a server keeps its sessions in: opened (and migrated) at start, closed (flushed) at stop."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import shlex
from collections.abc import AsyncGenerator, AsyncIterator, Collection, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from sqlalchemy import func, select

from webclient.config import Settings
from webclient.people.person import Person
from webclient.session.agent_spec import AgentSpec
from webclient.session.recorder import ACTION, JournalRow, StoredSession
from webclient.store import audit, folders, history, shares
from webclient.store.database import Database, ThreadConnection, create_engine, database_url, migrate
from webclient.store.history import PAGE_SIZE, HistoryPage, SessionRow
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
        if kind == ACTION and (attributed := audit.from_action(self.session_id, body)) is not None:
            self.writer.add_audit(attributed)  # who did it, in the audit log too

    def state(self, state: str, title: str | None, agent: str | None, turns: int) -> None:
        self.writer.set_state(self.session_id, {"state": state, "title": title, "agent_name": agent, "turns": turns})

    def words(self, role: str, text: str, entry_seq: int | None = None) -> None:
        if text.strip():
            self.writer.add_words(self.session_id, role, text, entry_seq)

    async def flush(self) -> None:
        await self.writer.flush()


class Store:
    """Sessions and their journals in one database (a `webclient.session.recorder.SessionRecords`)."""

    def __init__(self, engine: Database, writer: JournalWriter) -> None:
        self.engine = engine
        self.writer = writer
        self.reader = ThreadConnection(engine.url.render_as_string(hide_password=False), "history")
        """Reads the history (a page of the index, a search) in one hop off the event loop."""

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

    def open_journal(
        self, session_id: str, agent: str, spec: AgentSpec, created: float, owner: str | None = None
    ) -> SessionJournal:
        when = datetime.fromtimestamp(created, UTC)
        self.writer.add_session(
            {
                "id": session_id,
                "agent": agent,
                "agent_name": None,
                "agent_command": spec.entry.url or shlex.join(spec.entry.argv),  # a remote agent's: its server's URL
                "workspace": str(spec.cwd),
                "title": None,
                "created": when,
                "last_activity": when,
                "state": "starting",
                "owner": owner,
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
            owner=row.owner,
            shares=[stored.share for stored in await shares.of_session(self.engine, session_id)],
        )

    async def journal_start(self, session_id: str, rows: int = 20_000) -> AsyncGenerator[Sequence[JournalRow], None]:
        """The start of a stored session's journal, as one batch (the first of `reopen`'s), read without reopening the
        session: what must be known of a session the retention is about to delete (where its worktree is)."""
        records = select(journal.c.kind, journal.c.direction, journal.c.body).where(journal.c.session_id == session_id)
        async with self.engine.connect() as connection:
            yield (await connection.execute(records.order_by(journal.c.seq).limit(rows))).all()

    async def _journal(self, session_id: str, batch: int = 20_000) -> AsyncIterator[Sequence[JournalRow]]:
        """A session's journal in batches, the next one read (in the driver's thread or socket) while the caller
        replays this one: reading 100,000 records takes about a third of what replaying them does."""
        records = select(journal.c.kind, journal.c.direction, journal.c.body).where(journal.c.session_id == session_id)
        async with self.engine.connect() as connection:
            result = await connection.stream(records.order_by(journal.c.seq))
            # An async generator, which SQLAlchemy's annotations call a coroutine.
            batches = cast("AsyncIterator[Sequence[JournalRow]]", result.partitions(batch))
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

    # -- the audit log (webclient.store.audit) -------------------------------------------------------------

    async def folder_owners(self) -> dict[str, str]:
        """Every owned folder under a shared root, with its owner (`webclient.agents.folders.FolderRecords`)."""
        return await folders.owners(self.engine)

    async def claim_folder(self, path: str, owner: str) -> str:
        return await folders.claim(self.engine, path, owner)

    async def driven_workspaces(self, person_id: str, groups: Collection[str]) -> list[str]:
        await self.writer.flush()  # a session shared a moment ago: its row may still be on its way
        return await folders.driven_workspaces(self.engine, person_id, groups)

    def add_audit(self, values: dict[str, Any]) -> None:
        """One row of the audit log (`webclient.store.audit.row`), written with the journal's next batch."""
        self.writer.add_audit(values)

    async def audit_log(self, session_id: str | None = None, limit: int | None = audit.PAGE) -> list[audit.AuditRow]:
        """The audit log of one session, or of the server, newest first (``limit`` None: all of it)."""
        await self._caught_up()
        return await audit.read(self.engine, session_id, limit)

    async def close(self) -> None:
        await self.writer.close()
        await self.reader.close()
        await self.engine.dispose()

    # -- the history (webclient.store.history) -------------------------------------------------------------

    async def _caught_up(self, within: float = 0.5) -> None:
        """Let the writer write the sessions' rows and states it holds (a session just started, its latest state),
        for at most `within` seconds, but not the journal rows waiting behind them: a page that reads the history
        does not wait for an agent's flood to be written."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self.writer.flush_sessions()), within)

    async def history(
        self, page: int = 1, archived: bool = False, size: int = PAGE_SIZE, viewer: Person | None = None
    ) -> HistoryPage:
        """A page of the sessions `viewer` may see (None: all), newest activity first (archived ones too if
        `archived`)."""
        await self._caught_up()
        return await self.reader.run(
            functools.partial(history.list_sessions, page=page, archived=archived, size=size, viewer=viewer),
            transaction=False,
        )

    async def search(
        self, query: str, page: int = 1, archived: bool = False, size: int = PAGE_SIZE, viewer: Person | None = None
    ) -> HistoryPage:
        """A page of the sessions `viewer` may see (None: all) whose transcripts hold every word of `query`, with
        their matching lines."""
        await self._caught_up()
        return await self.reader.run(
            functools.partial(history.search, query=query, page=page, archived=archived, size=size, viewer=viewer),
            transaction=False,
        )

    async def visible(self, session_id: str, viewer: Person, link: str | None = None) -> bool:
        """Whether `viewer` may see the stored session `session_id` (its owner, an admin, or one a share names)."""
        await self._caught_up()  # a session just started has its row
        return await history.visible(self.engine, session_id, viewer, link)

    async def session_row(self, session_id: str) -> SessionRow | None:
        """One session's row as the history shows it, or None."""
        await self._caught_up()
        return await history.get(self.engine, session_id)

    async def set_archived(self, session_id: str, archived: bool) -> bool:
        await self._caught_up()  # a session just started has its row
        return await history.set_archived(self.engine, session_id, archived)

    async def rename(self, session_id: str, title: str | None) -> bool:
        """Set the title; written after what is pending, so that an older title waiting in the writer does not
        undo it (the live session's own title is the session's to change)."""
        await self.writer.flush()
        return await history.rename(self.engine, session_id, title)
