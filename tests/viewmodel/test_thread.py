"""Tests for webclient.viewmodel.thread: the Thread's own operations (turns, permissions, cancelling, plans).

The ACP-shaped paths are in test_updates.py; here the Thread is driven through the methods the session
layer calls directly, with every listener call recorded.
"""

from __future__ import annotations

from collections import Counter

import pytest

from webclient.acp.updates import apply_update
from webclient.viewmodel.content import ImageBlock, PermissionOption, PlanItem, TextBlock
from webclient.viewmodel.entries import MessageEntry, Notice, Plan, ToolCall
from webclient.viewmodel.events import Change, EntryChanged, Region
from webclient.viewmodel.thread import Thread

OPTIONS = [
    PermissionOption(option_id="allow-once", name="Allow once", kind="allow_once"),
    PermissionOption(option_id="reject-once", name="Reject", kind="reject_once"),
]


def entries(*seqs: int) -> list[Change]:
    """What the listener is told when the entries numbered ``seqs`` change, in that order."""
    return [EntryChanged(seq) for seq in seqs]


def new_call(thread: Thread, call_id: str = "c1", status: str | None = None) -> ToolCall:
    patch = {"title": f"call {call_id}"} if status is None else {"title": f"call {call_id}", "status": status}
    return thread.upsert_tool_call(call_id, patch, {})


# -- turns and messages --------------------------------------------------------------------------


def test_start_turn_shows_local_prompt_at_once() -> None:
    calls: list[Change] = []
    thread = Thread(listener=calls.append)
    image = ImageBlock(mime_type="image/png", data="AAAA")
    entry = thread.start_turn([TextBlock(text="fix "), TextBlock(text="it"), image])
    assert thread.turn == 1 and entry.turn == 1
    assert (entry.kind, entry.text, entry.attachments) == ("user-message", "fix it", [image])
    assert entry.local is True and entry.streaming is False
    assert calls == entries(1) and thread.entry(1) is entry


def test_start_turn_closes_streaming_message_and_counts_turns() -> None:
    calls: list[Change] = []
    thread = Thread(listener=calls.append)
    thread.append_message("agent-message", TextBlock(text="still going"))
    thread.start_turn([TextBlock(text="one")])
    thread.start_turn([TextBlock(text="two")])
    first = thread.entry(1)
    assert isinstance(first, MessageEntry) and first.streaming is False
    assert [e.turn for e in thread] == [0, 1, 2]
    assert calls == entries(1, 1, 2, 3)


def test_end_turn_closes_streaming_message_and_notifies() -> None:
    calls: list[Change] = []
    thread = Thread(listener=calls.append)
    thread.append_message("thought", TextBlock(text="hmm"))
    thread.end_turn()
    entry = thread.entry(1)
    assert isinstance(entry, MessageEntry) and entry.streaming is False
    assert calls == entries(1, 1)
    thread.end_turn()
    assert calls == entries(1, 1)


def test_end_turn_without_streaming_message_changes_nothing() -> None:
    calls: list[Change] = []
    thread = Thread(listener=calls.append)
    thread.end_turn()
    new_call(thread)
    thread.end_turn()
    assert calls == entries(1)


def test_append_message_same_kind_continues_only_while_streaming() -> None:
    thread = Thread()
    thread.append_message("agent-message", TextBlock(text="a"), "m1")
    thread.append_message("agent-message", TextBlock(text="b"))
    thread.append_message("thought", TextBlock(text="t"))
    thread.append_message("agent-message", TextBlock(text="c"), "m1")
    assert [(e.role, e.text) for e in thread if isinstance(e, MessageEntry)] == [
        ("agent-message", "ab"),
        ("thought", "t"),
        ("agent-message", "c"),
    ]


def test_echo_is_consumed_once_then_repeats_are_shown() -> None:
    thread = Thread()
    thread.start_turn([TextBlock(text="hello")])
    thread.append_message("user-message", TextBlock(text="hello"))
    assert len(thread) == 1
    thread.append_message("user-message", TextBlock(text="hello"))
    assert [e.text for e in thread if isinstance(e, MessageEntry)] == ["hello", "hello"]


def test_echo_is_not_recognised_after_other_entries() -> None:
    thread = Thread()
    thread.start_turn([TextBlock(text="hello")])
    thread.append_message("agent-message", TextBlock(text="hi"))
    thread.append_message("user-message", TextBlock(text="hello"))
    assert [e.role for e in thread] == ["user-message", "agent-message", "user-message"]


