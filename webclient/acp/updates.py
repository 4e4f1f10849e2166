"""One table: every ``sessionUpdate`` of ACP (v1 and the v2 draft side by side) and the fold that shows it, in the
thread or the session's controls.

Every key is spelled out in `THREAD_FOLDS`, `CONTROL_FOLDS` and `SUBAGENT_UPDATES` (a child session's updates are
routed first, by `webclient.acp.subagents`). The folds of the thread's messages, tool calls, plans and diffs are
here; a fold that needs more code is a function of the module named for its concept (`agent_terminals`,
`advisories`, `controls`, `v2_turn`). Unknown or malformed values are never dropped: content we cannot read becomes
:class:`Unknown` with its JSON, every tool call keeps its raw payload, and a type this client does not know stays,
marked, in the protocol log. Spec: https://agentclientprotocol.com/protocol/prompt-turn, ../shared/docs/acp-reference.md
§12 and ../shared/seeds/.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import partial
from typing import Any, cast

from webclient.acp import advisories, agent_terminals, controls, v2_turn, wire, wire_v2
from webclient.acp.wire_values import items, mapping, string
from webclient.viewmodel.content import (
    AudioBlock,
    ContentBlock,
    Diff,
    DiffChanges,
    EmbeddedResource,
    FileOperation,
    ImageBlock,
    Location,
    PlanItem,
    ResourceLink,
    TerminalRef,
    TextBlock,
    ToolContent,
    Unknown,
)
from webclient.viewmodel.controls import SessionControls
from webclient.viewmodel.entries import MessageRole
from webclient.viewmodel.plans import remove_plan, update_plan
from webclient.viewmodel.thread import Thread

log = logging.getLogger(__name__)

# The wire's shapes, v1 or the v2 draft (the generated `webclient.acp.wire` types): what the spec promises, each value
# still checked where it is read. A tool call as an update creates or patches it, or as a permission request names it.
WireContentBlock = wire.ContentBlock | wire_v2.V2ContentBlock
WireToolContent = wire.ToolCallContent | wire_v2.V2ToolCallContent
WireToolCall = wire.ToolCall | wire.ToolCallUpdate | wire_v2.V2ToolCallUpdate
WireLocation = wire.ToolCallLocation | wire_v2.V2ToolCallLocation
WireChunk = wire.ContentChunk | wire_v2.V2ContentChunk
WireMessage = wire_v2.V2UserMessage | wire_v2.V2AgentMessage | wire_v2.V2AgentThought
WirePlanUpdate = wire.PlanUpdate | wire_v2.V2PlanUpdate
WirePlan = wire.PlanUpdateContent | wire_v2.V2PlanUpdateContent
WirePlanEntry = wire.PlanEntry | wire_v2.V2PlanEntry

# Wire field → view-model field of a tool call, and the type a value must have to be taken.
_TOOL_CALL_FIELDS: dict[str, tuple[str, type | tuple[type, ...] | None]] = {
    "name": ("name", str),
    "title": ("title", str),
    "kind": ("kind", str),
    "status": ("status", str),
    "content": ("content", list),
    "locations": ("locations", list),
    "rawInput": ("raw_input", None),
    "rawOutput": ("raw_output", None),
}


def content_block(raw: Any) -> ContentBlock:
    """A ContentBlock (https://agentclientprotocol.com/protocol/content) as a view-model block."""
    if not isinstance(raw, dict):
        return Unknown(kind=type(raw).__name__, raw={"value": raw})
    kind = raw.get("type")
    if kind == "text" and type(text := raw.get("text")) is str:  # the usual block, once per streamed chunk: no cast
        return TextBlock(text, raw)
    block = cast(WireContentBlock, raw)
    if kind == "image" and (mime_type := string(block.get("mimeType"))) is not None:
        return ImageBlock(mime_type=mime_type, data=string(block.get("data")), uri=string(block.get("uri")), raw=raw)
    if kind == "audio" and (mime_type := string(block.get("mimeType"))) is not None:
        data = string(block.get("data"))
        if data is not None:
            return AudioBlock(mime_type=mime_type, data=data, raw=raw)
    if kind == "resource_link" and (uri := string(block.get("uri"))) is not None:
        size = block.get("size")
        return ResourceLink(
            uri=uri,
            name=string(block.get("name")) or uri,
            title=string(block.get("title")),
            description=string(block.get("description")),
            mime_type=string(block.get("mimeType")),
            size=size if isinstance(size, int) else None,
            raw=raw,
        )
    resource = mapping(block.get("resource"))
    if kind == "resource" and (uri := string(resource.get("uri"))) is not None:
        return EmbeddedResource(
            uri=uri,
            mime_type=string(resource.get("mimeType")),
            text=string(resource.get("text")),
            blob=string(resource.get("blob")),
            raw=raw,
        )
    return Unknown(kind=str(kind), raw=raw)


def tool_content(raw: Any) -> ToolContent:
    """A ToolCallContent item: wrapped content, a diff, a terminal, or (kept as is) anything else."""
    if not isinstance(raw, dict):
        return Unknown(kind=type(raw).__name__, raw={"value": raw})
    content = cast(WireToolContent, raw)
    kind = content.get("type")
    if kind == "content" and "content" in content:
        return content_block(content.get("content"))
    if kind == "diff":
        path, new_text = string(content.get("path")), string(content.get("newText"))
        if path is not None and new_text is not None:
            return Diff(path=path, old_text=string(content.get("oldText")), new_text=new_text, raw=raw)
        if (changes := diff_changes(raw)) is not None:  # the v2 draft's shape
            return changes
    if kind == "terminal" and (terminal_id := string(content.get("terminalId"))) is not None:
        return TerminalRef(terminal_id=terminal_id, raw=raw)
    return Unknown(kind=str(kind), raw=raw)


def _locations(raw: list[Any]) -> list[Location]:
    locations = []
    for item in raw:
        location = cast(WireLocation, mapping(item))
        path, line = string(location.get("path")), location.get("line")
        if path is not None:
            locations.append(Location(path=path, line=line if isinstance(line, int) else None))
    return locations


def tool_call_patch(update: WireToolCall) -> dict[str, Any]:
    """The view-model patch for a ``tool_call``/``tool_call_update``: only the fields present.

    ``null`` clears a field; a value of the wrong type is left out of the patch (it stays visible in
    the raw payload) rather than failing the whole update.
    """
    patch: dict[str, Any] = {}
    for key, (name, expected) in _TOOL_CALL_FIELDS.items():
        if key not in update:
            continue
        value = update.get(key)
        if value is None:
            patch[name] = None
        elif expected is not None and not isinstance(value, expected):
            log.warning("tool call %r: ignoring %s of type %s", update.get("toolCallId"), key, type(value).__name__)
        elif key == "content":
            patch[name] = [tool_content(item) for item in items(value)]
        elif key == "locations":
            patch[name] = _locations(items(value))
        else:
            patch[name] = value
    return patch


def _raw_fields(update: WireToolCall) -> dict[str, Any]:
    return {k: v for k, v in update.items() if k not in ("sessionUpdate", "toolCallId")}


# -- messages ------------------------------------------------------------------------------------------------------


def _chunk(role: MessageRole) -> ThreadFold:
    """``agent_message_chunk`` and its kin: v1's streamed chunk, and v2's by ``messageId`` (to the message it names)."""

    def fold(thread: Thread, update: WireChunk) -> bool:
        message_id = update.get("messageId")
        block = content_block(update.get("content"))
        thread.append_chunk(role, block, message_id if type(message_id) is str else None)
        return True

    return fold


def _message(role: MessageRole) -> ThreadFold:
    """``agent_message`` and its kin (the v2 draft): a message's upsert by ``messageId``."""

    def fold(thread: Thread, update: WireMessage) -> bool:
        message_id, content = string(update.get("messageId")), update.get("content")
        if message_id is None or not (content is None or isinstance(content, list)):
            return False
        blocks = [content_block(block) for block in content] if content is not None else None
        thread.upsert_message(role, message_id, blocks, replace="content" in update)
        return True

    return fold


# -- tool calls ----------------------------------------------------------------------------------------------------


def _tool_call(create: bool) -> ThreadFold:
    """``tool_call`` (``create``: a new card) and ``tool_call_update`` (an upsert, as v2 has it)."""

    def fold(thread: Thread, update: WireToolCall) -> bool:
        tool_call_id = string(update.get("toolCallId"))
        if tool_call_id is None:
            return False
        thread.upsert_tool_call(tool_call_id, tool_call_patch(update), _raw_fields(update), create=create)
        meta = update.get("_meta")
        if isinstance(meta, dict):
            agent_terminals.apply_terminal_meta(thread, tool_call_id, meta)
        return True

    return fold


def _tool_call_content_chunk(thread: Thread, update: wire_v2.V2ToolCallContentChunk) -> bool:
    tool_call_id = string(update.get("toolCallId"))
    if tool_call_id is None or "content" not in update:
        return False
    sent: Any = update["content"]  # any JSON: kept as it came, beside what it shows
    thread.append_tool_content(tool_call_id, tool_content(sent), sent)
    return True


# -- diffs (the v2 draft's shape) ----------------------------------------------------------------------------------


def _operation(raw: Any) -> FileOperation | None:
    change = cast(wire_v2.V2DiffChange, mapping(raw))
    operation, path = string(change.get("operation")), string(change.get("path"))
    if operation is None or path is None:
        return None
    return FileOperation(
        operation=operation,
        path=path,
        old_path=string(change.get("oldPath")),
        file_type=string(change.get("fileType")),
        mime_type=string(change.get("mimeType")),
    )


def diff_changes(raw: dict[str, Any]) -> DiffChanges | None:
    """A v2 diff ``{changes, patch?}``, or None when it is not one (a malformed change among good ones is left out,
    and logged)."""
    diff = cast(wire_v2.V2Diff, raw)
    changes = diff.get("changes")
    if not isinstance(changes, list):
        return None
    operations = tuple(op for op in map(_operation, changes) if op is not None)
    if changes and not operations:
        return None  # not this shape (an older draft's): kept as unknown content, with its JSON
    if len(operations) < len(changes):
        log.warning("a diff with %d malformed changes: they are not shown", len(changes) - len(operations))
    patch = mapping(diff.get("patch"))
    fmt, text = string(patch.get("format")), string(patch.get("text"))
    return DiffChanges(operations, fmt if text is not None else None, text, raw)


# -- plans ---------------------------------------------------------------------------------------------------------


def plan_items(raw: Any) -> list[PlanItem]:
    """A plan's ``entries``: its items in order, each value shown as text (an item that is no object is left out)."""
    entries = [cast(WirePlanEntry, item) for item in items(raw) if isinstance(item, dict)]
    return [
        PlanItem(
            content=str(entry.get("content", "")),
            priority=str(entry.get("priority", "medium")),
            status=str(entry.get("status", "pending")),
        )
        for entry in entries
    ]


def _plan(thread: Thread, update: wire.Plan) -> bool:
    """v1's ``plan``: the plan of the turn, replaced whole."""
    thread.set_plan(plan_items(update.get("entries")))
    return True


def _plan_update(thread: Thread, update: WirePlanUpdate) -> bool:
    """``plan_update``: the plan its ``planId`` names is replaced (one without an id is v1's plan of the turn)."""
    plan = cast(WirePlan, mapping(update.get("plan")))
    form = string(plan.get("type"))
    if form is None:
        return False
    plan_id = string(plan.get("planId"))
    if plan_id is None:
        if form != "items":
            return False
        thread.set_plan(plan_items(plan.get("entries")))
        return True
    raw = {k: v for k, v in plan.items() if k not in ("type", "planId")}
    entries, markdown, uri = plan.get("entries"), string(plan.get("content")), string(plan.get("uri"))
    if form == "items" and isinstance(entries, list):
        update_plan(thread, plan_id, form, items=plan_items(entries))
    elif form == "markdown" and markdown is not None:
        update_plan(thread, plan_id, form, markdown=markdown)
    elif form == "file" and uri is not None:
        update_plan(thread, plan_id, form, uri=uri)
    elif form in ("items", "markdown", "file"):
        return False  # a known kind, malformed
    else:
        update_plan(thread, plan_id, form, raw=raw)  # a kind this client does not know: shown as its JSON
    return True


def _plan_removed(thread: Thread, update: wire.PlanRemoved) -> bool:
    plan_id = string(update.get("planId"))
    return plan_id is not None and remove_plan(thread, plan_id) is not None


# -- the table -----------------------------------------------------------------------------------------------------

ThreadFold = Callable[[Thread, Any], bool]
"""Folds one ``session/update`` into the thread; False when it is malformed (and so not applied). The update is the
JSON object the agent sent: a fold takes it as the wire type its ``sessionUpdate`` names, and checks every value."""

ControlFold = Callable[[SessionControls, Any], bool]
"""Folds one ``session/update`` into the controls, as a `ThreadFold` into the thread."""

THREAD_FOLDS: dict[str, ThreadFold] = {
    "agent_message_chunk": _chunk("agent-message"),
    "agent_thought_chunk": _chunk("thought"),
    "user_message_chunk": _chunk("user-message"),
    "agent_message": _message("agent-message"),
    "agent_thought": _message("thought"),
    "user_message": _message("user-message"),
    "tool_call": _tool_call(create=True),
    "tool_call_update": _tool_call(create=False),
    "tool_call_content_chunk": _tool_call_content_chunk,
    "plan": _plan,
    "plan_update": _plan_update,
    "plan_removed": _plan_removed,
    "terminal_update": agent_terminals.terminal_update,
    "terminal_output_chunk": agent_terminals.terminal_output_chunk,
    "state_update": v2_turn.show_state,  # the turn's end itself is the adapter's (webclient.acp.v2_turn)
    "notice": advisories.notice,
    "compaction_update": lambda thread, update: advisories.compaction_update(thread, update, content_block),
    "compaction_summary_chunk": lambda thread, update: advisories.compaction_summary_chunk(
        thread, update, content_block
    ),
}
"""The ``sessionUpdate`` types shown in the thread."""

CONTROL_FOLDS: dict[str, ControlFold] = {
    "available_commands_update": controls.commands_update,
    "current_mode_update": controls.current_mode_update,
    "config_option_update": controls.config_option_update,
    "session_info_update": controls.session_info_update,
    "usage_update": controls.usage_update,
}
"""The ``sessionUpdate`` types shown in the session's controls."""

SUBAGENT_UPDATES = frozenset({"subagent_update", "session_message", "session_message_chunk"})
"""Child sessions and the messages between sessions: routed and folded by `webclient.acp.subagents`."""

CONTROL_UPDATES = frozenset(CONTROL_FOLDS)

KNOWN_SESSION_UPDATES = frozenset(THREAD_FOLDS) | CONTROL_UPDATES | SUBAGENT_UPDATES
"""Every ``sessionUpdate`` this client understands; others are kept and shown in the protocol log."""


class SessionUpdates:
    """The table of one session: every ``sessionUpdate`` type this client knows, to its fold bound to the thread or
    the controls it changes. One lookup and one call per notification."""

    def __init__(self, thread: Thread, controls: SessionControls) -> None:
        folds: dict[str, Callable[[dict[str, Any]], bool]] = {
            kind: partial(fold, thread) for kind, fold in THREAD_FOLDS.items()
        }
        folds.update({kind: partial(fold, controls) for kind, fold in CONTROL_FOLDS.items()})
        self._folds = folds

    def apply(self, update: Any) -> bool:
        """Fold one ``session/update`` ``update`` object into the thread or the controls.

        False when it was not applied: a type this client does not know (the protocol log shows it, marked),
        or a malformed update."""
        if type(update) is not dict:
            return False
        kind = update.get("sessionUpdate")
        fold = self._folds.get(kind) if type(kind) is str else None
        return fold is not None and fold(update)


def apply_update(thread: Thread, update: Any) -> bool:
    """Fold one ``session/update`` ``update`` object into the thread.

    Returns False when the update is not about the thread (modes, commands, usage, unknown types...):
    the caller handles or logs those.
    """
    if not isinstance(update, dict):
        return False
    kind = update.get("sessionUpdate")
    fold = THREAD_FOLDS.get(kind) if isinstance(kind, str) else None
    return fold is not None and fold(thread, update)


def apply_control_update(controls: SessionControls, update: dict[str, Any]) -> bool:
    """Fold a ``session/update`` about the controls; False when it is about something else."""
    kind = update.get("sessionUpdate")
    fold = CONTROL_FOLDS.get(kind) if isinstance(kind, str) else None
    return fold is not None and fold(controls, update)
