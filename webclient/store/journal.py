"""The journal writer: records are appended in memory on the hot path and written in batches by a background task.

``record`` is a list append (it runs for every streamed chunk). A task wakes when something was recorded, waits
``interval`` seconds (or less, when ``batch_rows`` are waiting or someone awaits `JournalWriter.flush`) and writes
everything pending in one transaction: new session rows first, then the journal rows, the words of finished
messages (for the search over transcripts), then each session's latest state and last activity. The database work
runs in the driver (aiosqlite's thread, asyncpg's socket), so the event loop only builds the batch.

Memory is bounded: past ``max_rows`` pending rows or ``max_chars`` pending characters (a slow or unreachable
database), records are dropped and counted per session; their numbers are skipped, so the journal shows a gap, and
once the backlog is written a ``notice`` row says how many were lost. A batch the database refuses is dropped the
same way (logged, and said in a notice).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from webclient.session.recorder import NOTICE
from webclient.store.schema import audit, journal, sessions, transcript

log = logging.getLogger(__name__)

MAX_WORDS = 100_000
"""Characters of one message the search keeps: PostgreSQL refuses a tsvector over 1 MB (which would fail the batch)."""
Row = tuple[str, int, float, str, str, str]
"""A journal row as the writer holds it: session id, seq, at, kind, direction, body."""


def _when(epoch: float) -> datetime:
    return datetime.fromtimestamp(epoch, UTC)


def _storable(text: str) -> str:
    """Text both databases take: a lone surrogate (an agent's broken UTF-8) becomes its escape ``\\udcXX``, which a
    JSON string decodes back to the same character, and NUL (which PostgreSQL refuses) becomes ``\\u0000``."""
    if text.isascii():
        return text.replace("\0", "\\u0000") if "\0" in text else text
    try:
        text.encode()
    except UnicodeEncodeError:
        text = text.encode("utf-8", "backslashreplace").decode()
    return text.replace("\0", "\\u0000") if "\0" in text else text


def _storable_values(values: dict[str, Any]) -> dict[str, Any]:
    return {key: _storable(value) if isinstance(value, str) else value for key, value in values.items()}


class JournalWriter:
    """Batches the journals of every session of one store into few transactions."""

    def __init__(
        self,
        engine: AsyncEngine,
        *,
        interval: float = 0.05,
        batch_rows: int = 5_000,
        max_rows: int = 200_000,
        max_chars: int = 256 * 1024 * 1024,
    ) -> None:
        self.engine = engine
        # The journal's rows skip Core's work per row (parameter dicts, type processing: half the cost of a
        # batch) and go to the driver's executemany as tuples, in the statement SQLAlchemy compiled for the dialect.
        compiled = insert(journal).compile(dialect=engine.dialect)
        assert compiled.positiontup == [column.name for column in journal.columns], compiled.positiontup
        self._insert_journal = str(compiled)
        self.interval = interval
        self.batch_rows = batch_rows
        self.max_rows = max_rows
        self.max_chars = max_chars
        self.transactions = 0
        """Transactions written so far (the tests count them)."""
        self._new_sessions: list[dict[str, Any]] = []
        self._rows: list[tuple[str, int, float, str, str, str]] = []
        self._states: dict[str, dict[str, Any]] = {}
        self._words: list[dict[str, Any]] = []
        self._audit: list[dict[str, Any]] = []
        """Rows of the audit log (`webclient.store.audit`), written with the batch."""
        self._chars = 0
        self._dropped: dict[str, int] = {}
        self._seqs: dict[str, int] = {}
        self._recorded = 0  # operations taken (rows, session rows, state changes), written or not
        self._written = 0
        self._waiters: list[tuple[int, asyncio.Future[None]]] = []
        self._wake = asyncio.Event()
        self._hurry = asyncio.Event()
        self._closing = False
        self.sealed = False
        self.deleted: set[str] = set()
        """Sessions deleted while this server runs: anything they still record is dropped."""
        """Set when the server stops: records are ignored from then on."""
        self._task: asyncio.Task[None] | None = None
        # Retention (`webclient.store.retention`): the sessions of this process not ended, and each journal's size.
        self.live: set[str] = set()
        """Sessions this process opened or wrote journal rows for, until their state is ``ended``: retention never
        deletes them."""
        self.session_cap: int | None = None
        """Characters of journal text a session may keep; past it, one notice and nothing more (None: no cap)."""
        self._sizes: dict[str, int] = {}
        self._cut: set[str] = set()

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="journal writer")

    # -- the hot path --------------------------------------------------------------------------------

    def next_seq(self, session_id: str) -> int:
        seq = self._seqs.get(session_id, 0) + 1
        self._seqs[session_id] = seq
        return seq

    def continue_numbering(self, session_id: str, last_seq: int) -> None:
        """Number the session's next records after ``last_seq`` (a stored session taken up again)."""
        self._seqs[session_id] = max(self._seqs.get(session_id, 0), last_seq)

    def append(self, session_id: str, kind: str, direction: str, body: str) -> None:
        if self.sealed:
            return
        seq = self._seqs.get(session_id, 0) + 1
        self._seqs[session_id] = seq
        rows = self._rows
        if len(rows) >= self.max_rows or self._chars >= self.max_chars:
            self._dropped[session_id] = self._dropped.get(session_id, 0) + 1
            return
        rows.append((session_id, seq, time.time(), kind, direction, body))
        self._chars += len(body)
        self._recorded += 1
        # The writer takes every pending row at once, so each threshold is crossed once per batch: telling it once
        # is enough (telling it on every row past the threshold, while a flood keeps the loop busy, cost 2 calls
        # per row).
        waiting = len(rows)
        if waiting == 1:
            self._wake.set()
        elif waiting == self.batch_rows:
            self._hurry.set()

    def add_session(self, values: dict[str, Any]) -> None:
        self._new_sessions.append(values)
        self._taken()

    def add_words(self, session_id: str, role: str, text: str) -> None:
        """The text of a finished message, for the search; numbered with the journal's last record so far."""
        if self.sealed or self._chars >= self.max_chars or session_id in self.deleted:
            return  # the database is too slow: the journal loses records too, and says so
        seq = self._seqs.get(session_id, 0)
        self._words.append({"session_id": session_id, "seq": seq, "role": role, "text": text[:MAX_WORDS]})
        self._taken()

    def add_audit(self, values: dict[str, Any]) -> None:
        """One row of the audit log (`webclient.store.audit.row`)."""
        if not self.sealed:
            self._audit.append(values)
            self._taken()

    def set_state(self, session_id: str, values: dict[str, Any]) -> None:
        if self.sealed:  # the server stops: its agents ending is not "ended" (a restart shows "stopped", as a kill)
            return
        self._states.setdefault(session_id, {}).update(values)
        self._taken()

    def _taken(self) -> None:
        self._recorded += 1
        if not self._wake.is_set():
            self._wake.set()

    # -- waiting and writing -------------------------------------------------------------------------

    async def flush(self) -> None:
        """Return once everything taken before the call is written (or dropped because the database failed)."""
        target = self._recorded
        if self._written >= target:
            return
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append((target, waiter))
        self._hurry.set()
        self._wake.set()
        await waiter

    async def close(self) -> None:
        """Write what is pending, then stop."""
        self._closing = True
        self._hurry.set()
        self._wake.set()
        if self._task is not None:
            await self._task

    async def _run(self) -> None:
        while True:
            await self._wake.wait()
            if not self._hurry.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._hurry.wait(), self.interval)
            self._wake.clear()
            self._hurry.clear()
            await self._write_pending()
            if self._closing:
                if self._pending():  # the notices of what was dropped
                    await self._write_pending()
                return

    def _pending(self) -> bool:
        return bool(self._new_sessions or self._rows or self._words or self._states or self._dropped or self._audit)

    async def _write_pending(self) -> None:
        new_sessions, self._new_sessions = self._new_sessions, []
        rows, self._rows = self._rows, []
        rows += self._dropped_notices()
        states, self._states = self._states, {}
        words, self._words = self._words, []
        audits, self._audit = self._audit, []
        if self.deleted:  # what a deleted session recorded since: its row is gone, so its records can't be written
            rows = [row for row in rows if row[0] not in self.deleted]
            states = {key: value for key, value in states.items() if key not in self.deleted}
            words = [values for values in words if values["session_id"] not in self.deleted]
        self._chars = 0
        taken = self._recorded
        last_activity: dict[str, float] = {}
        for row in rows:
            last_activity[row[0]] = row[2]
        self._note_live(new_sessions, states, last_activity)
        try:
            async with self.engine.begin() as connection:
                if new_sessions:
                    await connection.execute(insert(sessions), [_storable_values(v) for v in new_sessions])
                if self.session_cap is not None and rows:
                    rows = await self._within_cap(connection, rows, self.session_cap)
                if rows:
                    await connection.exec_driver_sql(
                        self._insert_journal, [(s, q, t, k, d, _storable(b)) for s, q, t, k, d, b in rows]
                    )
                if words:
                    await connection.execute(insert(transcript), [_storable_values(w) for w in words])
                if audits:
                    await connection.execute(insert(audit), [_storable_values(a) for a in audits])
                for session_id in states.keys() | last_activity.keys():
                    values = _storable_values(states.get(session_id, {}))
                    if session_id in last_activity:
                        values["last_activity"] = _when(last_activity[session_id])
                    await connection.execute(update(sessions).where(sessions.c.id == session_id).values(values))
            self.transactions += 1
        except Exception:
            log.exception("the store could not write %d journal rows; they are lost", len(rows))
            for row in rows:
                self._dropped[row[0]] = self._dropped.get(row[0], 0) + 1
        self._written = taken
        self._release_waiters()

    def _note_live(
        self, new_sessions: list[dict[str, Any]], states: dict[str, dict[str, Any]], active: dict[str, float]
    ) -> None:
        for values in new_sessions:
            self.live.add(values["id"])
            self._sizes[values["id"]] = 0
        self.live.update(active)  # its journal grows: it runs here (a resumed session too)
        for session_id, values in states.items():
            if values.get("state") in ("ended", "stopped"):  # its agent does not run
                self.live.discard(session_id)

    async def _within_cap(self, connection: AsyncConnection, rows: list[Row], cap: int) -> list[Row]:
        """The rows of sessions whose journal stays within ``cap`` characters; the first row past it is replaced by a
        notice that says so (with its number), and a cut session's later rows are not written."""
        sizes, cut = self._sizes, self._cut
        unknown = {row[0] for row in rows} - sizes.keys()
        if unknown:  # journals begun before this process started (a resumed session): what they hold so far
            sizes.update(dict.fromkeys(unknown, 0))
            stored = select(journal.c.session_id, func.sum(func.length(journal.c.body))).group_by(journal.c.session_id)
            for session_id, size in await connection.execute(stored.where(journal.c.session_id.in_(unknown))):
                sizes[session_id] = int(size or 0)
        kept = []
        for row in rows:
            session_id = row[0]
            if session_id in cut:
                continue
            size = sizes[session_id] + len(row[5])
            if size > cap:
                cut.add(session_id)
                mb = f"{cap / 1_000_000:g}"
                log.warning(
                    "the journal of session %s reached %s MB: not stored from record %d on", session_id, mb, row[1]
                )
                why = f"the journal of this session was cut at {mb} MB: what came after is not stored"
                kept.append((session_id, row[1], row[2], NOTICE, "store", json.dumps({"cut": row[1], "why": why})))
                continue
            sizes[session_id] = size
            kept.append(row)
        return kept

    def drop(self, session_id: str) -> None:
        """The session is deleted: what it recorded and is not written yet is dropped, and nothing more is taken."""
        self._rows = [row for row in self._rows if row[0] != session_id]
        self._new_sessions = [values for values in self._new_sessions if values["id"] != session_id]
        self._states.pop(session_id, None)
        self._words = [words for words in self._words if words["session_id"] != session_id]
        self._dropped.pop(session_id, None)
        self.deleted.add(session_id)

    def forget(self, session_id: str) -> None:
        """Retention deleted the session: drop what the writer knows of it."""
        self.live.discard(session_id)
        self._sizes.pop(session_id, None)
        self._cut.discard(session_id)

    def _dropped_notices(self) -> list[tuple[str, int, float, str, str, str]]:
        """A notice for each journal that lost records since the last batch, numbered after what it lost."""
        dropped, self._dropped = self._dropped, {}
        notices = []
        for session_id, count in dropped.items():
            log.warning("the journal of session %s lost %d records (the store was slow or failed)", session_id, count)
            body = f'{{"dropped": {count}, "why": "the store was too slow or failed"}}'
            notices.append((session_id, self.next_seq(session_id), time.time(), NOTICE, "store", body))
        return notices

    def _release_waiters(self) -> None:
        still: list[tuple[int, asyncio.Future[None]]] = []
        for target, waiter in self._waiters:
            if target <= self._written:
                if not waiter.done():
                    waiter.set_result(None)
            else:
                still.append((target, waiter))
        self._waiters = still