def test_message_text_joins_parts_lazily() -> None:
    entry = MessageEntry(seq=1, turn=0, parts=["a", "b", "c"])
    assert entry.text == "abc" and entry.parts == ["abc"]
    assert MessageEntry(seq=2, turn=0).text == ""


def test_a_messages_end_is_read_without_joining_the_rest() -> None:
    entry = MessageEntry(seq=1, turn=0, parts=["hello ", "streamed ", "world"])
    assert entry.length == 20 and entry.text_since(15) == "world" and entry.text_since(3) == "lo streamed world"
    assert entry.text_since(20) == "" and entry.text_since(0) == "hello streamed world"
    assert len(entry.parts) == 3  # nothing was joined
    entry.parts.append("!")
    assert entry.length == 21 and entry.text_since(19) == "d!"
    assert entry.text == "hello streamed world!" and entry.length == 21  # joined, counted again
    entry.parts.append("?")
    assert entry.length == 22 and entry.text_since(20) == "!?"
    entry.parts[:] = ["replaced in place"]  # the same list, another chunk
    assert entry.length == 17 and entry.text_since(12) == "place"
    entry.parts = ["new"]  # the content replaced (a v2 upsert)
    assert entry.length == 3 and entry.text_since(0) == "new"


def test_entries_are_numbered_from_one_and_iterable() -> None:
    thread = Thread()
    thread.start_turn([TextBlock(text="q")])
    call = new_call(thread)
    notice = thread.add_notice("warning", "Stopped", "max tokens")
    assert len(thread) == 3 and list(thread) == thread.entries
    assert [e.seq for e in thread] == [1, 2, 3]
    assert thread.entry(2) is call and thread.entry(3) is notice
    assert isinstance(notice, Notice) and (notice.level, notice.title, notice.detail) == (
        "warning",
        "Stopped",
        "max tokens",
    )
    assert thread.tool_call("c1") is call and thread.tool_call("nope") is None


# -- tool calls ----------------------------------------------------------------------------------


def test_upsert_tool_call_rejects_unknown_patch_fields() -> None:
    thread = Thread()
    with pytest.raises(ValueError, match="rawInput"):
        thread.upsert_tool_call("c1", {"rawInput": {}}, {})
    assert len(thread) == 0


def test_upsert_tool_call_notifies_created_then_changed() -> None:
    calls: list[Change] = []
    thread = Thread(listener=calls.append)
    thread.append_message("agent-message", TextBlock(text="x"))
    call = thread.upsert_tool_call("c1", {"title": "T"}, {"title": "T"})
    thread.upsert_tool_call("c1", {"status": "completed"}, {"status": "completed"})
    thread.append_tool_content("c1", TextBlock(text="out"), {"type": "content", "content": {"type": "text"}})
    assert call.seq == 2
    assert calls == entries(1, 1, 2, 2, 2)


# -- permissions ---------------------------------------------------------------------------------


def test_ask_permission_puts_call_in_waiting_state() -> None:
    calls: list[Change] = []
    thread = Thread(listener=calls.append)
    call = new_call(thread)
    prompt = thread.ask_permission(call, "r1", OPTIONS)
    assert call.permission is prompt
    assert (prompt.request_id, prompt.state, prompt.chosen, prompt.chosen_option) == ("r1", "pending", None, None)
    assert thread.pending_permissions == [prompt]
    assert thread.tool_call_for_permission("r1") is call
    assert calls == entries(1, 1)


def test_answer_permission_selects_offered_option() -> None:
    calls: list[Change] = []
    thread = Thread(listener=calls.append)
    call = new_call(thread)
    thread.ask_permission(call, "r1", OPTIONS)
    prompt = thread.answer_permission("r1", "reject-once")
    assert prompt is call.permission and prompt is not None
    assert (prompt.state, prompt.chosen) == ("selected", "reject-once")
    assert prompt.chosen_option == OPTIONS[1]
    assert thread.pending_permissions == []
    assert calls == entries(1, 1, 1)


