"""A hostile raw-JSON ACP agent: every string it controls is an XSS payload from ``tests/support/xss_payloads.py``.

It fills every surface an agent reaches: ``agentInfo``, auth methods (a terminal one too), its sign-in state
(``auth/status`` and claude's ``_auth/status_update``), the ``session/new`` result (modes and
config options), commands, the session title, usage, and on ``session/prompt`` messages, thoughts, user
messages, tool calls (titles, kinds, statuses, locations, every content block type, diffs, raw input and
output), a display-only terminal through tool-call ``_meta``, a real terminal, a file written through the
client, a plan, unknown update types, and a permission request whose options are payloads. The turn ends
with ``end_turn`` once the permission is answered. Everything received is appended to ``$RECORD_FILE``.

``$AUTH_REQUIRED=1`` makes ``session/new`` fail until ``authenticate`` succeeds; the first attempt fails
with a payload as its error message.

The prompt picks what to send: ``nul-paths`` and ``surrogate`` send one thing each that is known to break
rendering (kept apart so the corpus run can be checked whole); anything else runs the whole corpus.
The order of entries is fixed, so tests can pair page elements with payloads:
agent messages ``PAYLOADS`` (one each), then one message streaming the whole corpus in small chunks;
thoughts ``PAYLOADS``; user messages ``PAYLOADS``; tool calls ``tc-<i>`` (one per payload, title
``PAYLOADS[i]``); diffs ``diff-<i>``; the meta terminal ``term-meta``; the plan; the real terminal
``term-real``; the write ``write-1``; the permission ``perm-1``.
"""

from __future__ import annotations

import base64
import importlib.util
import os
import sys
import threading
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the tests also import this file by its path
from raw_jsonrpc import ask, send, serve, take_response  # noqa: E402

_spec = importlib.util.spec_from_file_location(
    "xss_payloads", Path(__file__).resolve().parent.parent / "support" / "xss_payloads.py"
)
assert _spec is not None and _spec.loader is not None
_payloads = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_payloads)
PAYLOADS: list[str] = _payloads.PAYLOADS
SINGLE_LINE: list[str] = _payloads.SINGLE_LINE
PRINTABLE: list[str] = _payloads.PRINTABLE

AUTH_REQUIRED = os.environ.get("AUTH_REQUIRED") == "1"

N = len(PAYLOADS)
PNG = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000001e221bc330000000049454e44ae426082"
    )
).decode()
TERMINAL_ID = '"><img src=x onerror=alert("terminal-id")>'
WRITTEN_NAME = '"><img src=x onerror=alert("file")>.html'
FIRST_OPTION_ID = '"><img src=x onerror=alert("option-id")>'
FIRST_OPTION_NAME = "<script>alert('option')</script>"
PERMISSION_TITLE = "<img src=x onerror=alert('permission')> Allow <b>rm -rf /</b>?"
FILE_LINES = [line for line in SINGLE_LINE if "\x00" not in line]
"""The written file's lines (a NUL would make it binary, which the client rightly does not show as text)."""
OPTION_COUNT = 40
DIFF_COUNT = 40

_authenticated = threading.Event()
_auth_attempts = 0
_cwd = "/"
_client_capabilities: dict[str, Any] = {}


def p(i: int) -> str:
    """The payload at ``i``, wrapping around the corpus."""
    return PAYLOADS[i % N]


def path_safe(i: int) -> str:
    """The payload at ``i`` for a path: NUL taken out (a NUL in a path breaks the page, see ``nul-paths``)."""
    return p(i).replace("\x00", "")


def update(session_id: str, body: dict[str, Any]) -> None:
    # Through this module's ``send``, which the in-process tests replace to capture what the agent says.
    send({"method": "session/update", "params": {"sessionId": session_id, "update": body}})


def chunk(session_id: str, kind: str, text: str, message_id: str | None = None) -> None:
    body: dict[str, Any] = {"sessionUpdate": kind, "content": {"type": "text", "text": text}}
    if message_id:
        body["messageId"] = message_id
    update(session_id, body)


