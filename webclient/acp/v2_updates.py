"""The v2 draft's session updates and content shapes → view model (they are read on a v1 connection too).

Messages by ``messageId`` (``user_message``/``agent_message``/``agent_thought`` upserts and their chunks), plans by
``planId`` (``plan_update`` of items, Markdown, a file or another kind; ``plan_removed``), agent-owned terminals
(``terminal_update`` with patch semantics, ``terminal_output_chunk``), and the ``changes``/``patch`` diff.
Malformed known shapes are not applied (the protocol log keeps them); unknown kinds are kept as sent.
Spec: ../shared/docs/acp-reference.md §12, schema ``v2/schema.unstable.json``.
"""

from __future__ import annotations

import base64
import binascii
import logging
from collections.abc import Callable
from typing import Any

from webclient.viewmodel.content import ContentBlock, DiffChanges, FileOperation, PlanItem
from webclient.viewmodel.entries import MessageRole
from webclient.viewmodel.plans import remove_plan, update_plan
from webclient.viewmodel.thread import Thread

log = logging.getLogger(__name__)

Fold = Callable[[Thread, dict[str, Any]], bool]
BlockReader = Callable[[Any], ContentBlock]

MAX_COLUMNS, MAX_ROWS = 1000, 500
"""The largest terminal size laid out (the protocol allows 65535 of each; the emulator's cost grows with them)."""


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def message_folds(read: BlockReader) -> dict[str, Fold]:
    """The folds of the message upserts and chunks, given the reader of content blocks (`acp.updates`')."""

    def chunk(role: MessageRole) -> Fold:
        def fold(thread: Thread, update: dict[str, Any]) -> bool:
            message_id = update.get("messageId")
            thread.append_chunk(role, read(update.get("content")), message_id if type(message_id) is str else None)
            return True

        return fold

    def upsert(role: MessageRole) -> Fold:
        def fold(thread: Thread, update: dict[str, Any]) -> bool:
            message_id, content = update.get("messageId"), update.get("content")
            if not isinstance(message_id, str) or not (content is None or isinstance(content, list)):
                return False
            blocks = [read(block) for block in content] if isinstance(content, list) else None
            thread.upsert_message(role, message_id, blocks, replace="content" in update)
            return True

        return fold

    return {
        "agent_message_chunk": chunk("agent-message"),
        "agent_thought_chunk": chunk("thought"),
        "user_message_chunk": chunk("user-message"),
        "agent_message": upsert("agent-message"),
        "agent_thought": upsert("thought"),
        "user_message": upsert("user-message"),
    }


# -- plans ---------------------------------------------------------------------------------------------------------


def plan_items(raw: Any) -> list[PlanItem]:
    if not isinstance(raw, list):
        return []
    return [
        PlanItem(
            content=str(item.get("content", "")),
            priority=str(item.get("priority", "medium")),
            status=str(item.get("status", "pending")),
        )
        for item in raw
        if isinstance(item, dict)
    ]


def _plan_update(thread: Thread, update: dict[str, Any]) -> bool:
    """``plan_update``: the plan its ``planId`` names is replaced (one without an id is v1's plan of the turn)."""
    plan = update.get("plan")
    if not isinstance(plan, dict) or not isinstance(form := plan.get("type"), str):
        return False
    plan_id = plan.get("planId")
    if not isinstance(plan_id, str):
        if form != "items":
            return False
        thread.set_plan(plan_items(plan.get("entries")))
        return True
    raw = {k: v for k, v in plan.items() if k not in ("type", "planId")}
    if form == "items" and isinstance(plan.get("entries"), list):
        update_plan(thread, plan_id, form, items=plan_items(plan["entries"]))
    elif form == "markdown" and isinstance(plan.get("content"), str):
        update_plan(thread, plan_id, form, markdown=plan["content"])
    elif form == "file" and isinstance(plan.get("uri"), str):
        update_plan(thread, plan_id, form, uri=plan["uri"])
    elif form in ("items", "markdown", "file"):
        return False  # a known kind, malformed
    else:
        update_plan(thread, plan_id, form, raw=raw)  # a kind this client does not know: shown as its JSON
    return True