def test_answer_permission_first_answer_wins() -> None:
    calls: list[Change] = []
    thread = Thread(listener=calls.append)
    call = new_call(thread)
    thread.ask_permission(call, "r1", OPTIONS)
    assert thread.answer_permission("r1", "allow-once") is not None
    before = list(calls)
    assert thread.answer_permission("r1", "reject-once") is None
    assert thread.answer_permission("r1", None) is None
    assert call.permission is not None
    assert (call.permission.state, call.permission.chosen) == ("selected", "allow-once")
    assert calls == before


def test_answer_permission_refuses_option_not_offered() -> None:
    calls: list[Change] = []
    thread = Thread(listener=calls.append)
    call = new_call(thread)
    prompt = thread.ask_permission(call, "r1", OPTIONS)
    assert thread.answer_permission("r1", "allow-always") is None
    assert thread.answer_permission("r1", "") is None
    assert (prompt.state, prompt.chosen) == ("pending", None)
    assert thread.pending_permissions == [prompt]
    assert calls == entries(1, 1)


def test_answer_permission_cancelled() -> None:
    thread = Thread()
    call = new_call(thread)
    thread.ask_permission(call, "r1", OPTIONS)
    prompt = thread.answer_permission("r1", None)
    assert prompt is not None and (prompt.state, prompt.chosen, prompt.chosen_option) == ("cancelled", None, None)
    assert thread.answer_permission("r1", "allow-once") is None
    assert thread.pending_permissions == []


def test_answer_permission_unknown_request_is_ignored() -> None:
    calls: list[Change] = []
    thread = Thread(listener=calls.append)
    assert thread.answer_permission("nope", "allow-once") is None
    assert thread.answer_permission("nope", None) is None
    assert calls == []


def test_pending_permissions_lists_only_unanswered_prompts() -> None:
    thread = Thread()
    first, second, third = new_call(thread, "a"), new_call(thread, "b"), new_call(thread, "c")
    thread.ask_permission(first, "r1", OPTIONS)
    p2 = thread.ask_permission(second, "r2", OPTIONS)
    p3 = thread.ask_permission(third, "r3", OPTIONS)
    thread.answer_permission("r1", "allow-once")
    assert thread.pending_permissions == [p2, p3]
    thread.answer_permission("r3", None)
    assert thread.pending_permissions == [p2]


def test_permission_asked_twice_on_same_call_keeps_requests_apart() -> None:
    thread = Thread()
    call = new_call(thread)
    thread.ask_permission(call, "r1", OPTIONS)
    assert thread.answer_permission("r1", "reject-once") is not None
    second = thread.ask_permission(call, "r2", OPTIONS)
    assert thread.pending_permissions == [second]
    # A late click on the first (settled) card must not answer the second question.
    assert thread.answer_permission("r1", "allow-once") is None
    assert second.state == "pending"


# -- cancelling ----------------------------------------------------------------------------------


def test_cancel_unfinished_marks_only_unfinished_calls_cancelled() -> None:
    calls: list[Change] = []
    thread = Thread(listener=calls.append)
    statuses = {"p": "pending", "r": "in_progress", "n": None, "x": "_awaiting", "c": "completed", "f": "failed"}
    for call_id, status in statuses.items():
        new_call(thread, call_id, status)
    thread.upsert_tool_call("k", {"status": "cancelled"}, {})
    calls.clear()
    cancelled = thread.cancel_unfinished()
    assert {c.tool_call_id for c in cancelled} == {"p", "r", "n", "x"}
    result = {e.tool_call_id: e.status for e in thread if isinstance(e, ToolCall)}
    assert result == {"p": "cancelled", "r": "cancelled", "n": "cancelled", "x": "cancelled",
                      "c": "completed", "f": "failed", "k": "cancelled"}  # fmt: skip
    assert Counter(calls) == Counter(c.change for c in cancelled)
    assert thread.cancel_unfinished() == []


def test_cancel_unfinished_leaves_messages_and_permissions_alone() -> None:
    thread = Thread()
    call = new_call(thread)
    prompt = thread.ask_permission(call, "r1", OPTIONS)
    thread.append_message("agent-message", TextBlock(text="typing"))
    thread.cancel_unfinished()
    message = thread.entry(2)
    assert call.status == "cancelled" and call.finished
    assert isinstance(message, MessageEntry) and message.streaming is True
    assert prompt.state == "pending"


# -- plans ---------------------------------------------------------------------------------------


