"""Tests for webclient.acp.advisories: ``notice``, ``compaction_update``/``compaction_summary_chunk`` and a turn's
``usage`` folded into a Thread, from the wire shapes of ../shared/acp-schema/ (v1 ``Notice``, ``CompactionUpdate``,
``CompactionSummaryChunk``, ``Usage``)."""

from __future__ import annotations

from typing import Any

import pytest

from webclient.acp.advisories import turn_usage
from webclient.acp.connection import BASE_CAPABILITIES
from webclient.acp.updates import KNOWN_SESSION_UPDATES, apply_update
from webclient.viewmodel.entries import Compaction, MessageEntry, Notice, TurnUsage
from webclient.viewmodel.events import Change, EntryChanged
from webclient.viewmodel.thread import Thread


def feed(thread: Thread, *updates: dict[str, Any]) -> None:
    for update in updates:
        assert apply_update(thread, update) is True, update


def compaction(cid: str = "c1", **fields: Any) -> dict[str, Any]:
    return {"sessionUpdate": "compaction_update", "compactionId": cid, **fields}


def summary_chunk(cid: str, text: str) -> dict[str, Any]:
    return {"sessionUpdate": "compaction_summary_chunk", "compactionId": cid, "content": {"type": "text", "text": text}}


def test_the_three_updates_are_known_and_the_capabilities_are_advertised() -> None:
    assert {"notice", "compaction_update", "compaction_summary_chunk"} <= KNOWN_SESSION_UPDATES
    assert BASE_CAPABILITIES["session"]["compaction"] == {}
    assert BASE_CAPABILITIES["session"]["notices"] == {}


@pytest.mark.parametrize("severity", ["info", "warning", "error"])
def test_a_notice_of_a_known_severity_is_an_agent_notice_of_that_level(severity: str) -> None:
    thread = Thread()
    feed(thread, {"sessionUpdate": "notice", "severity": severity, "title": "Rate limited", "description": "Wait 5 s"})
    (entry,) = thread
    assert isinstance(entry, Notice)
    assert (entry.level, entry.title, entry.detail, entry.by_agent, entry.severity) == (
        severity,
        "Rate limited",
        "Wait 5 s",
        True,
        "",
    )


@pytest.mark.parametrize("severity", ["_custom", "critical", 7, None])
def test_a_notice_of_another_severity_shows_as_info_and_keeps_its_name(severity: Any) -> None:
    thread = Thread()
    feed(thread, {"sessionUpdate": "notice", "severity": severity, "title": "Heads up"})
    (entry,) = thread
    assert isinstance(entry, Notice) and entry.level == "info" and entry.detail == ""
    assert entry.severity == (severity if isinstance(severity, str) else "")


@pytest.mark.parametrize("title", [None, "", "   ", 3, ["x"]])
def test_a_notice_without_a_title_is_not_applied(title: Any) -> None:
    thread = Thread()
    update = {"sessionUpdate": "notice", "severity": "info"} | ({} if title is None else {"title": title})
    assert apply_update(thread, update) is False
    assert len(thread) == 0


def test_a_notice_is_not_a_reply_of_the_turn() -> None:
    thread = Thread()
    thread.start_turn([])
    feed(thread, {"sessionUpdate": "notice", "severity": "info", "title": "Indexing"})
    assert not thread.turn_replied


def test_a_compaction_is_one_entry_updated_in_place_through_its_life() -> None:
    changes: list[Change] = []
    thread = Thread(changes.append)
    feed(thread, compaction(status="in_progress"))
    (entry,) = thread
    assert isinstance(entry, Compaction) and entry.status == "in_progress" and entry.summary == ""
    feed(thread, {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "meanwhile"}})
    changes.clear()
    feed(
        thread, summary_chunk("c1", "The user wants "), summary_chunk("c1", "a parser."), compaction(status="completed")
    )
    assert changes == [EntryChanged(entry.seq)] * 3
    assert [type(e) for e in thread] == [Compaction, MessageEntry]  # where it was first mentioned
    assert entry.status == "completed" and entry.summary == "The user wants a parser." and entry.error is None


