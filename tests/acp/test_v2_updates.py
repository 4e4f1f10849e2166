"""Tests for the v2 draft's shapes folded into the view model (the table of webclient.acp.updates, the modules it
calls and the view model: messages by id, plans by id, agent-owned terminals, the changes/patch diff, tool call
names and capabilities)."""

from __future__ import annotations

import base64
from typing import Any

from webclient.acp.updates import apply_update
from webclient.viewmodel.content import DiffChanges, FileOperation, TerminalRef, TextBlock, Unknown
from webclient.viewmodel.entries import MessageEntry, Plan, ToolCall
from webclient.viewmodel.events import Change, Region
from webclient.viewmodel.thread import Thread


def feed(thread: Thread, *updates: dict[str, Any]) -> list[bool]:
    return [apply_update(thread, update) for update in updates]


def text(value: str) -> dict[str, str]:
    return {"type": "text", "text": value}


def chunk(kind: str, message_id: str, value: str) -> dict[str, Any]:
    return {"sessionUpdate": kind, "messageId": message_id, "content": text(value)}


def messages(thread: Thread) -> list[tuple[str, str | None, str]]:
    return [(e.kind, e.message_id, e.text) for e in thread.entries if isinstance(e, MessageEntry)]


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


# -- messages ------------------------------------------------------------------------------------------------------


def test_a_chunk_goes_to_the_message_its_id_names_even_after_another_came_between() -> None:
    thread = Thread()
    feed(
        thread,
        chunk("agent_message_chunk", "m1", "one "),
        chunk("agent_thought_chunk", "t1", "hmm"),
        chunk("agent_message_chunk", "m2", "other"),
        chunk("agent_message_chunk", "m1", "two"),
    )
    assert messages(thread) == [
        ("agent-message", "m1", "one two"),
        ("thought", "t1", "hmm"),
        ("agent-message", "m2", "other"),
    ]


def test_an_upsert_replaces_everything_chunks_accumulated_and_later_chunks_append() -> None:
    thread = Thread()
    feed(thread, chunk("agent_message_chunk", "m1", "draft "), chunk("agent_message_chunk", "m1", "text"))
    (entry,) = thread.entries
    assert isinstance(entry, MessageEntry)
    revision = entry.revision
    feed(thread, {"sessionUpdate": "agent_message", "messageId": "m1", "content": [text("Final"), {"type": "_x"}]})
    assert entry.text == "Final" and [a.type for a in entry.attachments] == ["unknown"]
    assert entry.revision > revision  # its rendering starts over
    feed(thread, chunk("agent_message_chunk", "m1", "!"))
    assert messages(thread) == [("agent-message", "m1", "Final!")]


def test_an_upsert_without_content_changes_nothing_and_null_or_empty_clears() -> None:
    thread = Thread()
    feed(thread, {"sessionUpdate": "agent_thought", "messageId": "t1"})  # a new id: an empty thought
    feed(thread, chunk("agent_thought_chunk", "t1", "deep"))
    feed(thread, {"sessionUpdate": "agent_thought", "messageId": "t1"})
    assert messages(thread) == [("thought", "t1", "deep")]
    feed(thread, {"sessionUpdate": "agent_thought", "messageId": "t1", "content": None})
    assert messages(thread) == [("thought", "t1", "")]
    feed(thread, chunk("agent_thought_chunk", "t1", "again"))
    feed(thread, {"sessionUpdate": "agent_thought", "messageId": "t1", "content": []})
    assert messages(thread) == [("thought", "t1", "")]


def test_the_first_user_message_names_the_prompt_this_client_showed() -> None:
    thread = Thread()
    thread.start_turn([TextBlock("fix the bug")])
    feed(thread, {"sessionUpdate": "user_message", "messageId": "u1", "content": [text("fix the bug")]})
    feed(thread, chunk("agent_message_chunk", "a1", "On it."))
    assert messages(thread) == [("user-message", "u1", "fix the bug"), ("agent-message", "a1", "On it.")]
    # A later user message (steered, or the agent's own) is one of its own.
    feed(thread, {"sessionUpdate": "user_message", "messageId": "u2", "content": [text("and the tests")]})
    assert messages(thread)[-1] == ("user-message", "u2", "and the tests")


