"""Tests for webclient.acp.updates: ACP v1 and v2-draft ``session/update`` objects folded into a Thread.

Driven the way the app drives it: ``apply_update(thread, update)`` with the wire dicts an agent sends
(spec pages in /work/shared/seeds/), then reading the thread's entries.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from webclient.acp.updates import apply_update, content_block
from webclient.viewmodel.content import (
    AudioBlock,
    Diff,
    EmbeddedResource,
    ImageBlock,
    Location,
    PlanItem,
    ResourceLink,
    TerminalRef,
    TextBlock,
    Unknown,
)
from webclient.viewmodel.entries import MessageEntry, Plan, ToolCall
from webclient.viewmodel.events import Change, EntryChanged, Region
from webclient.viewmodel.thread import Thread

# -- helpers -------------------------------------------------------------------------------------


def feed(thread: Thread, *updates: dict[str, Any]) -> None:
    for update in updates:
        assert apply_update(thread, update) is True, update


def chunk(text: str, message_id: str | None = None, kind: str = "agent_message_chunk") -> dict[str, Any]:
    update: dict[str, Any] = {"sessionUpdate": kind, "content": {"type": "text", "text": text}}
    if message_id is not None:
        update["messageId"] = message_id
    return update


def tool(call_id: str, session_update: str = "tool_call_update", **fields: Any) -> dict[str, Any]:
    return {"sessionUpdate": session_update, "toolCallId": call_id, **fields}


def item(text: str) -> dict[str, Any]:
    """A ``ToolCallContent`` wrapping a text block."""
    return {"type": "content", "content": {"type": "text", "text": text}}


def content_chunk(call_id: str, content: Any) -> dict[str, Any]:
    return {"sessionUpdate": "tool_call_content_chunk", "toolCallId": call_id, "content": content}


def texts(call: ToolCall) -> list[str]:
    return [block.text if isinstance(block, TextBlock) else f"<{block.type}>" for block in call.content]


def messages(thread: Thread) -> list[tuple[str, str]]:
    return [(e.kind, e.text) for e in thread if isinstance(e, MessageEntry)]


def only_call(thread: Thread) -> ToolCall:
    (call,) = [e for e in thread if isinstance(e, ToolCall)]
    return call


# -- messages ------------------------------------------------------------------------------------


def test_agent_message_chunks_append_to_current_message() -> None:
    thread = Thread()
    feed(thread, chunk("Hel"), chunk("lo, "), chunk("world"))
    assert messages(thread) == [("agent-message", "Hello, world")]


def test_agent_message_new_message_id_starts_new_message() -> None:
    thread = Thread()
    feed(thread, chunk("one", "m1"), chunk(" more", "m1"), chunk("two", "m2"))
    assert messages(thread) == [("agent-message", "one more"), ("agent-message", "two")]
    first, second = thread.entries
    assert isinstance(first, MessageEntry) and isinstance(second, MessageEntry)
    assert (first.message_id, second.message_id) == ("m1", "m2")
    assert first.streaming is False and second.streaming is True


def test_agent_message_chunks_without_id_continue_current_message() -> None:
    thread = Thread()
    feed(thread, chunk("a", "m1"), chunk("b"), chunk("c"), chunk("d", "m1"))
    assert messages(thread) == [("agent-message", "abcd")]


def test_agent_message_first_id_after_anonymous_chunks_continues() -> None:
    thread = Thread()
    feed(thread, chunk("a"), chunk("b", "m1"), chunk("c", "m2"))
    assert messages(thread) == [("agent-message", "ab"), ("agent-message", "c")]
    assert isinstance(thread.entry(1), MessageEntry) and thread.entry(1).message_id == "m1"  # type: ignore[attr-defined]


def test_thought_chunks_go_to_thought_entry() -> None:
    thread = Thread()
    feed(
        thread,
        chunk("Let me ", kind="agent_thought_chunk"),
        chunk("think.", kind="agent_thought_chunk"),
        chunk("Answer.", "m1"),
        chunk("Again?", kind="agent_thought_chunk"),
    )
    assert messages(thread) == [("thought", "Let me think."), ("agent-message", "Answer."), ("thought", "Again?")]
    assert [e.role for e in thread] == ["thought", "agent-message", "thought"]


def test_tool_call_between_message_chunks_splits_message() -> None:
    thread = Thread()
    feed(thread, chunk("Before "), tool("c1", "tool_call", title="Read"), chunk("after"))
    assert [e.role for e in thread] == ["agent-message", "tool-call", "agent-message"]
    assert messages(thread) == [("agent-message", "Before "), ("agent-message", "after")]


def test_message_stops_streaming_when_new_entry_starts() -> None:
    thread = Thread()
    feed(thread, chunk("thinking", kind="agent_thought_chunk"))
    thought = thread.entry(1)
    assert isinstance(thought, MessageEntry) and thought.streaming
    feed(thread, chunk("reply"))
    assert thought.streaming is False
    reply = thread.entry(2)
    assert isinstance(reply, MessageEntry) and reply.streaming
    feed(thread, {"sessionUpdate": "plan", "entries": []})
    assert reply.streaming is False


def test_update_of_existing_tool_call_does_not_split_message() -> None:
    thread = Thread()
    feed(thread, tool("c1", "tool_call", title="Run"), chunk("one "))
    feed(thread, tool("c1", status="completed"), content_chunk("c1", item("out")), chunk("two"))
    assert messages(thread) == [("agent-message", "one two")]


def test_end_turn_closes_streaming_message_and_next_chunk_starts_new_one() -> None:
    thread = Thread()
    feed(thread, chunk("done"))
    thread.end_turn()
    first = thread.entry(1)
    assert isinstance(first, MessageEntry) and first.streaming is False
    feed(thread, chunk("late"))
    assert messages(thread) == [("agent-message", "done"), ("agent-message", "late")]


def test_message_non_text_blocks_become_attachments() -> None:
    thread = Thread()
    image = {"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="}
    link = {"type": "resource_link", "uri": "file:///src/main.py", "name": "main.py"}
    feed(
        thread,
        chunk("See "),
        {"sessionUpdate": "agent_message_chunk", "content": image},
        {"sessionUpdate": "agent_message_chunk", "content": link},
        chunk("these."),
    )
    (message,) = thread.entries
    assert isinstance(message, MessageEntry)
    assert message.text == "See these."
    assert [a.type for a in message.attachments] == ["image", "resource_link"]
    assert message.attachments[0] == ImageBlock(mime_type="image/png", data="iVBORw0KGgo=")
    assert message.attachments[1] == ResourceLink(uri="file:///src/main.py", name="main.py")


def test_message_malformed_content_becomes_unknown_attachment() -> None:
    thread = Thread()
    feed(thread, {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": 5}})
    (message,) = thread.entries
    assert isinstance(message, MessageEntry) and message.text == ""
    assert message.attachments == [Unknown(kind="text", raw={"type": "text", "text": 5})]


def test_user_message_chunk_echoing_local_prompt_is_not_shown_twice() -> None:
    thread = Thread()
    thread.start_turn([TextBlock(text="fix the bug")])
    feed(thread, chunk("fix the ", kind="user_message_chunk"), chunk("bug", kind="user_message_chunk"))
    assert messages(thread) == [("user-message", "fix the bug")]
    feed(thread, chunk("On it."))
    assert messages(thread) == [("user-message", "fix the bug"), ("agent-message", "On it.")]


def test_user_message_chunk_with_different_text_is_shown() -> None:
    thread = Thread()
    thread.start_turn([TextBlock(text="fix the bug")])
    feed(thread, chunk("something else", kind="user_message_chunk"))
    assert messages(thread) == [("user-message", "fix the bug"), ("user-message", "something else")]
    replayed = thread.entry(2)
    assert isinstance(replayed, MessageEntry) and replayed.local is False


def test_user_message_chunks_replayed_without_local_prompt_are_shown() -> None:
    thread = Thread()
    feed(thread, chunk("old ", kind="user_message_chunk"), chunk("prompt", kind="user_message_chunk"), chunk("ok"))
    assert messages(thread) == [("user-message", "old prompt"), ("agent-message", "ok")]


def test_listener_receives_seq_of_changed_entry_for_every_update() -> None:
    calls: list[Change] = []
    thread = Thread(listener=calls.append)
    e1, e2, e3, e4 = (EntryChanged(seq) for seq in (1, 2, 3, 4))
    feed(thread, chunk("a"))
    assert calls == [e1]
    feed(thread, chunk("b"))
    assert calls == [e1, e1]
    feed(thread, tool("c1", "tool_call", title="Read"))  # closes message 1, adds call 2
    assert calls == [e1, e1, e1, e2]
    feed(thread, chunk("c"))
    assert calls == [e1, e1, e1, e2, e3]
    feed(thread, tool("c1", status="completed"))
    assert calls[-1] == e2
    feed(thread, content_chunk("c1", item("x")))
    assert calls[-1] == e2
    feed(thread, {"sessionUpdate": "plan", "entries": []})  # closes message 3, adds plan 4
    assert calls[-3:] == [e3, e4, Region.PLAN]
    feed(thread, {"sessionUpdate": "plan", "entries": []})
    assert calls[-2:] == [e4, Region.PLAN]
    assert len(calls) == 12


# -- tool calls: creating and patching -----------------------------------------------------------

FULL_CALL: dict[str, Any] = {
    "sessionUpdate": "tool_call",
    "toolCallId": "call_001",
    "title": "Reading configuration file",
    "kind": "read",
    "status": "in_progress",
    "content": [item("Found 3 configuration files...")],
    "locations": [{"path": "/home/user/project/src/main.py", "line": 42}],
    "rawInput": {"path": "config.json"},
    "rawOutput": {"bytes": 12},
}


def test_tool_call_creates_with_all_fields() -> None:
    thread = Thread()
    feed(thread, copy.deepcopy(FULL_CALL))
    call = only_call(thread)
    assert thread.tool_call("call_001") is call
    assert call.role == "tool-call"
    assert call.title == "Reading configuration file"
    assert call.kind == "read"
    assert call.status == "in_progress"
    assert texts(call) == ["Found 3 configuration files..."]
    assert call.locations == [Location(path="/home/user/project/src/main.py", line=42)]
    assert call.raw_input == {"path": "config.json"}
    assert call.raw_output == {"bytes": 12}


def test_tool_call_status_defaults_to_pending() -> None:
    thread = Thread()
    feed(thread, tool("c1", "tool_call", title="Read"))
    call = only_call(thread)
    assert call.status is None
    assert call.effective_status == "pending"
    assert call.finished is False
    assert (call.kind, call.content, call.locations, call.raw_input, call.raw_output) == (None, [], [], None, None)


def test_tool_call_update_patches_only_present_fields() -> None:
    thread = Thread()
    feed(thread, copy.deepcopy(FULL_CALL), tool("call_001", status="completed"))
    call = only_call(thread)
    assert call.status == "completed"
    assert call.title == "Reading configuration file"
    assert call.kind == "read"
    assert texts(call) == ["Found 3 configuration files..."]
    assert call.locations == [Location(path="/home/user/project/src/main.py", line=42)]
    assert call.raw_input == {"path": "config.json"}
    assert call.raw_output == {"bytes": 12}


@pytest.mark.parametrize(
    ("wire", "attribute", "cleared"),
    [
        ("title", "title", None),
        ("kind", "kind", None),
        ("status", "status", None),
        ("rawInput", "raw_input", None),
        ("rawOutput", "raw_output", None),
        ("content", "content", []),
        ("locations", "locations", []),
    ],
)
def test_tool_call_update_null_clears_field(wire: str, attribute: str, cleared: Any) -> None:
    thread = Thread()
    feed(thread, copy.deepcopy(FULL_CALL))
    call = only_call(thread)
    assert getattr(call, attribute) not in (None, [])
    feed(thread, tool("call_001", **{wire: None}))
    assert getattr(call, attribute) == cleared
    assert wire not in call.raw
    others = {"title", "kind", "status", "raw_input", "raw_output", "content", "locations"} - {attribute}
    assert all(getattr(call, name) not in (None, []) for name in others)


def test_tool_call_update_null_status_falls_back_to_pending() -> None:
    thread = Thread()
    feed(thread, tool("c1", "tool_call", status="failed"), tool("c1", status=None))
    assert only_call(thread).effective_status == "pending"


def test_tool_call_update_replaces_content_and_locations_as_whole_arrays() -> None:
    thread = Thread()
    feed(
        thread,
        tool("c1", "tool_call", content=[item("a"), item("b")], locations=[{"path": "/a"}, {"path": "/b"}]),
        tool("c1", content=[item("c")], locations=[{"path": "/c", "line": 3}]),
    )
    call = only_call(thread)
    assert texts(call) == ["c"]
    assert call.locations == [Location(path="/c", line=3)]


def test_tool_call_update_empty_arrays_clear_content_and_locations() -> None:
    thread = Thread()
    feed(thread, copy.deepcopy(FULL_CALL), tool("call_001", content=[], locations=[]))
    call = only_call(thread)
    assert call.content == [] and call.locations == []
    assert call.raw["content"] == [] and call.raw["locations"] == []


def test_tool_call_update_for_unknown_id_creates_call() -> None:
    thread = Thread()
    feed(thread, tool("v2call", title="Searching", kind="search", status="in_progress"))
    call = only_call(thread)
    assert (call.tool_call_id, call.title, call.kind, call.status) == ("v2call", "Searching", "search", "in_progress")


def test_tool_call_repeated_for_same_id_upserts_instead_of_duplicating() -> None:
    thread = Thread()
    feed(thread, tool("c1", "tool_call", title="Read", kind="read"), tool("c1", "tool_call", status="completed"))
    call = only_call(thread)
    assert len(thread) == 1
    assert (call.title, call.kind, call.status) == ("Read", "read", "completed")


def test_tool_call_content_chunk_appends_one_item() -> None:
    thread = Thread()
    feed(thread, tool("c1", "tool_call", content=[item("a")]), content_chunk("c1", item("b")))
    feed(thread, content_chunk("c1", {"type": "terminal", "terminalId": "term_1"}))
    call = only_call(thread)
    assert texts(call) == ["a", "b", "<terminal>"]
    assert call.content[2] == TerminalRef(terminal_id="term_1")


def test_tool_call_content_chunk_for_unknown_id_creates_call() -> None:
    thread = Thread()
    feed(thread, content_chunk("c9", item("first")))
    call = only_call(thread)
    assert call.tool_call_id == "c9" and texts(call) == ["first"]
    assert call.effective_status == "pending"


def test_tool_call_update_content_replaces_accumulated_chunks() -> None:
    thread = Thread()
    feed(thread, tool("c1", "tool_call"), content_chunk("c1", item("a")), content_chunk("c1", item("b")))
    feed(thread, tool("c1", content=[item("X")]))
    call = only_call(thread)
    assert texts(call) == ["X"]
    feed(thread, content_chunk("c1", item("c")), content_chunk("c1", item("d")))
    assert texts(call) == ["X", "c", "d"]
    assert [entry["content"]["text"] for entry in call.raw["content"]] == ["X", "c", "d"]


@pytest.mark.parametrize("clear", [[], None])
def test_tool_call_update_clear_content_then_chunks_append(clear: Any) -> None:
    thread = Thread()
    feed(thread, content_chunk("c1", item("a")), tool("c1", content=clear), content_chunk("c1", item("b")))
    call = only_call(thread)
    assert texts(call) == ["b"]
    assert call.raw["content"] == [item("b")]


def test_tool_call_ordering_preserved_across_interleaved_updates_and_chunks() -> None:
    thread = Thread()
    expected: dict[str, list[str]] = {"a": [], "b": []}
    feed(thread, tool("a", "tool_call", title="A"), tool("b", "tool_call", title="B"))
    for step in range(30):
        call_id = "ab"[step % 2]
        if step % 7 == 6:
            feed(thread, tool(call_id, content=[item(f"r{step}")], status="in_progress"))
            expected[call_id] = [f"r{step}"]
        else:
            feed(thread, content_chunk(call_id, item(f"{call_id}{step}")))
            expected[call_id].append(f"{call_id}{step}")
    call_a, call_b = thread.tool_call("a"), thread.tool_call("b")
    assert call_a is not None and call_b is not None
    assert texts(call_a) == expected["a"]
    assert texts(call_b) == expected["b"]
    assert [e.seq for e in thread] == [1, 2]


@pytest.mark.parametrize(
    ("status", "finished"),
    [("pending", False), ("in_progress", False), ("completed", True), ("failed", True), ("cancelled", True)],
)
def test_tool_call_statuses(status: str, finished: bool) -> None:
    thread = Thread()
    feed(thread, tool("c1", "tool_call", status=status))
    call = only_call(thread)
    assert call.status == status == call.effective_status
    assert call.finished is finished


@pytest.mark.parametrize(
    "kind", ["read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"]
)
def test_tool_call_known_kinds(kind: str) -> None:
    thread = Thread()
    feed(thread, tool("c1", "tool_call", kind=kind))
    assert only_call(thread).kind == kind


@pytest.mark.parametrize("kind", ["_acme_deploy", "teleport"])
def test_tool_call_custom_and_future_kinds_kept_verbatim(kind: str) -> None:
    thread = Thread()
    feed(thread, tool("c1", "tool_call", kind=kind))
    call = only_call(thread)
    assert call.kind == kind and call.raw["kind"] == kind


@pytest.mark.parametrize("status", ["_awaiting_review", "paused"])
def test_tool_call_custom_and_future_statuses_kept_verbatim(status: str) -> None:
    thread = Thread()
    feed(thread, tool("c1", "tool_call", status=status))
    call = only_call(thread)
    assert call.status == status == call.effective_status
    assert call.finished is False


def test_tool_call_v1_diff_content() -> None:
    thread = Thread()
    edit = {"type": "diff", "path": "/p/config.json", "oldText": '{"debug": false}', "newText": '{"debug": true}'}
    new_file = {"type": "diff", "path": "/p/new.txt", "oldText": None, "newText": "hi"}
    feed(thread, tool("c1", "tool_call", kind="edit", content=[edit, new_file]))
    call = only_call(thread)
    assert call.content == [
        Diff(path="/p/config.json", old_text='{"debug": false}', new_text='{"debug": true}'),
        Diff(path="/p/new.txt", old_text=None, new_text="hi"),
    ]


def test_tool_call_unknown_content_type_kept_as_unknown() -> None:
    thread = Thread()
    widget = {"type": "_widget", "spec": {"bars": [1, 2, 3]}}
    feed(thread, tool("c1", "tool_call", content=[widget]), content_chunk("c1", {"type": "hologram", "x": 1}))
    call = only_call(thread)
    assert call.content == [
        Unknown(kind="_widget", raw=widget),
        Unknown(kind="hologram", raw={"type": "hologram", "x": 1}),
    ]
    assert call.raw["content"] == [widget, {"type": "hologram", "x": 1}]


def test_tool_call_v2_diff_with_changes_kept_as_unknown() -> None:
    thread = Thread()
    diff = {"type": "diff", "changes": [{"path": "/p/a.py", "hunks": [{"oldStart": 1, "lines": ["-a", "+b"]}]}]}
    feed(thread, tool("c1", content=[diff]))
    call = only_call(thread)
    (block,) = call.content
    assert isinstance(block, Unknown)
    assert block.kind == "diff" and block.raw == diff


def test_tool_call_malformed_fields_do_not_crash_and_stay_in_raw() -> None:
    thread = Thread()
    feed(thread, tool("c1", "tool_call", title="Read", kind="read", status="pending", content=[item("a")]))
    bad = {"title": 42, "kind": ["read"], "status": {"s": 1}, "content": "oops", "locations": {"path": "/x"}}
    feed(thread, tool("c1", **bad))
    call = only_call(thread)
    assert (call.title, call.kind, call.status, texts(call), call.locations) == ("Read", "read", "pending", ["a"], [])
    for key, value in bad.items():
        assert call.raw[key] == value


def test_tool_call_malformed_content_items_become_unknown() -> None:
    thread = Thread()
    feed(
        thread, tool("c1", content=["plain string", {"type": "content", "content": {"type": "image"}}, {"no": "type"}])
    )
    call = only_call(thread)
    assert call.content == [
        Unknown(kind="str", raw={"value": "plain string"}),
        Unknown(kind="image", raw={"type": "image"}),
        Unknown(kind="None", raw={"no": "type"}),
    ]


def test_tool_call_malformed_locations_are_skipped_or_loosened() -> None:
    thread = Thread()
    locations = [{"path": "/a", "line": "7"}, {"line": 3}, "/b", {"path": "/c", "line": 9}]
    feed(thread, tool("c1", locations=locations))
    call = only_call(thread)
    assert call.locations == [Location(path="/a", line=None), Location(path="/c", line=9)]
    assert call.raw["locations"] == locations


def test_tool_call_raw_input_and_output_kept_whatever_their_type() -> None:
    thread = Thread()
    feed(thread, tool("c1", rawInput="ls -la", rawOutput=[1, "two"]))
    call = only_call(thread)
    assert (call.raw_input, call.raw_output) == ("ls -la", [1, "two"])


def test_tool_call_raw_merges_fields() -> None:
    thread = Thread()
    feed(
        thread,
        tool("c1", "tool_call", title="T", _meta={"trace": "x"}, futureField={"a": 1}, extra=1),
        tool("c1", status="completed", futureField={"b": 2}, extra=None),
    )
    call = only_call(thread)
    assert call.raw == {"title": "T", "_meta": {"trace": "x"}, "futureField": {"b": 2}, "status": "completed"}
    assert "sessionUpdate" not in call.raw and "toolCallId" not in call.raw


def test_tool_call_raw_content_includes_chunk_items() -> None:
    thread = Thread()
    widget = {"type": "_widget", "v": 1}
    feed(thread, tool("c1", "tool_call", content=[item("a")]), content_chunk("c1", widget))
    assert only_call(thread).raw["content"] == [item("a"), widget]


def test_tool_call_updates_ignore_missing_or_non_string_ids() -> None:
    thread = Thread()
    assert apply_update(thread, {"sessionUpdate": "tool_call", "title": "no id"}) is False
    assert apply_update(thread, {"sessionUpdate": "tool_call_update", "toolCallId": 7}) is False
    assert apply_update(thread, {"sessionUpdate": "tool_call_content_chunk", "toolCallId": "c1"}) is False
    assert len(thread) == 0


def test_tool_call_update_in_later_turn_patches_original_entry() -> None:
    thread = Thread()
    feed(thread, tool("c1", "tool_call", title="Run"))
    thread.start_turn([TextBlock(text="next")])
    feed(thread, tool("c1", status="completed"))
    call = only_call(thread)
    assert call.seq == 1 and call.turn == 0 and call.status == "completed"
    assert len(thread) == 2


# -- content blocks ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ({"type": "text", "text": "hi *there*"}, TextBlock(text="hi *there*")),
        ({"type": "image", "mimeType": "image/png", "data": "AAAA"}, ImageBlock(mime_type="image/png", data="AAAA")),
        (
            {"type": "image", "mimeType": "image/jpeg", "uri": "https://x/y.jpg"},
            ImageBlock(mime_type="image/jpeg", data=None, uri="https://x/y.jpg"),
        ),
        ({"type": "audio", "mimeType": "audio/wav", "data": "UklGRg=="}, AudioBlock("audio/wav", "UklGRg==")),
        (
            {
                "type": "resource_link",
                "uri": "file:///p/a.py",
                "name": "a.py",
                "title": "A",
                "description": "the a module",
                "mimeType": "text/x-python",
                "size": 120,
            },
            ResourceLink(
                uri="file:///p/a.py",
                name="a.py",
                title="A",
                description="the a module",
                mime_type="text/x-python",
                size=120,
            ),
        ),
        ({"type": "resource_link", "uri": "file:///p/b.py"}, ResourceLink(uri="file:///p/b.py", name="file:///p/b.py")),
        (
            {"type": "resource", "resource": {"uri": "file:///p/a.py", "mimeType": "text/x-python", "text": "x = 1"}},
            EmbeddedResource(uri="file:///p/a.py", mime_type="text/x-python", text="x = 1"),
        ),
        (
            {"type": "resource", "resource": {"uri": "file:///p/a.bin", "blob": "AAEC"}},
            EmbeddedResource(uri="file:///p/a.bin", blob="AAEC"),
        ),
    ],
    ids=["text", "image-data", "image-uri", "audio", "resource_link", "resource_link-bare", "resource-text", "blob"],
)
def test_content_block_known_types(raw: dict[str, Any], expected: Any) -> None:
    block = content_block(raw)
    assert block == expected
    assert block.raw == raw


@pytest.mark.parametrize(
    "raw",
    [
        {"type": "text"},
        {"type": "text", "text": None},
        {"type": "image", "data": "AAAA"},
        {"type": "audio", "mimeType": "audio/wav"},
        {"type": "resource_link", "name": "no uri"},
        {"type": "resource", "resource": "file:///a"},
        {"type": "resource", "resource": {"text": "no uri"}},
        {"type": "_custom", "payload": [1, 2]},
        {},
    ],
)
def test_content_block_malformed_or_unknown_becomes_unknown_with_raw(raw: dict[str, Any]) -> None:
    block = content_block(raw)
    assert isinstance(block, Unknown)
    assert block.kind == str(raw.get("type")) and block.raw == raw


@pytest.mark.parametrize("raw", [None, "text", 3, ["a"]])
def test_content_block_non_object_becomes_unknown(raw: Any) -> None:
    block = content_block(raw)
    assert block == Unknown(kind=type(raw).__name__, raw={"value": raw})


def test_content_block_wrong_optional_field_types_are_dropped() -> None:
    block = content_block({"type": "resource_link", "uri": "u", "name": 3, "title": 4, "size": "big"})
    assert block == ResourceLink(uri="u", name="u")


# -- plans ---------------------------------------------------------------------------------------

PLAN_ENTRIES = [
    {"content": "Read the code", "priority": "high", "status": "completed"},
    {"content": "Fix the bug", "priority": "medium", "status": "in_progress"},
]


def test_plan_creates_entry_with_items() -> None:
    thread = Thread()
    feed(thread, {"sessionUpdate": "plan", "entries": PLAN_ENTRIES})
    (plan,) = thread.entries
    assert isinstance(plan, Plan) and plan.role == "plan"
    assert plan.items == [
        PlanItem("Read the code", "high", "completed"),
        PlanItem("Fix the bug", "medium", "in_progress"),
    ]
    assert plan.done == 1


def test_plan_second_in_same_turn_replaces_items_of_same_entry() -> None:
    thread = Thread()
    feed(thread, {"sessionUpdate": "plan", "entries": PLAN_ENTRIES}, chunk("working"))
    feed(thread, {"sessionUpdate": "plan", "entries": [{"content": "Only", "priority": "low", "status": "pending"}]})
    plans = [e for e in thread if isinstance(e, Plan)]
    assert len(plans) == 1
    assert plans[0].items == [PlanItem("Only", "low", "pending")]


def test_plan_in_new_turn_is_new_entry() -> None:
    thread = Thread()
    thread.start_turn([TextBlock(text="one")])
    feed(thread, {"sessionUpdate": "plan", "entries": PLAN_ENTRIES})
    thread.start_turn([TextBlock(text="two")])
    feed(thread, {"sessionUpdate": "plan", "entries": []})
    first, second = [e for e in thread if isinstance(e, Plan)]
    assert (first.turn, second.turn) == (1, 2)
    assert len(first.items) == 2 and second.items == []


def test_plan_update_v2_items() -> None:
    thread = Thread()
    feed(thread, {"sessionUpdate": "plan_update", "plan": {"type": "items", "entries": PLAN_ENTRIES}})
    feed(thread, {"sessionUpdate": "plan_update", "plan": {"type": "items", "entries": PLAN_ENTRIES[:1]}})
    (plan,) = thread.entries
    assert isinstance(plan, Plan) and plan.items == [PlanItem("Read the code", "high", "completed")]


def test_plan_update_v2_unknown_plan_type_is_not_applied() -> None:
    thread = Thread()
    assert apply_update(thread, {"sessionUpdate": "plan_update", "plan": {"type": "_markdown", "text": "x"}}) is False
    assert apply_update(thread, {"sessionUpdate": "plan_update"}) is False
    assert len(thread) == 0


def test_plan_malformed_items_get_defaults_or_are_skipped() -> None:
    thread = Thread()
    feed(thread, {"sessionUpdate": "plan", "entries": [{"content": "x"}, "junk", 3]})
    feed(thread, {"sessionUpdate": "plan", "entries": "not a list"})
    (plan,) = thread.entries
    assert isinstance(plan, Plan) and plan.items == []
    feed(thread, {"sessionUpdate": "plan", "entries": [{"content": "x"}, "junk"]})
    assert plan.items == [PlanItem("x", "medium", "pending")]


# -- updates that are not about the thread -------------------------------------------------------


@pytest.mark.parametrize(
    "update",
    [
        {"sessionUpdate": "available_commands_update", "availableCommands": [{"name": "web", "description": "d"}]},
        {"sessionUpdate": "usage_update", "used": 100, "size": 1000},
        {"sessionUpdate": "current_mode_update", "currentModeId": "code"},
        {"sessionUpdate": "session_info_update", "title": "A title"},
        {"sessionUpdate": "_vendor_thing", "x": 1},
        {"sessionUpdate": None},
        {"content": {"type": "text", "text": "no kind"}},
        {},
    ],
)
def test_apply_update_returns_false_for_non_thread_updates(update: dict[str, Any]) -> None:
    calls: list[Change] = []
    thread = Thread(listener=calls.append)
    assert apply_update(thread, update) is False
    assert len(thread) == 0 and calls == []


@pytest.mark.parametrize("update", [None, "agent_message_chunk", 7, [{"sessionUpdate": "plan", "entries": []}]])
def test_apply_update_returns_false_for_non_dicts(update: Any) -> None:
    thread = Thread()
    assert apply_update(thread, update) is False
    assert len(thread) == 0
