"""Where a session's journal goes: a neutral interface the session and its agent's adapter write to.

A store (`webclient.store`) implements it; the session layer never imports the store. Without one, every call
goes to `NO_RECORDER`, which keeps nothing.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from webclient.people.roles import Share
from webclient.session.agent_spec import AgentSpec

PROTOCOL = "protocol"
"""A protocol message, as the line that went over the wire (direction ``in``, ``out``, or ``garbage``)."""
ACTION = "action"
"""Something the user did (direction ``user``): a JSON object with its ``action`` and arguments."""
TERMINAL = "terminal"
"""A terminal's life and output (direction ``agent``): a JSON object with the terminal's id."""
FILE = "file"
"""A file the agent wrote through the client (direction ``agent``): path, old and new text as JSON."""
ORIGINAL = "original"
"""A file as it was when the session began (direction ``agent``), recorded the first time it is listed as
changed: its path and content (None: it did not exist) as JSON, bytes that are not UTF-8 as lone surrogates."""
NOTICE = "notice"
"""Something the store itself says about the journal (records it had to drop)."""
SESSION = "session"
"""What the session itself showed (direction ``session``): a turn's start with its prompt, its end, a Stop, a
notice; a JSON object with its ``event``. With the protocol's messages, what rebuilds the thread after a restart."""


class Recorder(Protocol):
    """One session's journal. ``record`` is called on the streaming hot path: it must only append."""

    def record(self, kind: str, direction: str, body: str) -> None:
        """Append one entry, stamped with the time now and the next number of the session's journal."""

    def state(self, state: str, title: str | None, agent: str | None, turns: int) -> None:
        """The session's state (its turn state, or ``ended``), title, what the agent calls itself and how many turns
        it had, as they are now."""

    def words(self, role: str, text: str, entry_seq: int | None = None) -> None:
        """The text of one finished message (``role``: ``user`` or ``agent``), for the search over transcripts;
        ``entry_seq`` is its entry's number in the thread, which a search's hit links to."""

    async def flush(self) -> None:
        """Return once everything recorded before the call is written."""


JournalRow = tuple[str, str, str]
"""One record of a journal, as stored: its kind, direction and body."""


@dataclass(frozen=True, slots=True)
class StoredSession:
    """A session as the store keeps it: enough to rebuild its page, and the journal to go on with."""

    id: str
    agent: str
    """Its agent's name in the catalogue."""
    command: str
    """The command line that started its agent."""
    workspace: Path
    created: float
    journal: AsyncIterator[Sequence[JournalRow]]
    """Every record, in order, in batches (read while the previous batch is replayed)."""
    recorder: Recorder
    """Its journal, where what happens from now on is recorded after what is there."""
    owner: str | None = None
    """The id of the person who owns it (None: from before people; admins only)."""
    shares: list[Share] = field(default_factory=list)
    """Whom its owner shared it with (`webclient.people.roles`)."""


class SessionRecords(Protocol):
    """Opens the journal of each new session, and of a stored one (a store)."""

    def open_journal(
        self, session_id: str, agent: str, spec: AgentSpec, created: float, owner: str | None = None
    ) -> Recorder:
        """The journal of a session of the catalogue's agent ``agent`` that starts now, owned by the person whose id
        is ``owner``; its row is written with the first batch."""

    async def reopen(self, session_id: str) -> StoredSession | None:
        """The stored session ``session_id`` with its whole journal, or None when there is none. The journal must be
        read to its end."""

    def seal(self) -> None:
        """Record nothing more (the server stops)."""

    async def delete(self, session_id: str) -> None:
        """Forget the session: its row, its journal and what else the store keeps of it; records still on their way
        are dropped."""


class NoRecorder:
    """Keeps nothing: the recorder of a session without a store."""

    def record(self, kind: str, direction: str, body: str) -> None:
        pass

    def state(self, state: str, title: str | None, agent: str | None, turns: int) -> None:
        pass

    def words(self, role: str, text: str, entry_seq: int | None = None) -> None:
        pass

    async def flush(self) -> None:
        pass


NO_RECORDER: Recorder = NoRecorder()