# -- what session/new and the out-of-turn updates carry -------------------------------------------


def modes() -> dict[str, Any]:
    available = [{"id": p(i), "name": p(i + 1), "description": p(i + 2)} for i in range(0, 36, 3)]
    return {"currentModeId": available[0]["id"], "availableModes": available}


def config_options() -> list[dict[str, Any]]:
    flat = [{"value": p(i), "name": p(i + 1), "description": p(i + 2)} for i in range(40, 70, 3)]
    grouped: list[dict[str, Any]] = [
        {"group": p(i), "name": p(i + 1), "options": [{"value": p(i + 2), "name": p(i + 3), "description": p(i + 4)}]}
        for i in range(70, 100, 5)
    ]
    return [
        {
            "id": p(100),
            "name": p(101),
            "description": p(102),
            "category": "mode",
            "type": "select",
            "currentValue": flat[0]["value"],
            "options": flat,
        },
        {
            "id": p(103),
            "name": p(104),
            "description": p(105),
            "category": p(106),
            "type": "select",
            "currentValue": grouped[0]["options"][0]["value"],
            "options": grouped,
        },
        {
            "id": p(107),
            "name": p(108),
            "description": p(109),
            "category": "_custom",
            "type": "boolean",
            "currentValue": True,
        },
        {"id": p(110), "name": p(111), "category": "model", "type": p(112), "currentValue": p(113)},
    ]


def commands() -> list[dict[str, Any]]:
    return [{"name": p(i), "description": p(i + 1), "input": {"hint": p(i + 2)}} for i in range(120, 180, 3)]


def session_updates(session_id: str) -> None:
    """What an agent may send at any time: commands, title, usage, mode and config changes."""
    update(session_id, {"sessionUpdate": "available_commands_update", "availableCommands": commands()})
    update(session_id, {"sessionUpdate": "session_info_update", "title": p(0), "updatedAt": p(1)})
    update(
        session_id,
        {"sessionUpdate": "usage_update", "used": 1234, "size": 200000, "cost": {"amount": 0.5, "currency": p(2)}},
    )
    update(session_id, {"sessionUpdate": "current_mode_update", "currentModeId": modes()["availableModes"][1]["id"]})
    update(session_id, {"sessionUpdate": "config_option_update", "configOptions": config_options()})


# -- the prompt turn -----------------------------------------------------------------------------------


def content_blocks(i: int) -> list[dict[str, Any]]:
    """One of each content block type, every string in it a payload."""
    return [
        {"type": "text", "text": p(i)},
        {"type": "image", "mimeType": p(i + 1), "data": PNG, "uri": p(i + 2)},
        {"type": "image", "mimeType": "image/png", "data": p(i + 3)},
        {"type": "image", "mimeType": "image/svg+xml", "data": base64.b64encode(b"<svg onload=alert(1)>").decode()},
        {"type": "audio", "mimeType": p(i + 4), "data": "AAAA"},
        {
            "type": "resource_link",
            "name": p(i + 5),
            "title": p(i + 6),
            "uri": (
                "javascript:alert('resource-link')",
                "https://ok.example/" + p(i + 7),
                p(i + 7),
                "file:///tmp/xss/" + path_safe(i + 7),
                os.path.join("file://" + _cwd, path_safe(i + 7)),
            )[i % 5],
            "description": p(i + 8),
            "mimeType": p(i + 9),
        },
        {"type": "resource_link", "name": p(i + 10), "uri": "data:text/html,<script>alert('link')</script>"},
        {"type": "resource", "resource": {"uri": p(i + 11), "text": p(i + 12), "mimeType": p(i + 13)}},
        {"type": "resource", "resource": {"uri": p(i + 14), "blob": "AAAA", "mimeType": p(i + 15)}},
        {"type": p(i + 16), "text": p(i + 17)},
    ]


