"""Tests for child sessions on the wire (webclient.acp.subagents): which thread each ``session/update`` reaches by its
``sessionId``, ``subagent_update`` as a patch, inter-session messages, claude's ``parentToolUseId`` form, nesting in
the launching tool call's card, and that a change inside a child is a change of where it is shown."""

from __future__ import annotations

from typing import Any

from webclient.acp.subagents import SubagentRouter
from webclient.acp.updates import apply_update
from webclient.viewmodel.entries import MessageEntry, ToolCall
from webclient.viewmodel.events import Change, EntryChanged
from webclient.viewmodel.subagents import SessionMessage, Subagent, Subagents
from webclient.viewmodel.thread import Thread

MAIN = "main-1"


def setup() -> tuple[SubagentRouter, Thread, list[Change]]:
    changes: list[Change] = []
    thread = Thread(listener=changes.append)
    return SubagentRouter(Subagents(thread)), thread, changes


def send(router: SubagentRouter, thread: Thread, session_id: str, update: dict[str, Any]) -> None:
    """What `AcpAgent.on_session_update` does: the router first, else the session's own thread."""
    if not router.route({"sessionId": session_id, "update": update}, MAIN):
        apply_update(thread, update)


def chunk(text: str) -> dict[str, Any]:
    return {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}


def announce(child: str = "child-1", **fields: Any) -> dict[str, Any]:
    return {"sessionUpdate": "subagent_update", "sessionId": child, **fields}


