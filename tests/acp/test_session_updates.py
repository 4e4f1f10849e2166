"""Tests for the dispatch table of every ``sessionUpdate`` (webclient.acp.updates.SessionUpdates): each type this
client knows reaches the thread or the controls through it, and the others change nothing and are marked in the
protocol log."""

from __future__ import annotations

import json
from typing import Any

import pytest

from webclient.acp.protocol_log import ProtocolLog
from webclient.acp.updates import KNOWN_SESSION_UPDATES, SUBAGENT_UPDATES, SessionUpdates
from webclient.viewmodel.controls import SessionControls
from webclient.viewmodel.entries import MessageEntry, Plan, ToolCall
from webclient.viewmodel.thread import Thread

# One well-formed update of every type the table knows, and what it changes: the thread or the controls.
SAMPLES: dict[str, tuple[dict[str, Any], str]] = {
    "agent_message_chunk": ({"content": {"type": "text", "text": "Hello"}}, "thread"),
    "agent_thought_chunk": ({"content": {"type": "text", "text": "Hmm"}}, "thread"),
    "user_message_chunk": ({"content": {"type": "text", "text": "Hi"}}, "thread"),
    "tool_call": ({"toolCallId": "c1", "title": "Read a file", "status": "pending"}, "thread"),
    "tool_call_update": ({"toolCallId": "c1", "status": "completed"}, "thread"),
    "tool_call_content_chunk": ({"toolCallId": "c1", "content": {"type": "terminal", "terminalId": "t1"}}, "thread"),
    "plan": ({"entries": [{"content": "Look", "priority": "high", "status": "pending"}]}, "thread"),
    "plan_update": ({"plan": {"type": "items", "entries": [{"content": "Look"}]}}, "thread"),
    "available_commands_update": ({"availableCommands": [{"name": "web", "description": "Search"}]}, "controls"),
    "current_mode_update": ({"currentModeId": "code"}, "controls"),
    "config_option_update": (
        {"configOptions": [{"id": "web", "name": "Web", "type": "boolean", "currentValue": True}]},
        "controls",
    ),
    "session_info_update": ({"title": "A title"}, "controls"),
    "usage_update": ({"used": 100, "size": 1000}, "controls"),
    "notice": ({"severity": "info", "title": "Indexing the repository"}, "thread"),
    "compaction_update": ({"compactionId": "k1", "status": "in_progress"}, "thread"),
    "compaction_summary_chunk": ({"compactionId": "k1", "content": {"type": "text", "text": "So far"}}, "thread"),
    "agent_message": ({"messageId": "m1", "content": [{"type": "text", "text": "Whole"}]}, "thread"),
    "agent_thought": ({"messageId": "m2", "content": [{"type": "text", "text": "Hmm"}]}, "thread"),
    "user_message": ({"messageId": "m3", "content": [{"type": "text", "text": "Hi"}]}, "thread"),
    "plan_removed": ({"planId": "p1"}, "thread"),  # removes the plan the first sample made (see below)
    "terminal_update": ({"terminalId": "t1", "command": "make", "size": {"cols": 80, "rows": 24}}, "thread"),
    "terminal_output_chunk": ({"terminalId": "t1", "data": "aGk="}, "thread"),
    "state_update": (
        {"state": "idle", "stopReason": "end_turn", "background": [{"type": "terminal", "terminalId": "t1"}]},
        "thread",
    ),
}
PLAN_P1 = {"sessionUpdate": "plan_update", "plan": {"type": "markdown", "planId": "p1", "content": "1. x"}}


def session() -> tuple[SessionUpdates, Thread, SessionControls, list[Any], list[Any]]:
    thread_changes: list[Any] = []
    control_changes: list[Any] = []
    thread, controls = Thread(listener=thread_changes.append), SessionControls(listener=control_changes.append)
    return SessionUpdates(thread, controls), thread, controls, thread_changes, control_changes


def test_the_samples_cover_every_type_the_table_knows() -> None:
    # The subagent updates are routed before the table (webclient.acp.subagents: tests/acp/test_subagents.py).
    assert set(SAMPLES) == KNOWN_SESSION_UPDATES - SUBAGENT_UPDATES