def plan_entries() -> list[dict[str, Any]]:
    """Every payload as a plan entry; some priorities and statuses are payloads too."""
    return [
        {
            "content": payload,
            "priority": ("high", "medium", "low", p(i + 1))[i % 4],
            "status": ("pending", "in_progress", "completed", p(i + 2))[i % 4],
        }
        for i, payload in enumerate(PAYLOADS)
    ]


def raw_object(i: int) -> dict[str, Any]:
    return {"command": p(i), "args": [p(i + 1), p(i + 2)], p(i + 3): {"nested": p(i + 4), "n": 1, "ok": None}}


def run_prompt(request_id: Any, params: dict[str, Any]) -> None:
    session_id = params["sessionId"]
    text = " ".join(block.get("text", "") for block in params.get("prompt", []) if isinstance(block, dict))
    script = text.split()[0] if text.split() else ""
    if script in BREAKERS:
        BREAKERS[script](session_id)
        chunk(session_id, "agent_message_chunk", f"after {script}", "m-after")
    else:
        run_corpus(session_id)
    send({"id": request_id, "result": {"stopReason": "end_turn"}})


def nul_paths(session_id: str) -> None:
    """NUL in paths: a location, a ``file:`` resource link (``%00``) and a diff path."""
    update(
        session_id,
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "nul-1",
            "title": "NUL in paths",
            "kind": "read",
            "status": "completed",
            "locations": [{"path": "/tmp/xss/\x00<img src=x onerror=alert('nul')>", "line": 1}],
            "content": [
                {"type": "content", "content": {"type": "resource_link", "name": "nul", "uri": "file:///tmp/xss/%00x"}},
                {"type": "diff", "path": os.path.join(_cwd, "a\x00b"), "oldText": None, "newText": "x\n"},
            ],
        },
    )


def lone_surrogate(session_id: str) -> None:
    """A lone surrogate (valid JSON ``\\ud800``, not encodable as UTF-8) in a message and a tool title."""
    chunk(session_id, "agent_message_chunk", "broken \ud800 <img src=x onerror=alert('surrogate')>", "m-surrogate")
    update(
        session_id,
        {"sessionUpdate": "tool_call", "toolCallId": "sur-1", "title": "\udcff title", "status": "completed"},
    )


BREAKERS = {"nul-paths": nul_paths, "surrogate": lone_surrogate}
"""Prompts that send one thing known to break rendering (kept out of the corpus run so the rest can be checked)."""


