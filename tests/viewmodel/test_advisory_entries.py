"""Tests for webclient.viewmodel.advisories: the thread operations behind the agent's notices, compactions and a
turn's usage, and what the thread tells its listener."""

from __future__ import annotations

from webclient.viewmodel.advisories import (
    add_agent_notice,
    add_turn_usage,
    append_summary,
    compaction,
    update_compaction,
)
from webclient.viewmodel.content import TextBlock
from webclient.viewmodel.entries import Compaction, MessageEntry, Notice, TurnUsage
from webclient.viewmodel.events import Change, EntryChanged
from webclient.viewmodel.thread import Thread


def test_an_agent_notice_is_a_notice_marked_as_the_agents() -> None:
    changes: list[Change] = []
    thread = Thread(changes.append)
    known = add_agent_notice(thread, "error", "Model unavailable", "Falling back")
    other = add_agent_notice(thread, "_vendor", "Custom")
    assert list(thread) == [known, other] and changes == [EntryChanged(1), EntryChanged(2)]
    assert isinstance(known, Notice) and (known.level, known.severity, known.by_agent) == ("error", "", True)
    assert (other.level, other.severity, other.detail) == ("info", "_vendor", "")
    client = thread.add_notice("info", "The turn ended")
    assert not client.by_agent and client.severity == ""


def test_a_compaction_is_found_by_id_and_each_change_is_told() -> None:
    changes: list[Change] = []
    thread = Thread(changes.append)
    entry = compaction(thread, "k")
    assert compaction(thread, "k") is entry and len(thread) == 1
    assert isinstance(entry, Compaction) and entry.status == "in_progress"
    changes.clear()
    append_summary(thread, "k", "a")
    append_summary(thread, "k", "b")
    update_compaction(thread, "k", {"status": "completed"})
    assert changes == [entry.change] * 3
    assert (entry.summary, entry.status) == ("ab", "completed")
    update_compaction(thread, "k", {"summary": "whole", "error": "e"})
    assert (entry.summary, entry.error) == ("whole", "e")
    update_compaction(thread, "k", {"summary": None, "status": None})
    assert (entry.summary, entry.status, entry.error) == ("", None, "e")


def test_compactions_are_per_thread() -> None:
    one, two = Thread(), Thread()
    assert compaction(one, "k") is not compaction(two, "k")
    assert len(one) == len(two) == 1


def test_a_turns_usage_belongs_to_the_current_turn_and_closes_the_streaming_message() -> None:
    thread = Thread()
    thread.start_turn([])
    thread.append_message("agent-message", TextBlock("Done.", {"type": "text", "text": "Done."}))
    message = thread.last
    assert isinstance(message, MessageEntry) and message.streaming
    usage = add_turn_usage(thread, TurnUsage(seq=0, turn=0, total=3, input=2, output=1))
    assert usage.turn == thread.turn == 1 and thread.last is usage
    assert not message.streaming
