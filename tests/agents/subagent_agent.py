"""A raw-JSON ACP agent that runs subagents (child sessions); everything received is recorded (``$RECORD_FILE``).

Prompts:
* ``rfd``: a Task tool call ``task-1`` launches the child ``child-1`` ("Explorer <b>", cancellable) in ACP's unstable
  ``subagents`` form: ``subagent_update`` on the session, the prompt as a ``session_message`` with the Task's id,
  then on the child's own session a message, a tool call ``child-read`` and a grandchild ``grand-1`` announced on
  the child with a message of its own; then the child ends (idle, end_turn), its reply ``task-1:reply`` comes and the
  Task completes.
* ``wait``: the same, but the child keeps working until a ``session/cancel`` names it: then it is idle, cancelled,
  and the turn ends with the Task failed. A ``session/cancel`` of the session itself ends the turn cancelled.
* ``ask``: launches the child as ``rfd`` does, then the child asks a permission (``child-edit``) and a form question
  (``elicitation/create`` with its ``sessionId``); the child says the outcomes, then ends as in ``rfd``.
* ``classic``: claude's form: the child's updates on the session, marked ``_meta.claudeCode.parentToolUseId``.
* ``stranger``: an update of a session nobody announced ("ghost words"), then "visible words".
It says what the client advertised as ``subagents`` at ``initialize`` (in its title).
"""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from raw_jsonrpc import ask, send, serve, take_response, update  # noqa: E402

SESSION = "sub-main"
CHILD = "child-1"
GRANDCHILD = "grand-1"
cancelled: dict[str, threading.Event] = {SESSION: threading.Event(), CHILD: threading.Event()}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def say(session_id: str, words: str, **extra: Any) -> None:
    update(session_id, {"sessionUpdate": "agent_message_chunk", "content": text(words), **extra})


def launch() -> None:
    update(SESSION, {"sessionUpdate": "tool_call", "toolCallId": "task-1", "title": "Task: explore", "kind": "think",
                     "status": "in_progress"})  # fmt: skip
    update(SESSION, {"sessionUpdate": "subagent_update", "sessionId": CHILD, "title": "Explorer <b>",
                     "description": "Reads <i>the</i> code", "capabilities": {"cancel": {}},
                     "state": {"state": "running"}})  # fmt: skip
    message = {"sessionUpdate": "session_message", "messageId": "task-1", "senderSessionId": SESSION,
               "recipientSessionId": CHILD, "content": [text("Find the bug")]}  # fmt: skip
    update(SESSION, {**message, "recipientMessageId": "task-1"})
    update(CHILD, {**message, "senderMessageId": "task-1"})
    say(CHILD, "Child reading <notes>")
    update(CHILD, {"sessionUpdate": "tool_call", "toolCallId": "child-read", "title": "Read notes.txt", "kind": "read",
                   "status": "completed"})  # fmt: skip
    update(CHILD, {"sessionUpdate": "subagent_update", "sessionId": GRANDCHILD, "title": "Helper",
                   "state": {"state": "running"}})  # fmt: skip
    say(GRANDCHILD, "Grandchild words")


def finish(reason: str) -> None:
    state = {"state": "idle", "stopReason": reason}
    update(CHILD, {"sessionUpdate": "subagent_update", "sessionId": GRANDCHILD, "state": state})
    update(SESSION, {"sessionUpdate": "subagent_update", "sessionId": CHILD, "state": state})
    if reason == "end_turn":
        update(SESSION, {"sessionUpdate": "session_message", "messageId": "task-1:reply", "senderSessionId": CHILD,
                         "recipientSessionId": SESSION, "content": [text("The bug is in ")]})  # fmt: skip
        update(SESSION, {"sessionUpdate": "session_message_chunk", "messageId": "task-1:reply",
                         "content": text("line 7")})  # fmt: skip
    status = "completed" if reason == "end_turn" else "failed"
    update(SESSION, {"sessionUpdate": "tool_call_update", "toolCallId": "task-1", "status": status})


def run_prompt(request_id: Any, params: dict[str, Any]) -> None:
    words = " ".join(block.get("text", "") for block in params.get("prompt", []) if isinstance(block, dict)).strip()
    stop = "end_turn"
    if words in ("rfd", "wait"):
        for event in cancelled.values():
            event.clear()
        launch()
        if words == "wait":
            while not (cancelled[CHILD].wait(0.05) or cancelled[SESSION].is_set()):
                pass
            stop = "cancelled" if cancelled[SESSION].is_set() else "end_turn"
            finish("cancelled")
            say(SESSION, "The child was stopped")
        else:
            finish("end_turn")
            say(SESSION, "Parent done")
    elif words == "ask":
        launch()
        options = [{"optionId": "allow", "name": "Allow", "kind": "allow_once"},
                   {"optionId": "reject", "name": "Reject", "kind": "reject_once"}]  # fmt: skip
        call = {"toolCallId": "child-edit", "title": "Edit notes.txt", "kind": "edit", "status": "pending"}
        answer = ask("session/request_permission", {"sessionId": CHILD, "toolCall": call, "options": options})
        say(CHILD, "permission: " + json.dumps(answer.get("result"), sort_keys=True))
        form = {"type": "object", "properties": {"name": {"type": "string", "title": "Name"}}, "required": ["name"]}
        question = {"sessionId": CHILD, "mode": "form", "message": "Child asks", "requestedSchema": form}
        answer = ask("elicitation/create", question)
        say(CHILD, "question: " + json.dumps(answer.get("result"), sort_keys=True))
        finish("end_turn")
    elif words == "classic":
        update(SESSION, {"sessionUpdate": "tool_call", "toolCallId": "toolu_1", "title": "Task: classic",
                         "status": "in_progress"})  # fmt: skip
        meta = {"claudeCode": {"parentToolUseId": "toolu_1"}}
        say(SESSION, "Classic child words", _meta=meta)
        update(SESSION, {"sessionUpdate": "tool_call", "toolCallId": "toolu_2", "title": "Classic grep",
                         "status": "completed", "_meta": meta})  # fmt: skip
        update(SESSION, {"sessionUpdate": "tool_call_update", "toolCallId": "toolu_1", "status": "completed"})
        say(SESSION, "Classic parent words")
    elif words == "stranger":
        say("nobody-announced-this", "ghost words")
        say(SESSION, "visible words")
    else:
        say(SESSION, "ok")
    send({"id": request_id, "result": {"stopReason": stop}})


def handle(message: dict[str, Any]) -> None:
    if take_response(message):
        return
    method, params, request_id = message.get("method"), message.get("params") or {}, message.get("id")
    if method == "initialize":
        advertised = json.dumps(params.get("clientCapabilities", {}).get("subagents"), sort_keys=True)
        info = {"name": "subagents", "title": f"Subagents {advertised}", "version": "1"}
        send({"id": request_id, "result": {"protocolVersion": 1, "agentCapabilities": {}, "agentInfo": info}})
    elif method == "session/new":
        send({"id": request_id, "result": {"sessionId": SESSION}})
    elif method == "session/cancel":
        event = cancelled.get(params.get("sessionId"))
        if event is not None:
            event.set()
    elif method == "session/prompt":
        threading.Thread(target=run_prompt, args=(request_id, params), daemon=True).start()
    elif request_id is not None:
        send({"id": request_id, "error": {"code": -32601, "message": f"Method not found: {method}"}})


if __name__ == "__main__":
    serve(handle)