def test_set_plan_replaces_current_turn_plan_and_keeps_old_turns() -> None:
    calls: list[Change] = []
    thread = Thread(listener=calls.append)
    first = thread.set_plan([PlanItem("a", "high", "pending")])
    same = thread.set_plan([PlanItem("a", "high", "completed"), PlanItem("b", "low", "pending")])
    assert same is first and first.done == 1 and len(first.items) == 2
    thread.start_turn([TextBlock(text="next")])
    second = thread.set_plan([])
    assert second is not first and isinstance(second, Plan) and second.turn == 1
    assert [p.items for p in thread if isinstance(p, Plan)] == [first.items, []]
    # every change also redraws the plan kept in view
    assert calls == [EntryChanged(1), Region.PLAN, EntryChanged(1), Region.PLAN, *entries(2, 3), Region.PLAN]
    assert thread.current_plan is second


def test_plan_current_entry_and_progress() -> None:
    thread = Thread()
    plan = thread.set_plan(
        [PlanItem("a", "high", "completed"), PlanItem("b", "medium", "in_progress"), PlanItem("c", "low", "pending")]
    )
    assert plan.current is plan.items[1] and plan.done == 1 and not plan.finished
    thread.set_plan([PlanItem("a", "high", "completed")])
    assert plan.current is None and plan.finished


def test_plan_does_not_split_streaming_message_when_updated() -> None:
    thread = Thread()
    thread.set_plan([])
    thread.append_message("agent-message", TextBlock(text="a"))
    thread.set_plan([PlanItem("x", "low", "pending")])
    thread.append_message("agent-message", TextBlock(text="b"))
    assert [e.role for e in thread] == ["plan", "agent-message"]
    assert thread.entry(2).text == "ab"  # type: ignore[attr-defined]


def test_session_shaped_permission_flow_via_updates() -> None:
    """A tool call reported over the wire, asked about, answered, finished: one entry throughout."""
    calls: list[Change] = []
    thread = Thread(listener=calls.append)
    apply_update(thread, {"sessionUpdate": "tool_call", "toolCallId": "call_001", "title": "Edit", "kind": "edit"})
    call = thread.tool_call("call_001")
    assert call is not None
    thread.ask_permission(call, "5", OPTIONS)
    thread.answer_permission("5", "allow-once")
    apply_update(thread, {"sessionUpdate": "tool_call_update", "toolCallId": "call_001", "status": "completed"})
    assert len(thread) == 1 and call.finished
    assert call.permission is not None and call.permission.chosen_option == OPTIONS[0]
    assert calls == entries(1, 1, 1, 1)


# -- tool-call ids reused in a later turn -------------------------------------------------------


def test_a_tool_call_id_reused_in_a_later_turn_starts_a_new_card_and_the_old_one_keeps_its_answer() -> None:
    """The TypeScript SDK's example agent says ``call_1`` every turn: turn 2 must not rewrite turn 1's card."""
    thread = Thread()
    thread.start_turn([TextBlock(text="one")])
    first = new_call(thread, "call_1", status="pending")
    thread.ask_permission(first, "r1", OPTIONS)
    thread.answer_permission("r1", "allow-once")
    thread.upsert_tool_call("call_1", {"status": "completed"}, {})
    thread.end_turn()
    thread.start_turn([TextBlock(text="two")])
    second = thread.upsert_tool_call("call_1", {"status": "in_progress"}, {})
    assert second is not first and second.turn == 2
    thread.ask_permission(thread.upsert_tool_call("call_1", {}, {}), "r2", OPTIONS)
    thread.answer_permission("r2", "reject-once")
    thread.upsert_tool_call("call_1", {"status": "failed"}, {})
    assert (first.status, first.permission and first.permission.chosen) == ("completed", "allow-once")
    assert (second.status, second.permission and second.permission.chosen) == ("failed", "reject-once")
    assert thread.tool_call("call_1") is second
    assert [e.seq for e in thread if isinstance(e, ToolCall)] == [first.seq, second.seq]


def test_a_new_tool_call_with_the_id_of_an_unfinished_earlier_card_starts_a_new_card() -> None:
    thread = Thread()
    thread.start_turn([TextBlock(text="one")])
    first = new_call(thread, "call_1", status="in_progress")
    thread.start_turn([TextBlock(text="two")])
    assert thread.upsert_tool_call("call_1", {"status": "in_progress"}, {}) is first  # a late update
    second = thread.upsert_tool_call("call_1", {"title": "again"}, {}, create=True)
    assert second is not first and second.turn == 2


