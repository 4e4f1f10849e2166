"""A raw-JSON agent that sends the v2 draft's shapes on a v1 connection (the client's folds take both).

Stdlib only; everything received is appended to ``$RECORD_FILE``. The prompt's first word picks a script:

- ``tour`` — every shape the v2 draft shows: a ``user_message`` naming the prompt, messages by ``messageId`` (a chunk
  for an earlier message after another came between, an upsert replacing a message's chunks), a tool call created by
  ``tool_call_update`` with a ``name``, a custom kind and the ``paused`` status, a ``changes``/``patch`` diff (with a
  hostile path), an agent-owned terminal (``terminal_update`` with size and a snapshot, then ``terminal_output_chunk``
  splitting a UTF-8 character, referenced after its output came), plans by id (items with ``cancelled``, Markdown,
  a file, one removed), and a v2 permission request about a command (title, Markdown description, a ``_custom``
  option kind) whose answer is said in a message.
- ``stoppable`` — a tool call and a terminal that advertise ``capabilities.cancel``, a tool call that does not, and one
  that advertises it but refuses (``-32602``); ``tool_call/cancel`` is answered ``{}`` then the call is reported
  ``cancelled``; ``terminal/cancel`` is answered
  then the terminal exits (SIGTERM). The turn ends once both stopped (or on ``session/cancel``).

It answers ``initialize`` in the version asked (1 or 2). In v2 the prompt is answered at once and the turn ends with
an idle ``state_update``; per-entity cancel (a v2 method) is for a v2 client only.
"""

from __future__ import annotations

import base64
import threading
import time
from typing import Any

from raw_jsonrpc import ask, send, serve, take_response
from raw_jsonrpc import update as session_update

SESSION_ID = "v2shapes-1"
HOSTILE = '<img src=x onerror="alert(1)">'
_stopped = {"tool_call": threading.Event(), "terminal": threading.Event()}
_cancelled = threading.Event()
_version = {"v": 1}


def update(body: dict[str, Any]) -> None:
    session_update(SESSION_ID, body)
    time.sleep(0.01)


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


PATCH = (
    "diff --git a/src/app.py b/src/app.py\n"
    "--- a/src/app.py\n"
    "+++ b/src/app.py\n"
    "@@ -1,3 +1,3 @@\n"
    " import os\n"
    "-print('old <b>')\n"
    "+print('new <script>')\n"
    " done = True\n"
    "diff --git a/logo.png b/logo.png\n"
    "Binary files a/logo.png and b/logo.png differ\n"
)


def tour(request_id: Any, prompt: list[Any]) -> None:
    update({"sessionUpdate": "user_message", "messageId": "u1", "content": prompt})
    update({"sessionUpdate": "agent_message_chunk", "messageId": "m1", "content": text("First part, ")})
    update({"sessionUpdate": "agent_thought_chunk", "messageId": "th1", "content": text("Thinking " + HOSTILE)})
    update({"sessionUpdate": "agent_message_chunk", "messageId": "m1", "content": text("second part.")})
    update({"sessionUpdate": "agent_message_chunk", "messageId": "m2", "content": text("draft to be replaced")})
    update({"sessionUpdate": "agent_message", "messageId": "m2", "content": [text("Replaced **whole**.")]})
    update(
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "c1",
            "name": "edit_files",
            "title": "Edit " + HOSTILE,
            "kind": "_refactor",
            "status": "paused",
        }
    )
    changes = [
        {"operation": "modify", "path": "/work/src/app.py", "fileType": "text"},
        {"operation": "move", "path": "/work/new.py", "oldPath": "/work/old.py"},
        {"operation": "_touch", "path": "/work/" + HOSTILE},
        {"operation": "add", "path": "/work/logo.png", "fileType": "binary", "mimeType": "image/png"},
    ]
    diff = {"type": "diff", "changes": changes, "patch": {"format": "git_patch", "text": PATCH}}
    update({"sessionUpdate": "tool_call_content_chunk", "toolCallId": "c1", "content": diff})
    update({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "_reviewing"})
    update(
        {
            "sessionUpdate": "terminal_update",
            "terminalId": "term-1",
            "command": "make test " + HOSTILE,
            "cwd": "/work",
            "size": {"cols": 20, "rows": 5},
            "output": {"data": b64(b"snapshot line\n")},
        }
    )
    euro = "caf\u00e9 \u20ac done\n".encode()
    update({"sessionUpdate": "terminal_output_chunk", "terminalId": "term-1", "data": b64(euro[:6])})
    update({"sessionUpdate": "terminal_output_chunk", "terminalId": "term-1", "data": b64(euro[6:])})
    update(
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "c2",
            "title": "Run the tests",
            "kind": "execute",
            "status": "in_progress",
            "content": [{"type": "terminal", "terminalId": "term-1"}],
        }
    )
    update({"sessionUpdate": "terminal_update", "terminalId": "term-1", "exitStatus": {"exitCode": 0}})
    update({"sessionUpdate": "tool_call_update", "toolCallId": "c2", "status": "completed"})
    entries = [
        {"content": "Read the code", "priority": "high", "status": "completed"},
        {"content": "Skip the docs " + HOSTILE, "priority": "low", "status": "cancelled"},
    ]
    update({"sessionUpdate": "plan_update", "plan": {"type": "items", "planId": "p1", "entries": entries}})
    markdown = {"type": "markdown", "planId": "p2", "content": "1. Write **tests**\n2. " + HOSTILE}
    update({"sessionUpdate": "plan_update", "plan": markdown})
    update({"sessionUpdate": "plan_update", "plan": {"type": "file", "planId": "p3", "uri": "file:///work/PLAN.md"}})
    update({"sessionUpdate": "plan_removed", "planId": "p3"})
    answer = ask(
        "session/request_permission",
        {
            "sessionId": SESSION_ID,
            "title": "Run a command " + HOSTILE,
            "description": "It **deletes** the build folder. <script>alert(2)</script>",
            "subject": {"type": "command", "command": "rm -rf build " + HOSTILE, "cwd": "/work"},
            "options": [
                {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
                {"optionId": "later", "name": "Ask me later", "kind": "_defer"},
                {"optionId": "no", "name": "Deny", "kind": "reject_once"},
            ],
        },
    )
    outcome = answer.get("result", {}).get("outcome", {})
    update({"sessionUpdate": "agent_message_chunk", "messageId": "m3", "content": text(f"Answer: {outcome}")})
    end_turn(request_id, "end_turn")


def stoppable(request_id: Any) -> None:
    for event in _stopped.values():
        event.clear()
    cancel = {"cancel": {}}
    update(
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "long",
            "title": "Index the repository",
            "status": "in_progress",
            "capabilities": cancel,
        }
    )
    update(
        {"sessionUpdate": "tool_call_update", "toolCallId": "fixed", "title": "Not stoppable", "status": "in_progress"}
    )
    update(
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "refuses",
            "title": "Refuses to stop",
            "status": "in_progress",
            "capabilities": cancel,
        }
    )
    update({"sessionUpdate": "terminal_update", "terminalId": "srv", "command": "serve", "capabilities": cancel})
    update({"sessionUpdate": "terminal_output_chunk", "terminalId": "srv", "data": b64(b"listening\n")})
    update(
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "server",
            "title": "Start the server",
            "status": "in_progress",
            "content": [{"type": "terminal", "terminalId": "srv"}],
        }
    )
    while not _cancelled.is_set() and not all(event.is_set() for event in _stopped.values()):
        time.sleep(0.05)
    end_turn(request_id, "cancelled" if _cancelled.is_set() else "end_turn")


