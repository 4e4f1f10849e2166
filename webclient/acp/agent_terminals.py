"""Terminals the agent runs itself, shown read-only: the v2 draft's ``terminal_update`` (an upsert with patch
semantics) and ``terminal_output_chunk``, and the display-only terminals claude-agent-acp and codex-acp report in a
tool call's ``_meta``. The client's own terminals (``terminal/*`` requests) are `webclient.acp.client_methods`'.
Spec: ../shared/docs/acp-reference.md §12, schema ``v2/schema.unstable.json``.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any, cast

from webclient.acp import wire_v2
from webclient.acp.wire_values import integer, mapping, string
from webclient.viewmodel.content import TerminalRef
from webclient.viewmodel.thread import Thread

MAX_COLUMNS, MAX_ROWS = 1000, 500
"""The largest terminal size laid out (the protocol allows 65535 of each; the emulator's cost grows with them)."""


def _bytes(data: object) -> bytes | None:
    """Base64 output, decoded on its own (chunks may split UTF-8 and escape sequences: the screen joins them)."""
    if not isinstance(data, str):
        return None
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None


def _size(raw: object) -> tuple[int, int] | None:
    if not isinstance(raw, dict):
        return None
    size = cast(wire_v2.V2TerminalSize, raw)
    cols, rows = size.get("cols"), size.get("rows")
    if type(cols) is not int or type(rows) is not int or cols < 1 or rows < 1:
        return None
    return min(cols, MAX_COLUMNS), min(rows, MAX_ROWS)


def terminal_update(thread: Thread, update: wire_v2.V2TerminalUpdate) -> bool:
    """``terminal_update``: an upsert of an agent-owned terminal; omitted fields are unchanged, ``null`` clears."""
    terminal_id = string(update.get("terminalId"))
    if terminal_id is None:
        return False
    terminals = thread.terminals
    view = terminals.terminal(terminal_id)
    view.agent_owned = True
    if "command" in update or "cwd" in update:
        view.command = string(update.get("command")) if "command" in update else view.command
        view.cwd = string(update.get("cwd")) if "cwd" in update else view.cwd
        terminals.started(terminal_id, None, None)
    if "size" in update:
        terminals.resize(terminal_id, _size(update.get("size")))
    if "output" in update:
        output = update.get("output")
        data = b"" if output is None else _bytes(mapping(output).get("data"))
        if data is not None:
            terminals.replace_output(terminal_id, data)
    if "capabilities" in update:
        # A malformed value is no control: never send what was not offered.
        cancel = mapping(update.get("capabilities")).get("cancel")
        terminals.set_cancel(terminal_id, isinstance(cancel, dict))
    if "exitStatus" in update:
        status = update.get("exitStatus")
        if isinstance(status, dict):
            code = status.get("exitCode")
            terminals.exited(terminal_id, code if type(code) is int else None, string(status.get("signal")))
        elif status is None:
            terminals.reopen(terminal_id)
    return True


def terminal_output_chunk(thread: Thread, update: wire_v2.V2TerminalOutputChunk) -> bool:
    terminal_id, data = string(update.get("terminalId")), _bytes(update.get("data"))
    if terminal_id is None or data is None:
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
    info = mapping(meta.get("terminal_info"))
    terminal_id = string(info.get("terminal_id"))
    if terminal_id is not None:
        thread.terminals.started(terminal_id, None, string(info.get("cwd")))
        call = thread.tool_call(tool_call_id)
        shown = call is not None and any(
            isinstance(item, TerminalRef) and item.terminal_id == terminal_id for item in call.content
        )
        if not shown:
            raw = {"type": "terminal", "terminalId": terminal_id}
            thread.append_tool_content(tool_call_id, TerminalRef(terminal_id=terminal_id, raw=raw), raw)
    for key in ("terminal_output", "terminal_output_delta"):
        output = mapping(meta.get(key))
        output_id, data = string(output.get("terminal_id")), string(output.get("data"))
        if output_id is not None and data is not None:
            thread.terminals.output(output_id, data.encode("utf-8", "surrogatepass"))
    end = mapping(meta.get("terminal_exit"))
    ended = string(end.get("terminal_id"))
    if ended is not None:
        thread.terminals.exited(ended, integer(end.get("exit_code")), string(end.get("signal")))
