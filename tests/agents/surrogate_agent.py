"""A raw-JSON ACP agent that puts lone surrogates in every string field it controls.

JSON may escape a lone surrogate (``"\\udc80"``): it is valid JSON, but no UTF-8 can hold it, so any place that
encodes agent text (a URL, a response body, a log line) must cope. Every fuzzed string is ``s(field)``: the
field's name, a low and a high lone surrogate, and a bidi override, so a page shows which field it came from.
The names of the fields sent are appended to ``$FUZZ_FIELDS`` (one a line) so the test can count them.

On ``session/prompt`` it sends messages, a thought, tool calls (every content block type, locations, diffs,
terminals), a plan, commands, title, usage, mode and setting changes, an unknown update, creates a file whose
name is not UTF-8 in the workspace (Python reads it back as ``\\udc80``), and asks a permission with fuzzed
options; the question stays open. Everything it writes is ``json.dumps(..., ensure_ascii=True)``.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from raw_jsonrpc import send, serve, update  # noqa: E402

SURROGATES = "\udc80\ud800"
_fields_file = os.environ.get("FUZZ_FIELDS")
_cwd = "/"
_next_id = 1000


def s(field: str) -> str:
    """A fuzzed value for ``field``, noted as sent."""
    if _fields_file:
        with open(_fields_file, "a", encoding="utf-8") as out:
            out.write(field + "\n")
    return f"{field} {SURROGATES} \u202eend"


def path(field: str, name: str = "") -> str:
    """A path inside the workspace whose file name is fuzzed."""
    return os.path.join(_cwd, f"{name}{s(field)}.txt")


def lines(field: str, count: int, changed: int = -1) -> str:
    """``count`` fuzzed lines, the one at ``changed`` different."""
    value = s(field)
    return "".join(f"{value} {i}{' changed' if i == changed else ''}\n" for i in range(count))


def content_blocks(where: str) -> list[dict[str, Any]]:
    return [
        {"type": "text", "text": s(f"{where}.text")},
        {"type": "image", "mimeType": s(f"{where}.image.mimeType"), "data": "AAAA", "uri": s(f"{where}.image.uri")},
        {"type": "audio", "mimeType": s(f"{where}.audio.mimeType"), "data": "AAAA"},
        {
            "type": "resource_link",
            "name": s(f"{where}.resource_link.name"),
            "title": s(f"{where}.resource_link.title"),
            "uri": "file://" + path(f"{where}.resource_link.uri"),
            "description": s(f"{where}.resource_link.description"),
            "mimeType": s(f"{where}.resource_link.mimeType"),
        },
        {
            "type": "resource_link",
            "name": s(f"{where}.resource_link2.name"),
            "uri": "https://x.test/" + s(f"{where}.resource_link2.uri"),
        },
        {
            "type": "resource",
            "resource": {
                "uri": s(f"{where}.resource.uri"),
                "text": s(f"{where}.resource.text"),
                "mimeType": s(f"{where}.resource.mimeType"),
            },
        },
        {"type": "resource", "resource": {"uri": s(f"{where}.resource_blob.uri"), "blob": "AAAA"}},
        {"type": s(f"{where}.type"), "text": s(f"{where}.unknown.text")},
    ]


def session_updates(session_id: str) -> None:
    update(
        session_id,
        {
            "sessionUpdate": "available_commands_update",
            "availableCommands": [
                {
                    "name": s("command.name"),
                    "description": s("command.description"),
                    "input": {"hint": s("command.hint")},
                }
            ],
        },
    )
    update(
        session_id,
        {"sessionUpdate": "session_info_update", "title": s("session.title"), "updatedAt": s("session.updatedAt")},
    )
    update(
        session_id,
        {
            "sessionUpdate": "usage_update",
            "used": 10,
            "size": 100,
            "cost": {"amount": 1.5, "currency": s("usage.currency")},
        },
    )
    update(session_id, {"sessionUpdate": "current_mode_update", "currentModeId": s("current_mode_update.modeId")})
    update(session_id, {"sessionUpdate": "config_option_update", "configOptions": config_options()})


def modes() -> dict[str, Any]:
    first = {"id": s("mode.id"), "name": s("mode.name"), "description": s("mode.description")}
    return {"currentModeId": first["id"], "availableModes": [first, {"id": "plain", "name": "Plain"}]}


def config_options() -> list[dict[str, Any]]:
    return [
        {
            "id": s("config.id"),
            "name": s("config.name"),
            "description": s("config.description"),
            "category": s("config.category"),
            "type": "select",
            "currentValue": s("config.currentValue"),
            "options": [
                {
                    "value": s("config.option.value"),
                    "name": s("config.option.name"),
                    "description": s("config.option.description"),
                },
                {
                    "group": s("config.group.id"),
                    "name": s("config.group.name"),
                    "options": [{"value": "v", "name": s("config.group.option.name")}],
                },
            ],
        },
        {"id": "flag", "name": s("config.boolean.name"), "type": "boolean", "currentValue": True},
    ]


def run_prompt(request_id: Any, params: dict[str, Any]) -> None:
    global _next_id
    session_id = params["sessionId"]
    # A file changed behind the client's back, so that the Changes list and a change's diff have something to show.
    Path(_cwd, "plain.txt").write_text("plain\n")
    for kind in ("agent_message_chunk", "agent_thought_chunk", "user_message_chunk"):
        update(
            session_id,
            {
                "sessionUpdate": kind,
                "content": {"type": "text", "text": s(f"{kind}.text")},
                "messageId": s(f"{kind}.messageId"),
            },
        )
        update(session_id, {"sessionUpdate": kind, "content": content_blocks(f"{kind}.content")[3]})
    update(
        session_id,
        {
            "sessionUpdate": "tool_call",
            "toolCallId": s("tool_call.toolCallId"),
            "title": s("tool_call.title"),
            "kind": s("tool_call.kind"),
            "status": s("tool_call.status"),
            "locations": [
                {"path": path("tool_call.locations.path"), "line": 2},
                {"path": os.path.join(_cwd, "bad-\udc80-name.txt")},
                {"path": os.path.join(_cwd, "plain.txt"), "line": 1},
            ],
            "content": [{"type": "content", "content": block} for block in content_blocks("tool_call.content")]
            + [
                {
                    "type": "diff",
                    "path": path("diff.path"),
                    "oldText": s("diff.oldText") + "\n",
                    "newText": s("diff.newText") + "\n",
                },
                {"type": "diff", "path": path("diff.new.path"), "oldText": None, "newText": s("diff.new.newText")},
                {"type": "terminal", "terminalId": s("terminal.terminalId")},
                # Long enough for hidden unchanged lines (loaded on click) and for a body loaded when opened.
                {
                    "type": "diff",
                    "path": path("diff.gap.path"),
                    "oldText": lines("diff.gap.oldText", 300),
                    "newText": lines("diff.gap.newText", 300, 150),
                },
                {
                    "type": "diff",
                    "path": path("diff.large.path"),
                    "oldText": None,
                    "newText": lines("diff.large.newText", 600),
                },
            ],
            "rawInput": {s("rawInput.key"): s("rawInput.value")},
            "rawOutput": s("rawOutput"),
        },
    )
    update(
        session_id,
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": s("tool_call_update.toolCallId"),
            "title": s("tool_call_update.title"),
        },
    )
    terminal_id = s("meta.terminal_id")
    update(
        session_id,
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "term-meta",
            "title": "terminal",
            "kind": "execute",
            "status": "in_progress",
            "_meta": {"terminal_info": {"terminal_id": terminal_id, "cwd": s("meta.terminal_info.cwd")}},
        },
    )
    update(
        session_id,
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "term-meta",
            "_meta": {"terminal_output": {"terminal_id": terminal_id, "data": s("meta.terminal_output.data") + "\r\n"}},
        },
    )
    update(
        session_id,
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "term-meta",
            "status": "completed",
            "_meta": {
                "terminal_exit": {"terminal_id": terminal_id, "exit_code": 0, "signal": s("meta.terminal_exit.signal")}
            },
        },
    )
    update(
        session_id,
        {
            "sessionUpdate": "plan",
            "entries": [
                {"content": s("plan.content"), "priority": s("plan.priority"), "status": s("plan.status")},
                {"content": s("plan.content2"), "priority": "high", "status": "in_progress"},
            ],
        },
    )
    update(session_id, {"sessionUpdate": s("update.sessionUpdate"), s("update.key"): s("update.value")})
    session_updates(session_id)
    update(
        session_id,
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "perm-1",
            "title": s("permission.toolCall.title"),
            "status": "pending",
        },
    )
    _next_id += 1
    send(
        {
            "id": _next_id,
            "method": "session/request_permission",
            "params": {
                "sessionId": session_id,
                "toolCall": {
                    "toolCallId": "perm-1",
                    "title": s("permission.toolCall.title2"),
                    "kind": s("permission.toolCall.kind"),
                },
                "options": [
                    {"optionId": s("option.optionId"), "name": s("option.name"), "kind": "allow_once"},
                    {"optionId": "no", "name": s("option2.name"), "kind": s("option.kind")},
                ],
            },
        }
    )
    update(
        session_id,
        {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "fuzzed"}, "messageId": "last"},
    )


def handle(message: dict[str, Any]) -> None:
    global _cwd
    method = message.get("method")
    request_id = message.get("id")
    params = message.get("params") or {}
    if method == "initialize":
        send(
            {
                "id": request_id,
                "result": {
                    "protocolVersion": 1,
                    "agentInfo": {
                        "name": s("agentInfo.name"),
                        "title": s("agentInfo.title"),
                        "version": s("agentInfo.version"),
                    },
                    "agentCapabilities": {"loadSession": False, "promptCapabilities": {"embeddedContext": True}},
                    "authMethods": [
                        {
                            "id": s("authMethod.id"),
                            "name": s("authMethod.name"),
                            "description": s("authMethod.description"),
                        }
                    ],
                },
            }
        )
    elif method == "session/new":
        _cwd = params.get("cwd", "/")
        send({"id": request_id, "result": {"sessionId": "fuzz-1", "modes": modes(), "configOptions": config_options()}})
    elif method == "session/prompt":
        threading.Thread(target=run_prompt, args=(request_id, params), daemon=True).start()
    elif method is not None and request_id is not None:
        send({"id": request_id, "error": {"code": -32601, "message": s("error.message"), "data": s("error.data")}})


if __name__ == "__main__":
    serve(handle)
