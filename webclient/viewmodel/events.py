"""What a watcher is told when the view model changes: which entry, which terminal, or which other part.

The view model speaks of its own state, never of the page: the web layer decides which markup shows each
change. The thread reports a change once per streamed chunk, so these events are cheap to pass around: an
entry's and a terminal's event is made once and kept on it, and events are hashable (a watcher keeps the
changed parts in a dict until it next renders).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


@dataclass(frozen=True, slots=True)
class EntryChanged:
    """The thread entry numbered ``seq`` was added or changed."""

    seq: int

    def __hash__(self) -> int:  # the generated one hashes a tuple: twice the cost, once per chunk
        return self.seq


@dataclass(frozen=True, slots=True)
class TerminalChanged:
    """The terminal numbered ``number`` (in order of first mention) has new output or a new state."""

    number: int

    def __hash__(self) -> int:
        return self.number


class Region(StrEnum):
    """A part of the session's state that is neither an entry nor a terminal."""

    STATUS = "status"
    """The agent's state, the turn, the title and usage."""
    CONTROLS = "controls"
    """Modes, models and settings."""
    COMMANDS = "commands"
    """The slash commands the agent accepts."""
    QUEUE = "queue"
    """Prompts waiting for the turn to end."""
    PLAN = "plan"
    """The current plan (the page keeps it in view while the agent works on it)."""
    CHANGES = "changes"
    """The files changed in the session's folders."""
    LOCATION = "location"
    """Where the agent last said it was working."""
    DROPPED = "dropped"
    """The thread let go of its oldest entries to bound its memory."""


Change = EntryChanged | TerminalChanged | Region