def test_chunks_without_an_id_stream_as_before() -> None:
    thread = Thread()
    feed(thread, {"sessionUpdate": "agent_message_chunk", "content": text("a")})
    feed(thread, {"sessionUpdate": "agent_message_chunk", "content": text("b")})
    assert messages(thread) == [("agent-message", None, "ab")]


# -- tool calls ----------------------------------------------------------------------------------------------------


def test_tool_call_update_creates_with_a_name_and_open_statuses_and_kinds() -> None:
    thread = Thread()
    feed(thread, {"sessionUpdate": "tool_call_update", "toolCallId": "c1", "name": "grep", "kind": "_lint"})
    call = thread.tool_call("c1")
    assert call is not None and (call.name, call.kind, call.effective_status) == ("grep", "_lint", "pending")
    feed(thread, {"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "paused"})
    assert call.status == "paused" and not call.finished
    feed(thread, {"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "_queued", "name": None})
    assert (call.status, call.name) == ("_queued", None)
    feed(thread, {"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "cancelled"})
    assert call.finished


def test_content_chunks_append_to_the_content_a_later_update_replaces() -> None:
    thread = Thread()
    feed(
        thread,
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "c1",
            "content": [{"type": "content", "content": text("a")}],
        },
        {
            "sessionUpdate": "tool_call_content_chunk",
            "toolCallId": "c1",
            "content": {"type": "content", "content": text("b")},
        },
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "c1",
            "content": [{"type": "content", "content": text("c")}],
        },
        {
            "sessionUpdate": "tool_call_content_chunk",
            "toolCallId": "c1",
            "content": {"type": "content", "content": text("d")},
        },
    )
    call = thread.tool_call("c1")
    assert call is not None and [item.text for item in call.content if isinstance(item, TextBlock)] == ["c", "d"]


def test_cancel_is_offered_only_while_advertised_as_an_object_and_not_final() -> None:
    thread = Thread()
    update: dict[str, Any] = {"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "in_progress"}
    feed(thread, update)
    call = thread.tool_call("c1")
    assert call is not None and not call.can_cancel
    for capabilities, offered in (({"cancel": {}}, True), ({"cancel": True}, False), ({}, False), ("yes", False)):
        feed(thread, {**update, "capabilities": {"cancel": {}}})
        feed(thread, {**update, "capabilities": capabilities})
        assert call.can_cancel is offered, capabilities
    feed(thread, {**update, "capabilities": {"cancel": {}}})
    feed(thread, {"sessionUpdate": "tool_call_update", "toolCallId": "c1", "title": "omitted: unchanged"})
    assert call.can_cancel
    feed(thread, {"sessionUpdate": "tool_call_update", "toolCallId": "c1", "capabilities": None})
    assert not call.can_cancel
    feed(thread, {**update, "capabilities": {"cancel": {}}, "status": "completed"})
    assert not call.can_cancel  # final: nothing to stop


def test_stopping_lasts_until_the_status_changes() -> None:
    call = ToolCall(seq=1, turn=1, tool_call_id="c1", status="in_progress")
    call.stop_asked_in = call.effective_status
    assert call.stopping
    call.status = "paused"
    assert not call.stopping


# -- diffs ---------------------------------------------------------------------------------------------------------


def test_a_v2_diff_keeps_its_operations_and_patch_and_leaves_out_malformed_changes() -> None:
    thread = Thread()
    diff = {
        "type": "diff",
        "changes": [
            {"operation": "move", "path": "/w/new.py", "oldPath": "/w/old.py"},
            {"operation": "_chmod", "path": "/w/run.sh", "fileType": "text"},
            {"operation": "add", "path": "/w/a.png", "fileType": "binary", "mimeType": "image/png"},
            {"operation": "modify"},
        ],
        "patch": {"format": "git_patch", "text": "diff --git a/x b/x\n"},
    }
    feed(thread, {"sessionUpdate": "tool_call_content_chunk", "toolCallId": "c1", "content": diff})
    call = thread.tool_call("c1")
    assert call is not None
    (item,) = call.content
    assert isinstance(item, DiffChanges)
    assert item.changes == (
        FileOperation("move", "/w/new.py", "/w/old.py"),
        FileOperation("_chmod", "/w/run.sh", file_type="text"),
        FileOperation("add", "/w/a.png", file_type="binary", mime_type="image/png"),
    )
    assert (item.patch_format, item.patch_text) == ("git_patch", "diff --git a/x b/x\n")
    assert call.raw["content"] == [diff]  # kept as sent


def test_a_v1_diff_stays_one_and_a_diff_without_path_or_changes_is_unknown() -> None:
    thread = Thread()
    content = [
        {"type": "diff", "path": "/w/a.py", "oldText": "a", "newText": "b"},
        {"type": "diff", "changes": "all"},
        {"type": "diff", "changes": [], "patch": {"format": "_svn", "text": "Index: x"}},
    ]
    feed(thread, {"sessionUpdate": "tool_call_update", "toolCallId": "c1", "content": content})
    call = thread.tool_call("c1")
    assert call is not None
    assert [item.type for item in call.content] == ["diff", "unknown", "diff_changes"]
    last = call.content[2]
    assert isinstance(last, DiffChanges) and (last.changes, last.patch_format) == ((), "_svn")
    assert isinstance(call.content[1], Unknown)


# -- plans ---------------------------------------------------------------------------------------------------------


def plan_update(plan: dict[str, Any]) -> dict[str, Any]:
    return {"sessionUpdate": "plan_update", "plan": plan}


def test_plans_by_id_are_replaced_in_place_and_removed_as_history() -> None:
    changes: list[Change] = []
    thread = Thread(listener=changes.append)
    entries = [{"content": "Read", "priority": "high", "status": "completed"}]
    assert (
        feed(
            thread,
            plan_update({"type": "items", "planId": "p1", "entries": entries}),
            plan_update({"type": "markdown", "planId": "p2", "content": "1. **Write**"}),
            plan_update({"type": "file", "planId": "p3", "uri": "file:///w/PLAN.md"}),
            plan_update({"type": "_mindmap", "planId": "p4", "nodes": [1, 2]}),
            plan_update(
                {"type": "items", "planId": "p1", "entries": [*entries, {"content": "Skip", "status": "cancelled"}]}
            ),
        )
        == [True] * 5
    )
    plans = [e for e in thread.entries if isinstance(e, Plan)]
    assert [(p.plan_id, p.form) for p in plans] == [
        ("p1", "items"),
        ("p2", "markdown"),
        ("p3", "file"),
        ("p4", "_mindmap"),
    ]
    assert [item.status for item in plans[0].items] == ["completed", "cancelled"] and plans[0].finished
    assert plans[1].markdown == "1. **Write**" and plans[2].uri == "file:///w/PLAN.md"
    assert plans[3].raw == {"nodes": [1, 2]}
    assert Region.PLAN in changes
    assert thread.current_plan is plans[3]
    assert feed(thread, {"sessionUpdate": "plan_removed", "planId": "p4"}) == [True]
    assert plans[3].removed and thread.current_plan is plans[2] and len(thread) == 4
    assert feed(thread, {"sessionUpdate": "plan_removed", "planId": "p4"}) == [False]  # once
    # An update after the removal shows the plan anew.
    feed(thread, plan_update({"type": "markdown", "planId": "p4", "content": "back"}))
    assert thread.current_plan is not None and thread.current_plan.markdown == "back" and len(thread) == 5


def test_a_v2_plan_without_an_id_is_the_turns_plan_as_in_v1() -> None:
    thread = Thread()
    feed(thread, plan_update({"type": "items", "entries": [{"content": "a"}]}))
    feed(thread, plan_update({"type": "items", "entries": [{"content": "b"}]}))
    (plan,) = thread.entries
    assert isinstance(plan, Plan) and [item.content for item in plan.items] == ["b"]


# -- terminals -----------------------------------------------------------------------------------------------------


def test_terminal_updates_patch_and_output_chunks_append_decoded_bytes() -> None:
    thread = Thread()
    euro = "€ ok\r\n".encode()
    assert (
        feed(
            thread,
            {"sessionUpdate": "terminal_update", "terminalId": "t1", "command": "make", "cwd": "/w"},
            {"sessionUpdate": "terminal_output_chunk", "terminalId": "t1", "data": b64(euro[:2])},  # splits the €
            {"sessionUpdate": "terminal_output_chunk", "terminalId": "t1", "data": b64(euro[2:])},
            {"sessionUpdate": "terminal_update", "terminalId": "t1", "cwd": None},
        )
        == [True] * 4
    )
    term = thread.terminals.get("t1")
    assert term is not None and (term.command, term.cwd, term.state) == ("make", None, "running")
    assert term.screen.plain_text().rstrip() == "€ ok"
    feed(thread, {"sessionUpdate": "terminal_update", "terminalId": "t1", "output": {"data": b64(b"fresh")}})
    assert term.screen.plain_text() == "fresh" and term.resets == 1
    feed(thread, {"sessionUpdate": "terminal_update", "terminalId": "t1", "exitStatus": {"signal": "SIGINT"}})
    assert (term.exited, term.signal, term.exit_code) == (True, "SIGINT", None)
    feed(thread, {"sessionUpdate": "terminal_update", "terminalId": "t1", "exitStatus": None})
    assert term.state == "running"
    feed(thread, {"sessionUpdate": "terminal_update", "terminalId": "t1", "exitStatus": {}})
    assert (term.state, term.exit_code, term.signal) == ("exited", None, None)


def test_the_screen_takes_the_terminals_size_and_lays_its_output_out_again() -> None:
    thread = Thread()
    feed(thread, {"sessionUpdate": "terminal_output_chunk", "terminalId": "t1", "data": b64(b"0123456789")})
    term = thread.terminals.get("t1")
    assert term is not None and term.screen.columns == 120
    feed(thread, {"sessionUpdate": "terminal_update", "terminalId": "t1", "size": {"cols": 4, "rows": 10}})
    assert term.size == (4, 10) and term.screen.columns == 4
    assert term.screen.plain_text().splitlines() == ["0123", "4567", "89"]
    feed(thread, {"sessionUpdate": "terminal_update", "terminalId": "t1", "size": {"cols": 100000, "rows": 0}})
    assert term.size is None and term.screen.columns == 120  # malformed: the client's default
    feed(thread, {"sessionUpdate": "terminal_update", "terminalId": "t1", "size": {"cols": 9000, "rows": 9000}})
    assert term.size == (1000, 500)  # capped


def test_a_terminal_referenced_before_or_after_its_updates_is_the_same_terminal() -> None:
    thread = Thread()
    ref = {"type": "terminal", "terminalId": "t1"}
    feed(thread, {"sessionUpdate": "tool_call_update", "toolCallId": "c1", "content": [ref]})
    feed(thread, {"sessionUpdate": "terminal_update", "terminalId": "t1", "command": "ls"})
    feed(thread, {"sessionUpdate": "terminal_update", "terminalId": "t2", "command": "pwd"})
    feed(
        thread, {"sessionUpdate": "tool_call_content_chunk", "toolCallId": "c2", "content": {**ref, "terminalId": "t2"}}
    )
    c1, c2 = thread.tool_call("c1"), thread.tool_call("c2")
    assert c1 is not None and c2 is not None and isinstance(c2.content[0], TerminalRef)
    assert thread.terminals.embedded_in("t1") == [c1.seq] and thread.terminals.embedded_in("t2") == [c2.seq]
    assert len(thread.terminals) == 2


def test_terminal_cancel_is_offered_while_advertised_and_running() -> None:
    thread = Thread()
    update = {"sessionUpdate": "terminal_update", "terminalId": "t1"}
    feed(thread, {**update, "capabilities": {"cancel": {}}})
    term = thread.terminals.get("t1")
    assert term is not None and term.stoppable
    assert thread.terminals.ask_stop("t1") and term.stop_asked
    feed(thread, {**update, "exitStatus": {"exitCode": 143}})
    assert not term.stoppable and not thread.terminals.ask_stop("t1")
    feed(thread, {**update, "exitStatus": None, "capabilities": {"cancel": "yes"}})
    assert not term.stoppable and not term.stop_asked


def test_a_replaced_message_is_rendered_anew_not_continued() -> None:
    from webclient.render.message_docs import MessageDocs

    thread = Thread()
    feed(thread, chunk("agent_message_chunk", "m1", "A first paragraph.\n\nSecond one.\n\nThird one.\n\nFourth "))
    (entry,) = thread.entries
    assert isinstance(entry, MessageEntry)
    docs = MessageDocs()
    before = docs.view(entry, 1.0).progress
    assert before.blocks >= 1  # the first paragraph is rendered, and would be kept
    feed(thread, {"sessionUpdate": "agent_message", "messageId": "m1", "content": [text("Short **and** new")]})
    view = docs.view(entry, 2.0)
    assert not view.progress.continues(before, thought=False)  # the page gets it whole
    entry.streaming = False
    final = "".join(docs.view(entry, 3.0).blocks)
    assert "first paragraph" not in final and "<strong>and</strong>" in final


def test_a_message_id_is_looked_for_in_the_current_turn_only() -> None:
    thread = Thread()
    thread.start_turn([TextBlock("one")])
    feed(thread, chunk("agent_message_chunk", "msg_1", "first turn"))
    thread.end_turn()
    thread.start_turn([TextBlock("two")])
    feed(thread, chunk("agent_message_chunk", "msg_1", "second turn"))
    assert [text for _, _, text in messages(thread)] == ["one", "first turn", "two", "second turn"]


def test_a_plan_updated_in_a_later_turn_shows_there_and_the_earlier_card_stays() -> None:
    thread = Thread()
    thread.start_turn([TextBlock("one")])
    feed(thread, plan_update({"type": "items", "planId": "plan", "entries": [{"content": "a", "status": "pending"}]}))
    thread.start_turn([TextBlock("two")])
    feed(thread, plan_update({"type": "items", "planId": "plan", "entries": [{"content": "a", "status": "completed"}]}))
    first, second = [e for e in thread.entries if isinstance(e, Plan)]
    assert (first.turn, first.items[0].status) == (1, "pending")
    assert (second.turn, second.items[0].status) == (2, "completed") and thread.current_plan is second
    feed(thread, {"sessionUpdate": "plan_removed", "planId": "plan"})
    assert second.removed and first.removed and thread.current_plan is None


def test_a_user_message_after_the_agent_replied_is_not_taken_for_the_prompt() -> None:
    thread = Thread()
    thread.start_turn([TextBlock("fix the bug")])
    feed(thread, chunk("agent_message_chunk", "a1", "On it."))
    feed(thread, {"sessionUpdate": "user_message", "messageId": "u9", "content": [text("also this")]})
    assert messages(thread) == [
        ("user-message", None, "fix the bug"),
        ("agent-message", "a1", "On it."),
        ("user-message", "u9", "also this"),
    ]