@pytest.mark.parametrize("kind", sorted(SAMPLES))
def test_every_known_type_reaches_the_thread_or_the_controls(kind: str) -> None:
    updates, thread, controls, thread_changes, control_changes = session()
    fields, target = SAMPLES[kind]
    if kind == "plan_removed":
        updates.apply(PLAN_P1)
        thread_changes.clear()
    assert updates.apply({"sessionUpdate": kind, **fields}) is True
    assert (thread_changes, control_changes) != ([], [])
    assert (control_changes if target == "thread" else thread_changes) == []


def test_what_the_folds_make() -> None:
    updates, thread, controls, _, _ = session()
    for kind in ("tool_call", "tool_call_update", "tool_call_content_chunk", "agent_message_chunk", "plan"):
        updates.apply({"sessionUpdate": kind, **SAMPLES[kind][0]})
    for kind in ("current_mode_update", "session_info_update", "usage_update", "available_commands_update"):
        updates.apply({"sessionUpdate": kind, **SAMPLES[kind][0]})
    call, message, plan = thread.entries
    assert isinstance(call, ToolCall) and (call.title, call.status) == ("Read a file", "completed")
    assert isinstance(message, MessageEntry) and message.text == "Hello"
    assert isinstance(plan, Plan) and [item.content for item in plan.items] == ["Look"]
    assert (controls.current_mode, controls.title) == ("code", "A title")
    assert controls.usage is not None and controls.usage.used == 100
    assert [command.name for command in controls.commands] == ["web"]


@pytest.mark.parametrize(
    "update",
    [
        {"sessionUpdate": "_vendor_thing", "x": 1},
        {"sessionUpdate": "agent_message_chunk_v3", "content": {"type": "text", "text": "x"}},
        {"sessionUpdate": None},
        {"sessionUpdate": ["agent_message_chunk"]},
        {"sessionUpdate": {"type": "plan"}},
        {"content": {"type": "text", "text": "no type"}},
        "agent_message_chunk",
        None,
    ],
)
def test_unknown_types_change_nothing(update: Any) -> None:
    updates, thread, controls, thread_changes, control_changes = session()
    assert updates.apply(update) is False
    assert len(thread) == 0 and thread_changes == [] and control_changes == []


@pytest.mark.parametrize(
    "update",
    [
        {"sessionUpdate": "tool_call", "title": "no id"},
        {"sessionUpdate": "tool_call_content_chunk", "toolCallId": "c1"},
        {"sessionUpdate": "plan_update", "plan": {"type": "markdown", "text": "1. x"}},
        {"sessionUpdate": "plan_update", "plan": {"type": "markdown", "planId": "p", "text": "1. x"}},
        {"sessionUpdate": "plan_update", "plan": {"type": "file", "planId": "p"}},
        {"sessionUpdate": "plan_removed", "planId": "never-made"},
        {"sessionUpdate": "agent_message", "content": []},
        {"sessionUpdate": "agent_message", "messageId": "m", "content": "text"},
        {"sessionUpdate": "terminal_update"},
        {"sessionUpdate": "terminal_output_chunk", "terminalId": "t", "data": "not base64!"},
        {"sessionUpdate": "current_mode_update"},
        {"sessionUpdate": "usage_update", "used": "many"},
    ],
)
def test_malformed_updates_of_known_types_are_not_applied(update: dict[str, Any]) -> None:
    updates, thread, _, thread_changes, control_changes = session()
    assert updates.apply(update) is False
    assert len(thread) == 0 and thread_changes == [] and control_changes == []


def notification(update: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    message = {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": update}}
    return json.dumps(message), message


@pytest.mark.parametrize("decoded", [True, False], ids=["decoded by the peer", "decoded by the log"])
def test_unknown_types_stay_in_the_protocol_log_marked(decoded: bool) -> None:
    log = ProtocolLog()
    for kind, (fields, _) in SAMPLES.items():
        text, message = notification({"sessionUpdate": kind, **fields})
        entry = log.record("in", text, message) if decoded else log.record("in", text)
        assert (entry.update, entry.unknown_update) == (kind, False)
    text, message = notification({"sessionUpdate": "_vendor_thing", "x": 1})
    entry = log.record("in", text, message) if decoded else log.record("in", text)
    assert (entry.kind, entry.method, entry.update, entry.unknown_update) == (
        "notification",
        "session/update",
        "_vendor_thing",
        True,
    )
    assert entry.text == text
    assert log.update_types == (KNOWN_SESSION_UPDATES - SUBAGENT_UPDATES) | {"_vendor_thing"}
