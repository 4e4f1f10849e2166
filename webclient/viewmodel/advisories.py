"""What the agent says about its own work rather than the conversation: notices, compactions, a turn's usage.

Operations on a :class:`~webclient.viewmodel.thread.Thread` kept out of ``thread.py`` (which is at its size
limit). A compaction is one entry per id, placed where the agent first mentioned it and updated in place.
"""

from __future__ import annotations

from typing import Any
from weakref import WeakKeyDictionary

from webclient.viewmodel.entries import Compaction, Notice, TurnUsage
from webclient.viewmodel.thread import Thread

NOTICE_LEVELS = frozenset({"info", "warning", "error"})

_compactions: WeakKeyDictionary[Thread, dict[str, Compaction]] = WeakKeyDictionary()
"""Each thread's compactions by id (a thread has no field for them; an entry dropped from the thread is forgotten
when next asked for)."""


def add_agent_notice(thread: Thread, severity: str, title: str, description: str = "") -> Notice:
    """The agent's advisory: a severity this client does not know is shown as info, and named."""
    known = severity in NOTICE_LEVELS
    notice = Notice(
        seq=0,
        turn=thread.turn,
        level=severity if known else "info",  # type: ignore[arg-type]
        title=title,
        detail=description,
        by_agent=True,
        severity="" if known else severity,
    )
    return thread.add_entry(notice)


def compaction(thread: Thread, compaction_id: str) -> Compaction:
    """The compaction ``compaction_id``: made (in progress, at the end of the thread) on first sight."""
    known = _compactions.setdefault(thread, {})
    entry = known.get(compaction_id)
    if entry is None or thread.get(entry.seq) is not entry:
        entry = Compaction(seq=0, turn=thread.turn, compaction_id=compaction_id)
        known[compaction_id] = thread.add_entry(entry)
    return entry


def update_compaction(thread: Thread, compaction_id: str, patch: dict[str, Any]) -> Compaction:
    """Patch a compaction: ``status``, ``summary`` (the whole text) and ``error``; None clears a field."""
    entry = compaction(thread, compaction_id)
    if "status" in patch:
        entry.status = patch["status"]
    if "summary" in patch:
        entry.summary_parts = [patch["summary"]] if patch["summary"] else []
    if "error" in patch:
        entry.error = patch["error"]
    thread.listener(entry.change)
    return entry


def append_summary(thread: Thread, compaction_id: str, text: str) -> Compaction:
    """Add a streamed piece to a compaction's summary."""
    entry = compaction(thread, compaction_id)
    entry.summary_parts.append(text)
    thread.listener(entry.change)
    return entry


def add_turn_usage(thread: Thread, usage: TurnUsage) -> TurnUsage:
    """Show what the turn used, at its end."""
    usage.turn = thread.turn
    return thread.add_entry(usage)
