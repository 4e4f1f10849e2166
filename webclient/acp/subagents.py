"""Subagents on the wire: which thread each ``session/update`` belongs to, and the child sessions' own updates.

Two forms (https://agentclientprotocol.com, unstable ``subagents``; claude-agent-acp's ``native-subagents.js``):

* the client advertises ``subagents: {}``: the agent announces a child on its parent with ``subagent_update``
  (patch semantics: omitted is unchanged, ``null`` clears), then sends the child's updates with the child's
  ``sessionId``, and inter-session messages (``session_message`` upserts, ``session_message_chunk``) on the
  sender's and the recipient's sessions. A launch's prompt is a ``session_message`` whose ``messageId`` is the
  launching tool call's id, its answer ``<that id>:reply``.
* claude-agent-acp without that capability: the child's updates come on the parent session, with
  ``_meta.claudeCode.parentToolUseId`` naming the Task/Agent tool call that launched it.

Children nest (a child's child is announced on the child). An update for a session that is neither the session nor
an announced child is not shown: it stays in the protocol log, and `unrouted` counts it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, cast

from webclient.acp import wire, wire_v2
from webclient.acp.updates import SUBAGENT_UPDATES, SessionUpdates, content_block
from webclient.acp.wire_values import items, mapping, string, strings, text
from webclient.viewmodel.controls import SessionControls
from webclient.viewmodel.subagents import Subagent, Subagents
from webclient.viewmodel.thread import Thread

CAPABILITIES: dict[str, Any] = {"subagents": {}}
"""What this client advertises: it shows child sessions and inter-session messages."""

CLASSIC = "parentToolUseId:"
"""The prefix of the key of a child known only by claude's ``_meta.claudeCode.parentToolUseId`` (it has no session
id of its own, and cannot be stopped on its own)."""

_TEXT_FIELDS = {"title": ("title", 200), "description": ("description", 2000), "cwd": ("cwd", 4096)}


def parent_tool_use_id(update: Mapping[str, Any]) -> str | None:
    """claude-agent-acp's mark on a subagent's update sent on the parent session: the launching tool call's id."""
    meta = update.get("_meta")
    claude = meta.get("claudeCode") if type(meta) is dict else None
    return string(mapping(claude).get("parentToolUseId")) or None


SubagentUpdate = wire.SubagentUpdate | wire_v2.V2SubagentUpdate
SessionMessage = wire.SessionMessage | wire_v2.V2SessionMessage
SessionMessageChunk = wire.SessionMessageChunk | wire_v2.V2SessionMessageChunk
StateUpdate = wire.StateUpdate | wire_v2.V2StateUpdate


