"""ACP wire shapes → view model: the one place that knows how ACP describes a conversation.

Handles v1 and the v2 draft side by side (``tool_call`` and the ``tool_call_update`` upsert,
``tool_call_content_chunk``, open enums). Unknown or malformed values are never dropped: content we
cannot read becomes :class:`Unknown` with its JSON, and every tool call keeps its raw payload.
Spec: https://agentclientprotocol.com/protocol/tool-calls and ../shared/seeds/.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import partial
from typing import Any

from webclient.acp import advisories, lifecycle
from webclient.acp.controls import CONTROL_FOLDS, CONTROL_UPDATES
from webclient.acp.v2_updates import V2_FOLDS, diff_changes, message_folds, plan_items
from webclient.viewmodel.content import (
    AudioBlock,
    ContentBlock,
    Diff,
    EmbeddedResource,
    ImageBlock,
    Location,
    PermissionOption,
    ResourceLink,
    TerminalRef,
    TextBlock,
    ToolContent,
    Unknown,
)
from webclient.viewmodel.controls import SessionControls
from webclient.viewmodel.thread import Thread

log = logging.getLogger(__name__)

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


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def content_block(raw: Any) -> ContentBlock:
    """A ContentBlock (https://agentclientprotocol.com/protocol/content) as a view-model block."""
    if not isinstance(raw, dict):
        return Unknown(kind=type(raw).__name__, raw={"value": raw})
    kind = raw.get("type")
    if kind == "text" and type(text := raw.get("text")) is str:  # the usual block, once per streamed chunk
        return TextBlock(text, raw)
    if kind == "image" and isinstance(raw.get("mimeType"), str):
        return ImageBlock(mime_type=raw["mimeType"], data=_str(raw.get("data")), uri=_str(raw.get("uri")), raw=raw)
    if kind == "audio" and isinstance(raw.get("mimeType"), str) and isinstance(raw.get("data"), str):
        return AudioBlock(mime_type=raw["mimeType"], data=raw["data"], raw=raw)
    if kind == "resource_link" and isinstance(raw.get("uri"), str):
        size = raw.get("size")
        return ResourceLink(
            uri=raw["uri"],
            name=_str(raw.get("name")) or raw["uri"],
            title=_str(raw.get("title")),
            description=_str(raw.get("description")),
            mime_type=_str(raw.get("mimeType")),
            size=size if isinstance(size, int) else None,
            raw=raw,
        )
    resource = raw.get("resource")
    if kind == "resource" and isinstance(resource, dict) and isinstance(resource.get("uri"), str):
        return EmbeddedResource(
            uri=resource["uri"],
            mime_type=_str(resource.get("mimeType")),
            text=_str(resource.get("text")),
            blob=_str(resource.get("blob")),
            raw=raw,
        )
    return Unknown(kind=str(kind), raw=raw)


def tool_content(raw: Any) -> ToolContent:
    """A ToolCallContent item: wrapped content, a diff, a terminal, or (kept as is) anything else."""
    if not isinstance(raw, dict):
        return Unknown(kind=type(raw).__name__, raw={"value": raw})
    kind = raw.get("type")
    if kind == "content" and "content" in raw:
        return content_block(raw["content"])
    if kind == "diff" and isinstance(raw.get("path"), str) and isinstance(raw.get("newText"), str):
        old = raw.get("oldText")
        return Diff(path=raw["path"], old_text=old if isinstance(old, str) else None, new_text=raw["newText"], raw=raw)
    if kind == "diff" and (changes := diff_changes(raw)) is not None:  # the v2 draft's shape
        return changes
    if kind == "terminal" and isinstance(raw.get("terminalId"), str):
        return TerminalRef(terminal_id=raw["terminalId"], raw=raw)
    return Unknown(kind=str(kind), raw=raw)


def _locations(raw: list[Any]) -> list[Location]:
    locations = []
    for item in raw:
        if isinstance(item, dict) and isinstance(item.get("path"), str):
            line = item.get("line")
            locations.append(Location(path=item["path"], line=line if isinstance(line, int) else None))
    return locations


def tool_call_patch(update: dict[str, Any]) -> dict[str, Any]:
    """The view-model patch for a ``tool_call``/``tool_call_update``: only the fields present.

    ``null`` clears a field; a value of the wrong type is left out of the patch (it stays visible in
    the raw payload) rather than failing the whole update.
    """
    patch: dict[str, Any] = {}
    for wire, (name, expected) in _TOOL_CALL_FIELDS.items():
        if wire not in update:
            continue
        value = update[wire]
        if value is None:
            patch[name] = None
        elif expected is not None and not isinstance(value, expected):
            log.warning("tool call %r: ignoring %s of type %s", update.get("toolCallId"), wire, type(value).__name__)
        elif wire == "content":
            patch[name] = [tool_content(item) for item in value]
        elif wire == "locations":
            patch[name] = _locations(value)
        else:
            patch[name] = value
    return patch


def _raw_fields(update: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in update.items() if k not in ("sessionUpdate", "toolCallId")}


def permission_options(raw: Any) -> list[PermissionOption]:
    """The options of a ``session/request_permission`` (unknown kinds are kept; styling is generic)."""
    if not isinstance(raw, list):
        return []
    return [
        PermissionOption(
            option_id=item["optionId"], name=str(item.get("name") or item["optionId"]), kind=str(item.get("kind", ""))
        )
        for item in raw
        if isinstance(item, dict) and isinstance(item.get("optionId"), str)
    ]


def apply_terminal_meta(thread: Thread, tool_call_id: str, meta: dict[str, Any]) -> None:
    """Display-only terminals: the agent runs the command itself and reports it in the tool call's ``_meta``.

    The convention of claude-agent-acp and codex-acp (advertised by ``clientCapabilities._meta.terminal_output``):
    ``terminal_info {terminal_id, cwd?}`` creates it, ``terminal_output`` / ``terminal_output_delta``
    ``{terminal_id, data}`` append output, ``terminal_exit {terminal_id, exit_code, signal}`` ends it.
    """
    info = meta.get("terminal_info")
    if isinstance(info, dict) and isinstance(info.get("terminal_id"), str):
        terminal_id = info["terminal_id"]
        thread.terminals.started(terminal_id, None, _str(info.get("cwd")))
        call = thread.tool_call(tool_call_id)
        shown = call is not None and any(
            isinstance(item, TerminalRef) and item.terminal_id == terminal_id for item in call.content
        )
        if not shown:
            raw = {"type": "terminal", "terminalId": terminal_id}
            thread.append_tool_content(tool_call_id, TerminalRef(terminal_id=terminal_id, raw=raw), raw)
    for key in ("terminal_output", "terminal_output_delta"):
        output = meta.get(key)
        if (
            isinstance(output, dict)
            and isinstance(output.get("terminal_id"), str)
            and isinstance(output.get("data"), str)
        ):
            thread.terminals.output(output["terminal_id"], output["data"].encode("utf-8", "surrogatepass"))
    end = meta.get("terminal_exit")
    if isinstance(end, dict) and isinstance(end.get("terminal_id"), str):
        code = end.get("exit_code")
        thread.terminals.exited(
            end["terminal_id"],
            code if isinstance(code, int) and not isinstance(code, bool) else None,
            _str(end.get("signal")),
        )


def _tool_call_fold(create: bool) -> ThreadFold:
    """``tool_call`` (``create``: a new card) and ``tool_call_update`` (an upsert, as v2 has it)."""

    def fold(thread: Thread, update: dict[str, Any]) -> bool:
        tool_call_id = update.get("toolCallId")
        if not isinstance(tool_call_id, str):
            return False
        thread.upsert_tool_call(tool_call_id, tool_call_patch(update), _raw_fields(update), create=create)
        meta = update.get("_meta")
        if isinstance(meta, dict):
            apply_terminal_meta(thread, tool_call_id, meta)
        return True

    return fold


def _tool_call_content_chunk(thread: Thread, update: dict[str, Any]) -> bool:
    tool_call_id = update.get("toolCallId")
    if not isinstance(tool_call_id, str) or "content" not in update:
        return False
    thread.append_tool_content(tool_call_id, tool_content(update["content"]), update["content"])
    return True


def _plan(thread: Thread, update: dict[str, Any]) -> bool:
    thread.set_plan(plan_items(update.get("entries")))
    return True


ThreadFold = Callable[[Thread, dict[str, Any]], bool]
"""Folds one ``session/update`` into the thread; False when it is malformed (and so not applied)."""


def partial_fold(fold: Callable[[Thread, dict[str, Any], Any], bool]) -> ThreadFold:
    """A fold that reads content blocks, given this module's reader (the advisories module cannot import it)."""
    return lambda thread, update: fold(thread, update, content_block)


THREAD_FOLDS: dict[str, ThreadFold] = {
    **message_folds(content_block),
    **V2_FOLDS,
    "tool_call": _tool_call_fold(create=True),
    "tool_call_update": _tool_call_fold(create=False),
    "tool_call_content_chunk": _tool_call_content_chunk,
    "plan": _plan,
    "state_update": lifecycle.show_state,  # the turn's end itself is the adapter's (webclient.acp.lifecycle)
    "notice": advisories.notice,
    "compaction_update": partial_fold(advisories.compaction_update),
    "compaction_summary_chunk": partial_fold(advisories.compaction_summary_chunk),
}
"""The thread's part of the dispatch table of every ``sessionUpdate``; the controls' is `CONTROL_FOLDS`."""

SUBAGENT_UPDATES = frozenset({"subagent_update", "session_message", "session_message_chunk"})
"""Child sessions and the messages between sessions: folded by `webclient.acp.subagents`."""

KNOWN_SESSION_UPDATES = frozenset(THREAD_FOLDS) | CONTROL_UPDATES | SUBAGENT_UPDATES
"""Every ``sessionUpdate`` this client understands; others are kept and shown in the protocol log."""


class SessionUpdates:
    """The dispatch table of one session: every ``sessionUpdate`` type this client knows, to its fold bound to
    the thread or the controls it changes. One lookup and one call per notification."""

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