def run_corpus(session_id: str) -> None:
    # Messages: the whole corpus, one message each, then all of it again streamed in small pieces.
    for i, payload in enumerate(PAYLOADS):
        chunk(session_id, "agent_message_chunk", payload, f"m-{i}")
    whole = "\n\n".join(PAYLOADS)
    for start in range(0, len(whole), 7):
        chunk(session_id, "agent_message_chunk", whole[start : start + 7], "m-stream")
    for i, payload in enumerate(PAYLOADS):
        chunk(session_id, "agent_thought_chunk", payload, f"t-{i}")
    for i, payload in enumerate(PAYLOADS):
        chunk(session_id, "user_message_chunk", payload, f"u-{i}")
    # Tool calls: one per payload, with every content block type and raw input/output.
    for i, payload in enumerate(PAYLOADS):
        update(
            session_id,
            {
                "sessionUpdate": "tool_call",
                "toolCallId": f"tc-{i}",
                "title": payload,
                "kind": p(i + 1),
                "status": p(i + 2),
                "name": p(i + 3),
                "locations": [
                    {"path": f"/tmp/xss/{path_safe(i)}", "line": 1},
                    {"path": os.path.join(_cwd, path_safe(i + 4))},
                ],
                "content": [{"type": "content", "content": block} for block in content_blocks(i)],
                "rawInput": raw_object(i),
                "_meta": {p(i + 5): p(i + 6)},
            },
        )
        update(
            session_id, {"sessionUpdate": "tool_call_update", "toolCallId": f"tc-{i}", "rawOutput": raw_object(i + 7)}
        )
    # Diffs: payload paths and payload lines; then one diff with every one-line payload.
    for i in range(DIFF_COUNT):
        name = SINGLE_LINE[i].replace("\x00", "")
        path = f"/tmp/xss/{name}" if i % 2 else os.path.join(_cwd, name)
        old = "\n".join(SINGLE_LINE[i + 1 : i + 4]) + "\n"
        new = "\n".join(SINGLE_LINE[i + 2 : i + 6]) + "\n"
        diff = {"type": "diff", "path": path, "oldText": old if i % 5 else None, "newText": new}
        update(
            session_id,
            {
                "sessionUpdate": "tool_call",
                "toolCallId": f"diff-{i}",
                "title": f"Edit {SINGLE_LINE[i]}",
                "kind": "edit",
                "status": "completed",
                "content": [diff],
            },
        )
    everything = {
        "type": "diff",
        "path": os.path.join(_cwd, "every-payload.html"),
        "oldText": "\n".join(SINGLE_LINE[::2]) + "\n",
        "newText": "\n".join(SINGLE_LINE) + "\n",
    }
    update(
        session_id,
        {"sessionUpdate": "tool_call", "toolCallId": "diff-all", "title": "Edit every payload", "kind": "edit",
         "status": "completed", "content": [everything]},
    )  # fmt: skip
    # A display-only terminal (claude-agent-acp style): payloads and escape sequences as output.
    update(
        session_id,
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "term-meta",
            "title": p(40),
            "kind": "execute",
            "status": "in_progress",
            "_meta": {"terminal_info": {"terminal_id": TERMINAL_ID, "cwd": p(41)}},
        },
    )
    outputs = [line + "\r\n" for line in PRINTABLE] + [payload + "\r\n" for payload in PAYLOADS if "\x1b" in payload]
    for start in range(0, len(outputs), 10):
        update(
            session_id,
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "term-meta",
                "_meta": {
                    "terminal_output": {"terminal_id": TERMINAL_ID, "data": "".join(outputs[start : start + 10])}
                },
            },
        )
    update(
        session_id,
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "term-meta",
            "status": "failed",
            "_meta": {"terminal_exit": {"terminal_id": TERMINAL_ID, "exit_code": 1, "signal": None}},
        },
    )
    # The plan: payload entries, priorities and statuses.
    update(session_id, {"sessionUpdate": "plan", "entries": plan_entries()})
    # Updates the thread does not show (yet), or does not know.
    update(session_id, {"sessionUpdate": "_xss_unknown", "text": p(3), p(4): [p(5), {"x": p(6)}]})
    update(session_id, {"sessionUpdate": p(7), "title": p(8)})
    update(session_id, {"sessionUpdate": "notice", "severity": "warning", "title": p(9), "description": p(10)})
    # Advisories: notices (one of an unknown severity) and compactions with hostile ids, statuses, summaries, errors.
    update(session_id, {"sessionUpdate": "notice", "severity": p(13), "title": p(14), "description": p(15)})
    for i in (16, 17):
        cid, text = p(i), {"type": "text", "text": p(i + 2)}
        update(session_id, {"sessionUpdate": "compaction_update", "compactionId": cid, "status": "in_progress"})
        update(session_id, {"sessionUpdate": "compaction_summary_chunk", "compactionId": cid, "content": text})
    update(session_id, {"sessionUpdate": "compaction_update", "compactionId": p(16), "status": p(20), "error": p(21)})
    update(session_id, {"sessionUpdate": "compaction_update", "compactionId": p(17), "status": "completed"})
    update(
        session_id, {"sessionUpdate": "plan_update", "plan": {"type": "markdown", "planId": p(11), "content": p(12)}}
    )
    v2_shapes(session_id)
    session_updates(session_id)
    run_real_terminal(session_id)
    write_file(session_id)
    ask_permission(session_id)