class SubagentRouter:
    """Routes one session's updates by ``sessionId`` to its thread or a child's, and folds the subagent updates."""

    def __init__(self, registry: Subagents, unrouted: Callable[[], None] = lambda: None) -> None:
        self.registry = registry
        self._unrouted = unrouted
        """Told when an update of an unknown session came (the protocol log marks its line)."""
        self._updates: dict[str, SessionUpdates] = {}
        """Each child's own dispatch table (its thread; controls of its own, which the page does not show)."""
        self.unrouted = 0
        """Updates of sessions that are neither this one nor an announced child (not shown)."""

    def route(self, params: dict[str, Any], main: str | None) -> bool:
        """Fold a ``session/update`` that is not simply the session's own; False when it is (the caller folds it)."""
        update = params.get("update")
        if type(update) is not dict:
            return False
        session_id = params.get("sessionId")
        kind = update.get("sessionUpdate")
        child = self.registry.child(session_id)
        if child is not None:
            if kind in SUBAGENT_UPDATES:
                self._fold(child.thread, child.session_id, update)
            else:
                self._child_updates(child).apply(update)
            return True
        if main is not None and session_id != main:
            self.unrouted += 1
            self._unrouted()
            return True
        if kind in SUBAGENT_UPDATES:
            self._fold(self.registry.main, main, update)
            return True
        launched_by = parent_tool_use_id(update)
        if launched_by is None:
            return False
        classic = self._classic_child(launched_by)
        if classic is not None:
            self._child_updates(classic).apply(update)
        return True

    def stop(self, session_id: str) -> bool:
        """The user stopped a child: True (and it shows as stopping) when it can be stopped."""
        child = self.registry.child(session_id)
        if child is None or not child.stoppable or session_id.startswith(CLASSIC):
            return False
        self.registry.stopping(child)
        return True

    def cancel_sent(self, params: Any) -> bool:
        """A ``session/cancel`` the client sent (live, or in the journal replayed) named a child: it is stopping.
        False when it named the session itself."""
        child = self.registry.child(mapping(params).get("sessionId"))
        if child is None:
            return False
        self.registry.stopping(child)
        return True

    def permission_thread(self, params: dict[str, Any]) -> Thread | None:
        """Where a ``session/request_permission`` is asked: its child's thread when it names a child session, or the
        thread whose card it is about (claude's ``parentToolUseId`` form asks on the parent session about a card of
        the child's); None for the session's own thread."""
        thread = self.registry.thread_of(params.get("sessionId"))
        if thread is not None or not len(self.registry):
            return thread
        request = cast(wire.RequestPermissionRequest, params)  # v1's: v2 asks about a subject, not a tool call
        tool_call_id = string(mapping(request.get("toolCall")).get("toolCallId"))
        if tool_call_id is None or self.registry.main.tool_call(tool_call_id) is not None:
            return None
        return next((t for t in self._threads() if t.tool_call(tool_call_id) is not None), None)

    def asked_by(self, params: dict[str, Any]) -> str | None:
        """The child session a request of the agent's (a question) comes from, if it is one's."""
        child = self.registry.child(params.get("sessionId"))
        return child.session_id if child is not None else None

    # -- folds -------------------------------------------------------------------------------------

    def _child_updates(self, child: Subagent) -> SessionUpdates:
        updates = self._updates.get(child.session_id)
        if updates is None:
            updates = self._updates[child.session_id] = SessionUpdates(child.thread, SessionControls())
        return updates

    def _classic_child(self, launched_by: str) -> Subagent | None:
        """The child the tool call ``launched_by`` launched, in claude's ``parentToolUseId`` form: shown in that card,
        in whichever thread has it (a child's own Task launches nest)."""
        key = CLASSIC + launched_by
        child = self.registry.child(key)
        if child is not None:
            return child
        thread = next(
            (thread for thread in self._threads() if thread.tool_call(launched_by) is not None), self.registry.main
        )
        child = self.registry.announce(thread, key)
        if child is not None:
            self.registry.launched(child, launched_by)
        return child

    def _threads(self) -> list[Thread]:
        return [self.registry.main, *(child.thread for child in self.registry.all())]

    def _fold(self, thread: Thread, own: str | None, update: dict[str, Any]) -> None:
        kind = update.get("sessionUpdate")
        if kind == "subagent_update":
            self._subagent_update(thread, own, cast(SubagentUpdate, update))
        elif kind == "session_message":
            self._session_message(thread, own, cast(SessionMessage, update))
        elif kind == "session_message_chunk":
            chunk = cast(SessionMessageChunk, update)
            message_id = string(chunk.get("messageId"))
            if message_id is not None and "content" in chunk:
                message = self.registry.message(thread, own, message_id)
                message.add(content_block(chunk["content"]))
                thread.listener(message.change)

    def _subagent_update(self, parent: Thread, own: str | None, update: SubagentUpdate) -> None:
        """``subagent_update``: announces the child on first sight (where it is said), then patches it."""
        session_id = string(update.get("sessionId"))
        if not session_id or session_id == own or session_id.startswith(CLASSIC):
            return
        child = self.registry.announce(parent, session_id)
        if child is None:
            return
        fields: dict[str, Any] = {}
        for key, (field, limit) in _TEXT_FIELDS.items():
            if key in update:
                fields[field] = text(update.get(key), limit)
        if "additionalDirectories" in update:
            fields["additional_directories"] = strings(update.get("additionalDirectories"))[:20]
        if "capabilities" in update:
            capabilities = update.get("capabilities")
            fields["can_cancel"] = isinstance(capabilities, dict) and isinstance(capabilities.get("cancel"), dict)
        if "state" in update:
            fields.update(_state(update.get("state")))
        self.registry.patch(child, fields)

    def _session_message(self, thread: Thread, own: str | None, update: SessionMessage) -> None:
        """``session_message``: an upsert of an inter-session message in ``own``'s transcript. The outgoing view of
        a launch (to a child, its id a tool call's of this thread) and the child's ``<id>:reply`` nest the child in
        that tool call's card."""
        message_id = string(update.get("messageId"))
        if not message_id:
            return
        message = self.registry.message(thread, own, message_id)
        for key, field in (("senderSessionId", "sender"), ("recipientSessionId", "recipient")):
            if key in update:
                setattr(message, field, string(update.get(key)))
        if "content" in update:
            message.replace([content_block(block) for block in items(update.get("content"))])
        thread.listener(message.change)
        launch = message_id.removesuffix(":reply")
        child = self.registry.child(message.counterpart)
        if child is not None and child.parent is thread and thread.tool_call(launch) is not None:
            self.registry.launched(child, launch)


def _state(raw: object) -> dict[str, Any]:
    """A ``StateUpdate`` snapshot as the fields it sets (``null`` clears the state: activity unknown)."""
    snapshot = cast(StateUpdate, mapping(raw))
    state = string(snapshot.get("state"))
    if state is None:
        return {"state": None, "stop_reason": None, "error": None}
    reason = string(snapshot.get("stopReason"))
    message = string(mapping(snapshot.get("error")).get("message"))
    return {
        "state": state[:40],
        "stop_reason": reason[:40] if reason is not None else None,
        "error": message[:2000] if message is not None else None,
    }