def test_a_childs_updates_reach_its_own_thread_not_the_sessions() -> None:
    router, thread, _ = setup()
    send(router, thread, MAIN, chunk("Hello from the parent"))
    send(router, thread, MAIN, announce(title="Explorer", state={"state": "running"}, capabilities={"cancel": {}}))
    send(router, thread, "child-1", chunk("Reading"))
    send(router, thread, "child-1", {"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "Read a.py"})
    message, child = thread.entries
    assert isinstance(message, MessageEntry) and message.text == "Hello from the parent"
    assert isinstance(child, Subagent)
    assert (child.session_id, child.title, child.state, child.can_cancel, child.stoppable) == (
        "child-1", "Explorer", "running", True, True,
    )  # fmt: skip
    child_message, call = child.thread.entries
    assert isinstance(child_message, MessageEntry) and child_message.text == "Reading"
    assert isinstance(call, ToolCall) and call.title == "Read a.py" and thread.tool_call("c1") is None
    assert child_message.scope == "sub1-" and message.scope == ""  # element ids cannot clash


def test_an_unknown_session_does_not_pollute_the_thread_and_is_counted() -> None:
    router, thread, _ = setup()
    send(router, thread, "stranger", chunk("not mine"))
    send(router, thread, "stranger", announce("child-x"))
    assert thread.entries == [] and router.unrouted == 2 and router.registry.child("child-x") is None


def test_subagent_update_is_a_patch_null_clears_and_state_snapshots_replace() -> None:
    router, thread, _ = setup()
    send(router, thread, MAIN, announce(title="T", description="D", cwd="/w", state={"state": "running"}))
    send(router, thread, MAIN, announce(description=None, state={"state": "idle", "stopReason": "error", "error": {
        "code": -32603, "message": "boom"}}))  # fmt: skip
    child = router.registry.child("child-1")
    assert child is not None
    assert (child.title, child.description, child.cwd) == ("T", None, "/w")
    assert (child.state, child.stop_reason, child.error, child.can_cancel) == ("idle", "error", "boom", False)
    send(router, thread, MAIN, announce(state=None, capabilities={"cancel": {}}))
    assert (child.state, child.stop_reason, child.can_cancel, child.stoppable) == (None, None, True, False)
    assert len(thread.entries) == 1  # announced once


def test_children_nest_and_a_change_deep_inside_is_reported_where_the_top_child_is_shown() -> None:
    router, thread, changes = setup()
    send(router, thread, MAIN, announce("child-1"))
    send(router, thread, "child-1", announce("grandchild", title="Deep"))
    top = router.registry.child("child-1")
    deep = router.registry.child("grandchild")
    assert top is not None and deep is not None and deep.parent is top.thread and top.thread.entries == [deep]
    changes.clear()
    send(router, thread, "grandchild", chunk("deep words"))
    assert changes == [top.change]
    assert [e.text for e in deep.thread.entries if isinstance(e, MessageEntry)] == ["deep words"]


def test_the_launching_tool_call_shows_the_child_and_the_messages_between_them() -> None:
    router, thread, changes = setup()
    registry = router.registry
    send(router, thread, MAIN, {"sessionUpdate": "tool_call", "toolCallId": "task-1", "title": "Task: explore"})
    send(router, thread, MAIN, announce(title="Explorer", state={"state": "running"}))
    send(router, thread, MAIN, {
        "sessionUpdate": "session_message", "messageId": "task-1", "senderSessionId": MAIN,
        "recipientSessionId": "child-1", "recipientMessageId": "task-1", "content": [{"type": "text", "text": "Go"}],
    })  # fmt: skip
    send(router, thread, "child-1", {
        "sessionUpdate": "session_message", "messageId": "task-1", "senderSessionId": MAIN,
        "recipientSessionId": "child-1", "senderMessageId": "task-1", "content": [{"type": "text", "text": "Go"}],
    })  # fmt: skip
    call = thread.tool_call("task-1")
    child = registry.child("child-1")
    assert call is not None and child is not None
    assert registry.nested_in(call) == [child] and child.launched_by == "task-1" and child.home == call.change
    changes.clear()
    send(router, thread, "child-1", chunk("found it"))
    assert changes == [call.change]  # the card re-renders with the child inside
    send(router, thread, MAIN, {
        "sessionUpdate": "session_message", "messageId": "task-1:reply", "senderSessionId": "child-1",
        "recipientSessionId": MAIN, "content": [{"type": "text", "text": "It is "}],
    })  # fmt: skip
    send(router, thread, MAIN, {"sessionUpdate": "session_message_chunk", "messageId": "task-1:reply",
                                "content": {"type": "text", "text": "in b.py"}})  # fmt: skip
    sent, reply = [e for e in thread.entries if isinstance(e, SessionMessage)]
    assert (sent.sent, sent.counterpart, sent.text) == (True, "child-1", "Go")
    assert (reply.sent, reply.counterpart, reply.text) == (False, "child-1", "It is in b.py")
    received = next(e for e in child.thread.entries if isinstance(e, SessionMessage))
    assert (received.sent, received.counterpart) == (False, MAIN)
    assert registry.title_of("child-1") == "Explorer" and registry.title_of(MAIN) is None


def test_claudes_parent_tool_use_id_form_nests_the_subagents_updates_in_its_task() -> None:
    router, thread, _ = setup()
    send(router, thread, MAIN, {"sessionUpdate": "tool_call", "toolCallId": "toolu_1", "title": "Task"})
    meta = {"claudeCode": {"parentToolUseId": "toolu_1"}}
    send(router, thread, MAIN, {**chunk("sub says"), "_meta": meta})
    send(router, thread, MAIN, {"sessionUpdate": "tool_call", "toolCallId": "toolu_2", "title": "Grep", "_meta": meta})
    send(router, thread, MAIN, chunk("main says"))
    call = thread.tool_call("toolu_1")
    assert call is not None and thread.tool_call("toolu_2") is None
    (child,) = router.registry.nested_in(call)
    assert child.shown_title == "Task" and not child.stoppable
    assert [e.role for e in child.thread.entries] == ["agent-message", "tool-call"]
    assert [e.role for e in thread.entries] == ["tool-call", "subagent", "agent-message"]


def test_a_stop_needs_a_running_child_that_allows_it_and_a_sent_cancel_marks_it() -> None:
    router, thread, changes = setup()
    send(router, thread, MAIN, announce("a", state={"state": "running"}))
    send(router, thread, MAIN, announce("b", state={"state": "running"}, capabilities={"cancel": {}}))
    assert router.stop("a") is False and router.stop("nobody") is False
    assert router.stop("b") is True
    b = router.registry.child("b")
    assert b is not None and b.stopping and not b.stoppable and changes[-1] == EntryChanged(b.seq)
    assert router.cancel_sent({"sessionId": MAIN}) is False and router.cancel_sent({"sessionId": "b"}) is True
    send(router, thread, MAIN, announce("b", state={"state": "idle", "stopReason": "cancelled"}))
    assert not b.stopping and b.state == "idle"


def test_a_permission_is_asked_on_the_thread_of_the_child_it_is_about() -> None:
    router, thread, _ = setup()
    send(router, thread, MAIN, announce("child-1"))
    send(router, thread, MAIN, {"sessionUpdate": "tool_call", "toolCallId": "toolu_1", "title": "Task"})
    meta = {"claudeCode": {"parentToolUseId": "toolu_1"}}
    send(router, thread, MAIN, {"sessionUpdate": "tool_call", "toolCallId": "toolu_2", "title": "Edit", "_meta": meta})
    child, classic = router.registry.child("child-1"), router.registry.child("parentToolUseId:toolu_1")
    assert child is not None and classic is not None
    assert router.permission_thread({"sessionId": "child-1", "toolCall": {"toolCallId": "x"}}) is child.thread
    assert router.permission_thread({"sessionId": MAIN, "toolCall": {"toolCallId": "toolu_2"}}) is classic.thread
    assert router.permission_thread({"sessionId": MAIN, "toolCall": {"toolCallId": "toolu_1"}}) is None
    assert router.permission_thread({"sessionId": MAIN, "toolCall": {"toolCallId": "new"}}) is None


def test_a_message_between_sessions_says_whom_it_is_to_or_from() -> None:
    router, thread, _ = setup()
    send(router, thread, MAIN, announce("child-1", title="Explorer"))
    send(router, thread, "child-1", announce("grand-1", title="Helper"))

    def heading(session_id: str, sender: str, recipient: str) -> str:
        message_id = f"{session_id}-{sender}-{recipient}"
        send(router, thread, session_id, {"sessionUpdate": "session_message", "messageId": message_id,
                                          "senderSessionId": sender, "recipientSessionId": recipient})  # fmt: skip
        owner = router.registry.thread_of(session_id) or thread
        message = next(e for e in owner.entries if isinstance(e, SessionMessage) and e.message_id == message_id)
        return router.registry.heading(message)

    assert heading(MAIN, MAIN, "child-1") == "→ sent to Explorer"
    assert heading(MAIN, "child-1", MAIN) == "← reply from Explorer"
    assert heading("child-1", MAIN, "child-1") == "← from the parent session"
    assert heading("child-1", "child-1", "grand-1") == "→ sent to Helper"
    assert heading("child-1", "grand-1", "child-1") == "← reply from Helper"
    assert heading("grand-1", "child-1", "grand-1") == "← from Explorer"
    assert heading("grand-1", "grand-1", "child-1") == "→ sent to Explorer"
