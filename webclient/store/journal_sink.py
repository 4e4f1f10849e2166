"""Where the journal writer's batches are written: a thread of its own with its own connection, off the event loop.

`JournalWriter` (`webclient.store.journal`) takes what the sessions record on the event loop and hands each batch
here; everything a write costs (SQLAlchemy building statements, making the text storable, the driver's work)
runs in the sink's thread. On SQLite that thread uses the standard library's driver directly (no second thread
behind it, as aiosqlite has); on PostgreSQL it runs an event loop of its own for asyncpg, with SQLAlchemy's sync
API over it (`AsyncConnection.run_sync`), so that one function writes a batch on both.

SQLite's driver lets go of the interpreter's lock for each statement it steps, and takes it back after: while the
event loop keeps the lock busy, taking it back can wait a switch interval (5 ms). A journal row per statement, as
``executemany`` does, made a batch of 10,000 rows take 1.8 s instead of 0.2 s while the loop was busy; the rows go
in statements of `ROWS_PER_STATEMENT` rows each instead.
"""

from __future__ import annotations

import functools
import json
import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import func, insert, select, update
from sqlalchemy.engine import Connection

from webclient.session.recorder import NOTICE
from webclient.store.database import ThreadConnection
from webclient.store.leases import claim_new, fenced
from webclient.store.schema import audit, journal, sessions, transcript

log = logging.getLogger(__name__)

MAX_WORDS = 100_000
"""Characters of one message the search keeps: PostgreSQL refuses a tsvector over 1 MB (which would fail the batch)."""
ROWS_PER_STATEMENT = 100
"""Journal rows one SQLite statement inserts (600 parameters; SQLite takes up to 32,766)."""

Row = tuple[str, int, float, str, str, str, int]
"""A journal row as the writer holds it: session id, seq, at, kind, direction, body, and the number of the
operation that took it (the writer's count, which `JournalWriter.flush` waits for)."""


@dataclass
class Batch:
    """What one transaction writes."""

    new_sessions: list[dict[str, Any]] = field(default_factory=list)
    rows: list[Row] = field(default_factory=list)
    words: list[dict[str, Any]] = field(default_factory=list)
    audits: list[dict[str, Any]] = field(default_factory=list)
    states: dict[str, dict[str, Any]] = field(default_factory=dict)
    last_activity: dict[str, float] = field(default_factory=dict)
    """Each session's newest record: its row's ``last_activity``."""
    cap: int | None = None
    """Characters of journal text a session may keep (`JournalWriter.session_cap`)."""


def _when(epoch: float) -> datetime:
    return datetime.fromtimestamp(epoch, UTC)


def storable(text: str) -> str:
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
    return {key: storable(value) if isinstance(value, str) else value for key, value in values.items()}