def test_a_compaction_update_is_a_patch_omitted_keeps_null_clears() -> None:
    thread = Thread()
    summary = [{"type": "text", "text": "Old "}, {"type": "text", "text": "summary"}]
    feed(thread, compaction(status="in_progress", summary=summary, error="slow"))
    (entry,) = thread
    assert isinstance(entry, Compaction) and entry.summary == "Old summary" and entry.error == "slow"
    feed(thread, compaction(status="failed"))
    assert (entry.status, entry.summary, entry.error) == ("failed", "Old summary", "slow")
    feed(thread, compaction(summary=None, error=None))
    assert (entry.status, entry.summary, entry.error) == ("failed", "", None)
    feed(thread, compaction(summary=[{"type": "text", "text": "New"}]), compaction(summary=[]))
    assert entry.summary == ""
    feed(thread, compaction(status="_vendor_paused", error=42, summary="not a list"))  # wrong types are left out
    assert (entry.status, entry.summary, entry.error) == ("_vendor_paused", "", None)


def test_compactions_are_kept_apart_by_id_and_a_chunk_makes_one_on_first_sight() -> None:
    thread = Thread()
    feed(thread, summary_chunk("a", "first"), compaction("b", status="in_progress"), summary_chunk("a", " more"))
    first, second = thread
    assert isinstance(first, Compaction) and isinstance(second, Compaction)
    assert (first.compaction_id, first.status, first.summary) == ("a", "in_progress", "first more")
    assert (second.compaction_id, second.summary) == ("b", "")


def test_a_summary_chunk_that_is_not_text_is_named_not_lost() -> None:
    thread = Thread()
    chunk = {"sessionUpdate": "compaction_summary_chunk", "compactionId": "c", "content": {"type": "image"}}
    feed(thread, chunk)
    (entry,) = thread
    assert isinstance(entry, Compaction) and entry.summary == "[Unknown]"


@pytest.mark.parametrize(
    "update",
    [
        {"sessionUpdate": "compaction_update", "status": "completed"},
        {"sessionUpdate": "compaction_update", "compactionId": 5},
        {"sessionUpdate": "compaction_summary_chunk", "compactionId": "c"},
        {"sessionUpdate": "compaction_summary_chunk", "content": {"type": "text", "text": "x"}},
    ],
)
def test_a_malformed_compaction_update_is_not_applied(update: dict[str, Any]) -> None:
    thread = Thread()
    assert apply_update(thread, update) is False
    assert len(thread) == 0


def test_a_compaction_dropped_from_a_capped_thread_starts_again_at_the_end() -> None:
    thread = Thread(max_entries=10)
    feed(thread, compaction("old", status="in_progress"))
    for i in range(20):
        thread.add_notice("info", f"n{i}")
    assert not any(isinstance(e, Compaction) for e in thread)
    feed(thread, summary_chunk("old", "late"))
    last = thread.last
    assert isinstance(last, Compaction) and last.summary == "late"


def test_a_turns_usage_is_shown_at_its_end_with_the_optional_counts() -> None:
    thread = Thread()
    thread.start_turn([])
    usage = {"totalTokens": 1234, "inputTokens": 900, "outputTokens": 334, "thoughtTokens": 12, "cachedReadTokens": 0}
    entry = turn_usage(thread, usage)
    assert isinstance(entry, TurnUsage) and thread.last is entry and entry.turn == 1
    assert (entry.total, entry.input, entry.output, entry.thought, entry.cached_read, entry.cached_write) == (
        1234,
        900,
        334,
        12,
        0,
        None,
    )
    assert not thread.turn_replied  # usage alone is not a reply: the session still says the agent said nothing


@pytest.mark.parametrize(
    "usage",
    [
        None,
        "1234",
        {},
        {"totalTokens": 10, "inputTokens": 5},
        {"totalTokens": -1, "inputTokens": 0, "outputTokens": 0},
        {"totalTokens": True, "inputTokens": 0, "outputTokens": 0},
        {"totalTokens": 1.5, "inputTokens": 0, "outputTokens": 0},
    ],
)
def test_a_missing_or_malformed_usage_shows_nothing(usage: Any) -> None:
    thread = Thread()
    assert turn_usage(thread, usage) is None
    assert len(thread) == 0


def test_a_malformed_optional_count_is_left_out() -> None:
    thread = Thread()
    entry = turn_usage(thread, {"totalTokens": 3, "inputTokens": 1, "outputTokens": 2, "thoughtTokens": "many"})
    assert entry is not None and entry.thought is None