def stop_later(kind: str, params: dict[str, Any]) -> None:
    time.sleep(0.5)  # the page shows "Stopping…" meanwhile
    if kind == "tool_call":
        update(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": params["toolCallId"],
                "status": "cancelled",
                "capabilities": None,
            }
        )
    else:
        update(
            {
                "sessionUpdate": "terminal_update",
                "terminalId": params["terminalId"],
                "exitStatus": {"signal": "SIGTERM"},
                "capabilities": None,
            }
        )
    _stopped[kind].set()


def end_turn(request_id: Any, reason: str) -> None:
    """v1: the answer to ``session/prompt``; v2 (answered already): the idle ``state_update``."""
    if _version["v"] == 2:
        update({"sessionUpdate": "state_update", "state": "idle", "stopReason": reason})
    else:
        send({"id": request_id, "result": {"stopReason": reason}})


def run_prompt(request_id: Any, params: dict[str, Any]) -> None:
    prompt = params.get("prompt", [])
    if _version["v"] == 2:
        update({"sessionUpdate": "state_update", "state": "running"})
    words = " ".join(b.get("text", "") for b in prompt if isinstance(b, dict)).split()
    if words[:1] == ["stoppable"]:
        stoppable(request_id)
    else:
        tour(request_id, prompt)


def handle(message: dict[str, Any]) -> None:
    method, request_id, params = message.get("method"), message.get("id"), message.get("params") or {}
    if take_response(message):
        return
    if method == "initialize":
        _version["v"] = 2 if params.get("protocolVersion") == 2 else 1
        info = {"name": "v2shapes-agent", "version": "1.0"}
        if _version["v"] == 2:
            result = {"protocolVersion": 2, "info": info, "capabilities": {"session": {}}}
        else:
            result = {"protocolVersion": 1, "agentInfo": info}
        send({"id": request_id, "result": result})
    elif method == "session/new":
        send({"id": request_id, "result": {"sessionId": SESSION_ID}})
    elif method == "session/prompt":
        _cancelled.clear()
        if _version["v"] == 2:
            send({"id": request_id, "result": {}})  # taken in; the tour's user_message says where
        threading.Thread(target=run_prompt, args=(request_id, params), daemon=True).start()
    elif method == "session/cancel":
        _cancelled.set()
    elif method == "tool_call/cancel" and params.get("toolCallId") == "refuses":
        send({"id": request_id, "error": {"code": -32602, "message": "Not cancellable right now"}})
    elif method in ("tool_call/cancel", "terminal/cancel"):
        send({"id": request_id, "result": {}})
        kind = method.split("/")[0]
        threading.Thread(target=stop_later, args=(kind, params), daemon=True).start()
    elif request_id is not None:
        send({"id": request_id, "error": {"code": -32601, "message": f"Method not found: {method}"}})


if __name__ == "__main__":
    serve(handle)