class JournalSink:
    """Writes batches, one at a time, in a thread of its own with a connection of its own to the store at ``url``."""

    def __init__(self, url: str) -> None:
        self._connection = ThreadConnection(url, "journal")
        self.sqlite = self._connection.sqlite
        self._statement: str | None = None
        self.sizes: dict[str, int] = {}
        """Characters of each journal so far (the cap's count), kept by the sink's thread."""
        self.cut: set[str] = set()
        """Sessions whose journal reached the cap."""
        self.fence: str | None = None
        """This instance's id when several share the store: a session's records are written only while this instance
        holds its lease (`webclient.store.leases.fenced`); None: one instance, no leases."""
        self.lease_seconds = 0.0
        """How long the lease of a session made here lasts before this instance's heartbeat renews it."""

    async def write(self, batch: Batch) -> None:
        """Write ``batch`` in one transaction.

        Raises:
            Exception: whatever the database or its driver raised; nothing of the batch is written.
        """
        await self._connection.run(functools.partial(self._write_batch, batch=batch), transaction=True)

    async def close(self) -> None:
        await self._connection.close()

    # -- in the sink's thread -------------------------------------------------------------------------

    def _write_batch(self, connection: Connection, batch: Batch) -> None:
        """New session rows first, then the journal rows, the words of finished messages, the audit log, then each
        session's latest state and last activity."""
        if batch.new_sessions:
            self.sizes.update(dict.fromkeys((values["id"] for values in batch.new_sessions), 0))
            connection.execute(insert(sessions), [_storable_values(v) for v in batch.new_sessions])
            if self.fence is not None:
                claim_new(connection, [values["id"] for values in batch.new_sessions], self.fence, self.lease_seconds)
        if self.fence is not None:
            _keep_held(connection, batch, self.fence)
        rows = batch.rows
        if batch.cap is not None and rows:
            rows = self._within_cap(connection, rows, batch.cap)
        if rows:
            self._insert_rows(connection, [(s, q, t, k, d, storable(b)) for s, q, t, k, d, b, _ in rows])
        if batch.words:
            connection.execute(insert(transcript), [_storable_values(w) for w in batch.words])
        if batch.audits:
            connection.execute(insert(audit), [_storable_values(a) for a in batch.audits])
        for session_id in batch.states.keys() | batch.last_activity.keys():
            values_now = _storable_values(batch.states.get(session_id, {}))
            if session_id in batch.last_activity:
                values_now["last_activity"] = _when(batch.last_activity[session_id])
            connection.execute(update(sessions).where(sessions.c.id == session_id).values(values_now))

    def _insert_rows(self, connection: Connection, values: list[tuple[str, int, float, str, str, str]]) -> None:
        # The rows skip Core's work per row (parameter dicts, type processing) and go to the driver as tuples, in
        # the statement SQLAlchemy compiled for the dialect.
        if self._statement is None:
            self._statement = str(insert(journal).compile(dialect=connection.dialect))
        statement = self._statement
        if not self.sqlite:
            connection.exec_driver_sql(statement, values)  # asyncpg's executemany: one round trip
            return
        head, _, row = statement.partition(" VALUES ")
        for start in range(0, len(values), ROWS_PER_STATEMENT):
            chunk = values[start : start + ROWS_PER_STATEMENT]
            connection.exec_driver_sql(f"{head} VALUES {', '.join([row] * len(chunk))}", tuple(_flat(chunk)))

    def _within_cap(self, connection: Connection, rows: list[Row], cap: int) -> list[Row]:
        """The rows of sessions whose journal stays within ``cap`` characters; the first row past it is replaced by a
        notice that says so (with its number), and a cut session's later rows are not written."""
        sizes, cut = self.sizes, self.cut
        unknown = {row[0] for row in rows} - sizes.keys()
        if unknown:  # journals begun before this process started (a resumed session): what they hold so far
            sizes.update(dict.fromkeys(unknown, 0))
            stored = select(journal.c.session_id, func.sum(func.length(journal.c.body))).group_by(journal.c.session_id)
            for session_id, size in connection.execute(stored.where(journal.c.session_id.in_(unknown))):
                sizes[session_id] = int(size or 0)
        kept: list[Row] = []
        for row in rows:
            session_id = row[0]
            if session_id in cut:
                continue
            size = sizes.get(session_id, 0) + len(row[5])
            if size > cap:
                cut.add(session_id)
                mb = f"{cap / 1_000_000:g}"
                log.warning(
                    "the journal of session %s reached %s MB: not stored from record %d on", session_id, mb, row[1]
                )
                why = f"the journal of this session was cut at {mb} MB: what came after is not stored"
                notice = json.dumps({"cut": row[1], "why": why})
                kept.append((session_id, row[1], row[2], NOTICE, "store", notice, row[6]))
                continue
            sizes[session_id] = size
            kept.append(row)
        return kept

    def forget(self, session_id: str) -> None:
        """Retention deleted the session: drop what the sink knows of it."""
        self._connection.call_soon(functools.partial(self._forget, session_id))

    def _forget(self, session_id: str) -> None:
        self.sizes.pop(session_id, None)
        self.cut.discard(session_id)


def _keep_held(connection: Connection, batch: Batch, me: str) -> None:
    """Take out of ``batch`` what sessions whose lease this instance no longer holds recorded (a new session's row is
    in the batch: nobody else knows its id yet)."""
    new = {values["id"] for values in batch.new_sessions}  # their leases are in this transaction
    recorded = {row[0] for row in batch.rows} | batch.states.keys() | {words["session_id"] for words in batch.words}
    others = recorded - new - fenced(connection, me, recorded - new)
    if not others:
        return
    log.warning("not writing what %d sessions recorded here: another instance runs them now", len(others))
    batch.rows = [row for row in batch.rows if row[0] not in others]
    batch.words = [words for words in batch.words if words["session_id"] not in others]
    batch.states = {key: values for key, values in batch.states.items() if key not in others}
    batch.last_activity = {key: at for key, at in batch.last_activity.items() if key not in others}


def _flat(rows: list[tuple[str, int, float, str, str, str]]) -> list[Any]:
    return [value for row in rows for value in row]
