"""Terminals the agent runs itself, shown read-only: the v2 draft's ``terminal_update`` (an upsert with patch
semantics) and ``terminal_output_chunk``, and the display-only terminals claude-agent-acp and codex-acp report in a
tool call's ``_meta``. The client's own terminals (``terminal/*`` requests) are `webclient.acp.client_methods`'.
Spec: ../shared/docs/acp-reference.md §12, schema ``v2/schema.unstable.json``.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from webclient.acp.wire_values import string
from webclient.viewmodel.content import TerminalRef
from webclient.viewmodel.thread import Thread

MAX_COLUMNS, MAX_ROWS = 1000, 500
"""The largest terminal size laid out (the protocol allows 65535 of each; the emulator's cost grows with them)."""


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


def terminal_update(thread: Thread, update: dict[str, Any]) -> bool:
    """``terminal_update``: an upsert of an agent-owned terminal; omitted fields are unchanged, ``null`` clears."""
    terminal_id = update.get("terminalId")
    if not isinstance(terminal_id, str):
        return False
    terminals = thread.terminals
    view = terminals.terminal(terminal_id)
    view.agent_owned = True
    if "command" in update or "cwd" in update:
        view.command = string(update["command"]) if "command" in update else view.command
        view.cwd = string(update["cwd"]) if "cwd" in update else view.cwd
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
            terminals.exited(terminal_id, code if type(code) is int else None, string(status.get("signal")))
        elif status is None:
            terminals.reopen(terminal_id)
    return True


def terminal_output_chunk(thread: Thread, update: dict[str, Any]) -> bool:
    terminal_id, data = update.get("terminalId"), _bytes(update.get("data"))
    if not isinstance(terminal_id, str) or data is None:
        return False
    thread.terminals.terminal(terminal_id).agent_owned = True
    thread.terminals.output(terminal_id, data)
    return True


def apply_terminal_meta(thread: Thread, tool_call_id: str, meta: dict[str, Any]) -> None:
    """Display-only terminals: the agent runs the command itself and reports it in the tool call's ``_meta``.

    The convention of claude-agent-acp and codex-acp (advertised by ``clientCapabilities._meta.terminal_output``):
    ``terminal_info {terminal_id, cwd?}`` creates it, ``terminal_output`` / ``terminal_output_delta``
    ``{terminal_id, data}`` append output, ``terminal_exit {terminal_id, exit_code, signal}`` ends it.
    """
    info = meta.get("terminal_info")
    if isinstance(info, dict) and isinstance(info.get("terminal_id"), str):
        terminal_id = info["terminal_id"]
        thread.terminals.started(terminal_id, None, string(info.get("cwd")))
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
            string(end.get("signal")),
        )