def v2_shapes(session_id: str) -> None:
    """The v2 draft's shapes with payloads: a tool call's name and custom status, a ``changes``/``patch`` diff, an
    agent-owned terminal that can be stopped (its id goes into the Stop button's values), plans of a file and of an
    unknown kind."""
    changes = [
        {"operation": "move", "path": p(22), "oldPath": p(23), "fileType": p(24), "mimeType": p(25)},
        {"operation": p(26), "path": p(27)},
    ]
    patch = f"diff --git a/{p(28)} b/{p(28)}\n@@ -1 +1 @@\n-{p(29)}\n+{p(30)}\n"
    update(
        session_id,
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "v2-diff",
            "name": p(31),
            "status": p(32),
            "capabilities": {"cancel": {}},
            "content": [
                {"type": "diff", "changes": changes, "patch": {"format": "git_patch", "text": patch}},
                {"type": "diff", "changes": [], "patch": {"format": p(33), "text": p(34)}},
                {"type": "terminal", "terminalId": p(35)},
            ],
        },
    )
    data = base64.b64encode(p(36).encode("utf-8", "surrogatepass")).decode()
    update(
        session_id,
        {
            "sessionUpdate": "terminal_update",
            "terminalId": p(35),
            "command": p(37),
            "cwd": p(38),
            "output": {"data": data},
            "capabilities": {"cancel": {}},
        },
    )
    update(session_id, {"sessionUpdate": "plan_update", "plan": {"type": "file", "planId": p(39), "uri": p(40)}})
    update(session_id, {"sessionUpdate": "plan_update", "plan": {"type": p(41), "planId": p(42), p(43): p(44)}})


def run_real_terminal(session_id: str) -> None:
    """A command through ``terminal/create`` whose arguments (shown as its command line) are payloads."""
    if not _client_capabilities.get("terminal"):
        return
    code = "import sys\nfor a in sys.argv[1:]: print(a)\nprint('\\x1b]8;;javascript:alert(1)\\x07osc8\\x1b]8;;\\x07')"
    args = ["-c", code, *PRINTABLE[:30]]
    created = ask("terminal/create", {"sessionId": session_id, "command": sys.executable, "args": args})
    terminal_id = created.get("result", {}).get("terminalId")
    if not isinstance(terminal_id, str):
        return
    update(
        session_id,
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "term-real",
            "title": p(50),
            "kind": "execute",
            "status": "in_progress",
            "content": [{"type": "terminal", "terminalId": terminal_id}],
        },
    )
    ask("terminal/wait_for_exit", {"sessionId": session_id, "terminalId": terminal_id})
    ask("terminal/release", {"sessionId": session_id, "terminalId": terminal_id})
    update(session_id, {"sessionUpdate": "tool_call_update", "toolCallId": "term-real", "status": "completed"})


def write_file(session_id: str) -> None:
    """A file with a hostile name and hostile contents, written through the client (it shows in Changes)."""
    if not _client_capabilities.get("fs", {}).get("writeTextFile"):
        return
    path = os.path.join(_cwd, WRITTEN_NAME)
    ask("fs/write_text_file", {"sessionId": session_id, "path": path, "content": "\n".join(FILE_LINES) + "\n"})
    update(
        session_id,
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "write-1",
            "title": f"Wrote {WRITTEN_NAME}",
            "kind": "edit",
            "status": "completed",
            "locations": [{"path": path, "line": 3}],
        },
    )


def permission_options() -> list[dict[str, Any]]:
    """The options of the permission request: ids, names and kinds are payloads (the first has a known kind)."""
    return [{"optionId": FIRST_OPTION_ID, "name": FIRST_OPTION_NAME, "kind": "allow_once"}] + [
        {"optionId": p(i), "name": p(i + 60), "kind": ("allow_always", "reject_once", "reject_always", p(i + 1))[i % 4]}
        for i in range(1, OPTION_COUNT)
    ]


