"""Who did something a card shows (a prompt sent, a question answered), and when: in a session more than one
person uses, each card names its person. Plain state: the session layer makes it from whoever acted."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime


@dataclass(frozen=True, slots=True)
class By:
    id: str
    """The person's stable id."""
    name: str
    """What the card shows (their name, else their id): untrusted text, shown escaped."""
    at: float
    """Seconds since the epoch."""

    @property
    def clock(self) -> str:
        """The time as the card shows it: ``HH:MM``, UTC (the server's, like the ``datetime`` attribute)."""
        return datetime.fromtimestamp(self.at, UTC).strftime("%H:%M")

    @property
    def iso(self) -> str:
        return datetime.fromtimestamp(self.at, UTC).isoformat(timespec="seconds")