def _plan_removed(thread: Thread, update: dict[str, Any]) -> bool:
    plan_id = update.get("planId")
    return isinstance(plan_id, str) and remove_plan(thread, plan_id) is not None


# -- terminals -----------------------------------------------------------------------------------------------------


def _bytes(data: Any) -> bytes | None:
    """Base64 output, decoded on its own (chunks may split UTF-8 and escape sequences: the screen joins them)."""
    if not isinstance(data, str):
        return None
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None


def _size(raw: Any) -> tuple[int, int] | None:
    if not isinstance(raw, dict):
        return None
    cols, rows = raw.get("cols"), raw.get("rows")
    if type(cols) is not int or type(rows) is not int or cols < 1 or rows < 1:
        return None
    return min(cols, MAX_COLUMNS), min(rows, MAX_ROWS)


def _terminal_update(thread: Thread, update: dict[str, Any]) -> bool:
    """``terminal_update``: an upsert of an agent-owned terminal; omitted fields are unchanged, ``null`` clears."""
    terminal_id = update.get("terminalId")
    if not isinstance(terminal_id, str):
        return False
    terminals = thread.terminals
    view = terminals.terminal(terminal_id)
    view.agent_owned = True
    if "command" in update or "cwd" in update:
        view.command = _str(update["command"]) if "command" in update else view.command
        view.cwd = _str(update["cwd"]) if "cwd" in update else view.cwd
        terminals.started(terminal_id, None, None)
    if "size" in update:
        terminals.resize(terminal_id, _size(update["size"]))
    if "output" in update:
        output = update["output"]
        data = _bytes(output.get("data")) if isinstance(output, dict) else b"" if output is None else None
        if data is not None:
            terminals.replace_output(terminal_id, data)
    if "capabilities" in update:
        capabilities = update["capabilities"]  # a malformed value is no control: never send what was not offered
        cancel = capabilities.get("cancel") if isinstance(capabilities, dict) else None
        terminals.set_cancel(terminal_id, isinstance(cancel, dict))
    if "exitStatus" in update:
        status = update["exitStatus"]
        if isinstance(status, dict):
            code = status.get("exitCode")
            terminals.exited(terminal_id, code if type(code) is int else None, _str(status.get("signal")))
        elif status is None:
            terminals.reopen(terminal_id)
    return True


def _terminal_output_chunk(thread: Thread, update: dict[str, Any]) -> bool:
    terminal_id, data = update.get("terminalId"), _bytes(update.get("data"))
    if not isinstance(terminal_id, str) or data is None:
        return False
    thread.terminals.terminal(terminal_id).agent_owned = True
    thread.terminals.output(terminal_id, data)
    return True


V2_FOLDS: dict[str, Fold] = {
    "plan_update": _plan_update,
    "plan_removed": _plan_removed,
    "terminal_update": _terminal_update,
    "terminal_output_chunk": _terminal_output_chunk,
}
"""The folds of the v2 draft's plans and terminals (the message folds need a content reader: `message_folds`)."""


# -- diffs ---------------------------------------------------------------------------------------------------------


def _operation(raw: Any) -> FileOperation | None:
    if not isinstance(raw, dict) or not isinstance(raw.get("operation"), str) or not isinstance(raw.get("path"), str):
        return None
    return FileOperation(
        operation=raw["operation"],
        path=raw["path"],
        old_path=_str(raw.get("oldPath")),
        file_type=_str(raw.get("fileType")),
        mime_type=_str(raw.get("mimeType")),
    )


def diff_changes(raw: dict[str, Any]) -> DiffChanges | None:
    """A v2 diff ``{changes, patch?}``, or None when it is not one (a malformed change among good ones is left out,
    and logged)."""
    changes = raw.get("changes")
    if not isinstance(changes, list):
        return None
    operations = tuple(op for op in map(_operation, changes) if op is not None)
    if changes and not operations:
        return None  # not this shape (an older draft's): kept as unknown content, with its JSON
    if len(operations) < len(changes):
        log.warning("a diff with %d malformed changes: they are not shown", len(changes) - len(operations))
    patch = raw.get("patch")
    fmt = _str(patch.get("format")) if isinstance(patch, dict) else None
    text = _str(patch.get("text")) if isinstance(patch, dict) else None
    return DiffChanges(operations, fmt if text is not None else None, text, raw)
