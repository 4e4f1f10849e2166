"""The journal writer: records are appended in memory on the hot path and written in batches, off the event loop.

``record`` is a list append (it runs for every streamed chunk). A task wakes when something was recorded, waits
``interval`` seconds (or less, when ``batch_rows`` are waiting or someone awaits `JournalWriter.flush`) and hands
a batch to the sink (`webclient.store.journal_sink`), which writes it in one transaction in a thread of its own:
new session rows first, then the journal rows, the words of finished messages (for the search over transcripts),
then each session's latest state and last activity. A batch holds at most ``batch_rows`` journal rows and
``batch_chars`` characters of them; what is left waits for the next, written at once. The event loop only takes
the pending lists, so however far the database is behind, it never waits for a write.

Memory is bounded: past ``max_rows`` pending rows or ``max_chars`` pending characters (a slow or unreachable
database), records are dropped and counted per session; their numbers are skipped, so the journal shows a gap, and
once the backlog is written a ``notice`` row says how many were lost. A batch the database refuses is dropped the
same way (logged, and said in a notice).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from typing import Any

from webclient.session.recorder import NOTICE
from webclient.store.database import Database
from webclient.store.journal_sink import MAX_WORDS, Batch, JournalSink, Row

log = logging.getLogger(__name__)


class JournalWriter:
    """Batches the journals of every session of one store into few transactions."""

    def __init__(
        self,
        engine: Database,
        *,
        interval: float = 0.25,
        batch_rows: int = 5_000,
        batch_chars: int = 8 * 1024 * 1024,
        max_rows: int = 200_000,
        max_chars: int = 256 * 1024 * 1024,
    ) -> None:
        self.sink = JournalSink(engine.url.render_as_string(hide_password=False))
        # A transaction costs about 1 ms of CPU however few rows it holds: at 200 notifications/s, 20 a second
        # (0.05 s apart) cost 2 % of a core, 4 a second a third of that. A reader that needs the newest rows
        # (history, search, reopen) flushes, which writes at once.
        self.interval = interval
        self.batch_rows = batch_rows
        self.batch_chars = batch_chars
        self.max_rows = max_rows
        self.max_chars = max_chars
        self.transactions = 0
        """Transactions written so far (the tests count them)."""
        self._new_sessions: list[dict[str, Any]] = []
        self._rows: list[Row] = []
        self._states: dict[str, dict[str, Any]] = {}
        self._words: list[dict[str, Any]] = []
        self._audit: list[dict[str, Any]] = []
        """Rows of the audit log (`webclient.store.audit`), written with the batch."""
        self._chars = 0
        """Characters of the journal rows pending or being written."""
        self._dropped: dict[str, int] = {}
        self._seqs: dict[str, int] = {}
        self._recorded = 0  # operations taken (rows, session rows, state changes), written or not
        self._written = 0
        self._waiters: list[tuple[int, asyncio.Future[None]]] = []
        self._batches_taken = 0
        self._batches_done = 0
        self._batch_waiters: list[tuple[int, asyncio.Future[None]]] = []
        self._sessions_batch = 0
        """The newest batch that held session rows, states, words or audit rows."""
        self._wake = asyncio.Event()
        self._hurry = asyncio.Event()
        self._closing = False
        self.sealed = False
        """Set when the server stops: records are ignored from then on."""
        self.deleted: set[str] = set()
        """Sessions deleted while this server runs: anything they still record is dropped."""
        self._task: asyncio.Task[None] | None = None
        # Retention (`webclient.store.retention`): the sessions of this process not ended, and each journal's size.
        self.live: set[str] = set()
        """Sessions this process opened or wrote journal rows for, until their state is ``ended``: retention never
        deletes them."""
        self.session_cap: int | None = None
        """Characters of journal text a session may keep; past it, one notice and nothing more (None: no cap)."""

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
        self._recorded += 1
        rows.append((session_id, seq, time.time(), kind, direction, body, self._recorded))
        self._chars += len(body)
        # Each threshold is crossed once per batch: telling the writer once is enough (telling it on every row past
        # the threshold, while a flood keeps the loop busy, cost 2 calls per row).
        waiting = len(rows)
        if waiting == 1:
            self._wake.set()
        elif waiting == self.batch_rows:
            self._hurry.set()

    def add_session(self, values: dict[str, Any]) -> None:
        self._new_sessions.append(values)
        self._taken()

    def add_words(self, session_id: str, role: str, text: str, entry_seq: int | None = None) -> None:
        """The text of a finished message, for the search; numbered with the journal's last record so far, and with
        its entry's number in the thread (``entry_seq``), which a search's hit links to."""
        if self.sealed or self._chars >= self.max_chars or session_id in self.deleted:
            return  # the database is too slow: the journal loses records too, and says so
        seq = self._seqs.get(session_id, 0)
        values = {"session_id": session_id, "seq": seq, "role": role, "text": text[:MAX_WORDS], "entry_seq": entry_seq}
        self._words.append(values)
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
        # A turn began or ended (a few times a turn): written at once, with what led to it, rather than `interval`
        # later, so that a restart right after it finds it.
        self._hurry.set()

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

    async def flush_sessions(self) -> None:
        """Return once the sessions' rows and states, the words and the audit rows taken before the call are written:
        what the pages read. Each batch takes all of them, so this waits for one batch at most (none when the batch
        being written holds journal rows only), not for a backlog of journal rows (an agent's flood) to be written."""
        pending = self._new_sessions or self._states or self._words or self._audit
        target = self._batches_taken + 1 if pending else self._sessions_batch
        if self._batches_done >= target:
            return
        waiter = asyncio.get_running_loop().create_future()
        self._batch_waiters.append((target, waiter))
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
            if self._rows:  # a backlog: the next batch at once
                self._wake.set()
                self._hurry.set()
            elif self._closing:
                if self._pending():  # the notices of what was dropped
                    await self._write_pending()
                await self.sink.close()
                return

    def _pending(self) -> bool:
        return bool(self._new_sessions or self._rows or self._words or self._states or self._dropped or self._audit)

    def _take_rows(self) -> tuple[list[Row], int]:
        """The oldest pending rows, at most ``batch_rows`` of them and ``batch_chars`` characters (at least one), and
        their characters."""
        pending = self._rows
        if len(pending) <= self.batch_rows and self._chars <= self.batch_chars:
            self._rows = []
            return pending, self._chars
        count, chars = 0, 0
        for row in itertools.islice(pending, self.batch_rows):
            more = chars + len(row[5])
            if count and more > self.batch_chars:
                break
            chars = more
            count += 1
        taken = pending[:count]
        del pending[:count]
        return taken, chars

    async def _write_pending(self) -> None:
        rows, chars = self._take_rows()
        # Every operation taken before the oldest row still pending is in this batch.
        taken = self._rows[0][6] - 1 if self._rows else self._recorded
        batch = Batch(self._new_sessions, rows + self._dropped_notices(), self._words, self._audit, self._states)
        self._new_sessions, self._words, self._audit, self._states = [], [], [], {}
        self._batches_taken += 1
        number = self._batches_taken
        if batch.new_sessions or batch.states or batch.words or batch.audits:
            self._sessions_batch = number
        if self.deleted:  # what a deleted session recorded since: its row is gone, so its records can't be written
            batch.rows = [row for row in batch.rows if row[0] not in self.deleted]
            batch.states = {key: value for key, value in batch.states.items() if key not in self.deleted}
            batch.words = [values for values in batch.words if values["session_id"] not in self.deleted]
        for row in batch.rows:
            batch.last_activity[row[0]] = row[2]
        batch.cap = self.session_cap
        self._note_live(batch)
        try:
            await self.sink.write(batch)
            self.transactions += 1
        except Exception:
            log.exception("the store could not write %d journal rows; they are lost", len(batch.rows))
            for row in batch.rows:
                self._dropped[row[0]] = self._dropped.get(row[0], 0) + 1
        self._chars = max(0, self._chars - chars)  # the batch's rows count against the bound until written
        self._written = max(self._written, taken)
        self._batches_done = number
        self._waiters = _released(self._waiters, self._written)
        self._batch_waiters = _released(self._batch_waiters, number)

    def _note_live(self, batch: Batch) -> None:
        for values in batch.new_sessions:
            self.live.add(values["id"])
        self.live.update(batch.last_activity)  # its journal grows: it runs here (a resumed session too)
        for session_id, values in batch.states.items():
            if values.get("state") in ("ended", "stopped", "sleeping"):  # its agent does not run
                self.live.discard(session_id)

    def drop(self, session_id: str) -> None:
        """The session is deleted: what it recorded and is not written yet is dropped, and nothing more is taken."""
        self.let_go(session_id)
        self.deleted.add(session_id)

    def let_go(self, session_id: str) -> None:
        """Another instance runs the session now (`webclient.store.leases`): what it recorded here and is not written
        yet is dropped; should it come back, it is numbered after what the store holds then (`continue_numbering`)."""
        self._rows = [row for row in self._rows if row[0] != session_id]
        self._chars = sum(len(row[5]) for row in self._rows)
        self._new_sessions = [values for values in self._new_sessions if values["id"] != session_id]
        self._states.pop(session_id, None)
        self._words = [words for words in self._words if words["session_id"] != session_id]
        self._dropped.pop(session_id, None)
        self.live.discard(session_id)

    def forget(self, session_id: str) -> None:
        """Retention deleted the session: drop what the writer knows of it."""
        self.live.discard(session_id)
        self.sink.forget(session_id)

    def _dropped_notices(self) -> list[Row]:
        """A notice for each journal that lost records since the last batch, numbered after what it lost."""
        dropped, self._dropped = self._dropped, {}
        notices = []
        for session_id, count in dropped.items():
            log.warning("the journal of session %s lost %d records (the store was slow or failed)", session_id, count)
            body = f'{{"dropped": {count}, "why": "the store was too slow or failed"}}'
            notices.append((session_id, self.next_seq(session_id), time.time(), NOTICE, "store", body, self._recorded))
        return notices


def _released(waiters: list[tuple[int, asyncio.Future[None]]], reached: int) -> list[tuple[int, asyncio.Future[None]]]:
    """Tell the waiters whose target is ``reached``; the others, still waiting."""
    still: list[tuple[int, asyncio.Future[None]]] = []
    for target, waiter in waiters:
        if target <= reached:
            if not waiter.done():
                waiter.set_result(None)
        else:
            still.append((target, waiter))
    return still