def test_a_reused_id_within_one_turn_still_updates_its_card() -> None:
    thread = Thread()
    thread.start_turn([TextBlock(text="one")])
    call = new_call(thread, "call_1", status="completed")
    assert thread.upsert_tool_call("call_1", {"title": "again"}, {}) is call


def test_content_chunks_for_an_id_of_an_earlier_turn_go_to_a_new_card() -> None:
    thread = Thread()
    thread.start_turn([TextBlock(text="one")])
    first = new_call(thread, "call_1", status="completed")
    thread.start_turn([TextBlock(text="two")])
    apply_update(
        thread,
        {"sessionUpdate": "tool_call_content_chunk", "toolCallId": "call_1", "content": {"type": "text", "text": "x"}},
    )
    assert first.content == [] and thread.tool_call("call_1") is not first


# -- what a Stop leaves ------------------------------------------------------------------------------


def test_a_stop_marks_the_unfinished_plan_stopped_and_a_turn_without_output_is_known() -> None:
    thread = Thread()
    thread.start_turn([TextBlock(text="plan")])
    assert not thread.turn_replied
    plan = thread.set_plan([PlanItem(content="a", priority="high", status="in_progress")])
    assert thread.turn_replied
    thread.cancel_unfinished()
    assert plan.stopped and thread.current_plan is plan
    thread.start_turn([TextBlock(text="again")])
    thread.add_notice("info", "nothing")
    assert not thread.turn_replied


# -- windows and the entry cap -------------------------------------------------------------------


def test_latest_gives_windows_of_the_newest_entries_oldest_first() -> None:
    thread = Thread()
    for n in range(1, 251):
        new_call(thread, f"c{n}", "completed")
    assert [e.seq for e in thread.latest(3)] == [248, 249, 250]
    assert [e.seq for e in thread.latest(3, before=100)] == [97, 98, 99]
    assert [e.seq for e in thread.latest(5, before=3)] == [1, 2]
    assert thread.latest(5, before=1) == [] and thread.first_seq == 1
    assert thread.get(250) is thread.entry(250) and thread.get(251) is None


def test_following_gives_windows_after_an_entry_even_past_dropped_ones() -> None:
    thread = Thread(max_entries=100)
    for n in range(1, 251):
        new_call(thread, f"c{n}", "completed")
    first = thread.first_seq
    assert first > 100
    assert [e.seq for e in thread.following(3, after=200)] == [201, 202, 203]
    assert [e.seq for e in thread.following(5, after=248)] == [249, 250]
    assert [e.seq for e in thread.following(2, after=1)] == [first, first + 1]  # the dropped ones are skipped
    assert thread.following(3, after=250) == []


def test_beyond_the_cap_the_oldest_entries_are_dropped_and_seqs_stay() -> None:
    keys: list[Change] = []
    thread = Thread(listener=keys.append, max_entries=100)
    waiting = new_call(thread, "asks")
    thread.ask_permission(waiting, "r1", OPTIONS)
    for n in range(1, 301):
        new_call(thread, f"c{n}", "completed")
    assert 100 <= len(thread) <= 110 and thread.dropped == 301 - len(thread)
    assert Region.DROPPED in keys
    assert thread.get(1) is waiting and thread.tool_call("asks") is waiting  # a question for the user stays
    assert thread.pending_permissions == [waiting.permission]
    assert thread.get(2) is None and thread.tool_call("c1") is None  # its lookups go too
    newest = thread.latest(1)[0]
    assert newest.seq == 301 and thread.tool_call("c300") is newest
    kept = thread.entries
    assert thread.latest(2, before=kept[2].seq) == kept[:2]  # across the gap the drop left after the kept question
    assert thread.upsert_tool_call("c1", {"title": "again"}, {}).seq == 302  # an id it forgot starts a new card


def test_a_turn_replied_even_when_the_cap_dropped_entries_during_it() -> None:
    thread = Thread(max_entries=10)
    for n in range(10):
        new_call(thread, f"old{n}", "completed")
    thread.start_turn([TextBlock(text="go")])
    assert not thread.turn_replied
    for n in range(5):
        new_call(thread, f"new{n}", "completed")
    assert thread.dropped and thread.turn_replied