def ask_permission(session_id: str) -> None:
    update(
        session_id,
        {"sessionUpdate": "tool_call", "toolCallId": "perm-1", "title": PERMISSION_TITLE, "kind": "execute",
         "status": "pending"},
    )  # fmt: skip
    options = permission_options()
    answer = ask(
        "session/request_permission",
        {
            "sessionId": session_id,
            "toolCall": {
                "toolCallId": "perm-1",
                "title": PERMISSION_TITLE,
                "kind": p(20),
                "rawInput": raw_object(21),
                "content": [{"type": "content", "content": {"type": "text", "text": p(22)}}],
            },
            "options": options,
        },
    )
    outcome = answer.get("result", {}).get("outcome", {})
    chosen = outcome.get("optionId") if outcome.get("outcome") == "selected" else None
    update(
        session_id,
        {"sessionUpdate": "tool_call_update", "toolCallId": "perm-1", "status": "completed" if chosen else "failed"},
    )
    chunk(session_id, "agent_message_chunk", f"chosen: {chosen}", "m-chosen")


# -- the JSON-RPC loop --------------------------------------------------------------------------------


def handle(message: dict[str, Any]) -> None:
    global _cwd, _auth_attempts
    method = message.get("method")
    request_id = message.get("id")
    params = message.get("params") or {}
    if take_response(message):
        return
    if method == "initialize":
        _client_capabilities.update(params.get("clientCapabilities") or {})
        methods = [{"id": p(i), "name": p(i + 1), "description": p(i + 2)} for i in range(0, 12, 3)]
        methods.append(  # a terminal method: its command line (the agent's argv, these args and env) is shown
            {"id": p(12), "type": "terminal", "name": p(13), "args": [p(14)], "env": {"XSS_VAR": p(15)}}
        )
        send(
            {
                "id": request_id,
                "result": {
                    "protocolVersion": 1,
                    "agentInfo": {"name": p(0), "title": p(1), "version": p(2)},
                    "agentCapabilities": {"loadSession": False, "_meta": {p(3): p(4)}, "auth": {"status": {}}},
                    "authMethods": methods,
                },
            }
        )
    elif method == "auth/status":
        accounts = [{"label": p(16), "email": p(17), "organization": p(18)}, {"label": p(19), "name": p(20)}]
        send({"id": request_id, "result": {"state": p(21), "accounts": accounts}})
        claude = {"kind": "account", "label": p(22), "account": {"email": p(23)}}
        send({"method": "_auth/status_update", "params": {"authStatus": claude}})
    elif method == "authenticate":
        _auth_attempts += 1
        if _auth_attempts == 1:
            send({"id": request_id, "error": {"code": -32000, "message": p(5), "data": p(6)}})
        else:
            _authenticated.set()
            send({"id": request_id, "result": {}})
    elif method == "session/new":
        _cwd = params.get("cwd", "/")
        if AUTH_REQUIRED and not _authenticated.is_set():
            send({"id": request_id, "error": {"code": -32000, "message": p(7)}})
            return
        session_id = "xss-1"
        send(
            {"id": request_id, "result": {"sessionId": session_id, "modes": modes(), "configOptions": config_options()}}
        )
        session_updates(session_id)
    elif method == "session/prompt":
        threading.Thread(target=run_prompt, args=(request_id, params), daemon=True).start()
    elif method == "session/set_mode":
        send({"id": request_id, "result": {}})
        update(
            params.get("sessionId", ""), {"sessionUpdate": "current_mode_update", "currentModeId": params.get("modeId")}
        )
    elif method == "session/set_config_option":
        send({"id": request_id, "result": {"configOptions": config_options()}})
    elif method == "session/cancel":
        pass
    elif request_id is not None:
        send({"id": request_id, "error": {"code": -32601, "message": f"Method not found: {method}"}})


def main() -> None:
    # Payloads on stderr too: the protocol log page shows the agent's stderr.
    sys.stderr.write("\n".join(PAYLOADS[:20]) + "\n")
    sys.stderr.flush()
    serve(handle)


if __name__ == "__main__":
    main()
