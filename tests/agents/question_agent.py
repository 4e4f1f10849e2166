"""A raw-JSON ACP agent that asks the user questions (``elicitation/create``); everything received is recorded.

Prompts: ``form`` asks a form (a required name, a secret token, an integer 1-10, a boolean, a choice) and says the
answer as JSON; ``link`` asks to open a link (URL mode), then sends ``elicitation/complete`` and says the answer;
``withdraw`` asks a form and withdraws it with ``$/cancel_request`` after ``$WITHDRAW_AFTER`` seconds (0.5), then
says what came back; anything else: "ok". It says what the client advertised as ``elicitation`` at ``initialize``.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from raw_jsonrpc import _ids, _responses, ask, send, serve, take_response, update  # noqa: E402

FORM = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Project <name>", "description": "What to call it", "maxLength": 40},
        "token": {"type": "string", "title": "API token", "format": "password"},
        "retries": {"type": "integer", "title": "Retries", "minimum": 1, "maximum": 10, "default": 3},
        "tests": {"type": "boolean", "title": "Run the tests", "default": True},
        "style": {"type": "string", "title": "Style", "enum": ["tabs", "spaces"], "enumNames": ["Tabs", "Spaces"]},
    },
    "required": ["name", "token"],
}


def say(session_id: str, text: str) -> None:
    update(session_id, {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}})


def withdraw(session_id: str) -> dict[str, Any]:
    """Ask a form and withdraw it with $/cancel_request before the user answers; what came back."""
    import queue

    request_id = next(_ids)
    box: queue.Queue[dict[str, Any]] = queue.Queue()
    _responses[request_id] = box
    params = {"sessionId": session_id, "mode": "form", "message": "Soon withdrawn", "requestedSchema": FORM}
    send({"id": request_id, "method": "elicitation/create", "params": params})
    time.sleep(float(os.environ.get("WITHDRAW_AFTER", "0.5")))
    send({"method": "$/cancel_request", "params": {"requestId": request_id}})
    return box.get()


def run_prompt(request_id: Any, params: dict[str, Any]) -> None:
    session_id = params["sessionId"]
    text = " ".join(block.get("text", "") for block in params.get("prompt", []) if isinstance(block, dict)).strip()
    if text == "form":
        answer = ask(
            "elicitation/create",
            {"sessionId": session_id, "mode": "form", "message": "Set up the <project>", "requestedSchema": FORM},
        )
        say(session_id, "answer: " + json.dumps(answer.get("result", answer.get("error")), sort_keys=True))
    elif text == "link":
        link = {
            "sessionId": session_id,
            "mode": "url",
            "message": "Sign in to the service",
            "url": "https://example.com/sign-in?state=1",
            "elicitationId": "el-1",
        }
        answer = ask("elicitation/create", link)
        time.sleep(1.5)  # the flow at the link takes a moment: the page waits for elicitation/complete meanwhile
        send({"method": "elicitation/complete", "params": {"elicitationId": "el-1"}})
        say(session_id, "answer: " + json.dumps(answer.get("result", answer.get("error")), sort_keys=True))
    elif text == "withdraw":
        answer = withdraw(session_id)
        say(session_id, "withdrawn: " + json.dumps(answer.get("error", answer.get("result")), sort_keys=True))
    else:
        say(session_id, "ok")
    send({"id": request_id, "result": {"stopReason": "end_turn"}})


def handle(message: dict[str, Any]) -> None:
    if take_response(message):
        return
    method, params, request_id = message.get("method"), message.get("params") or {}, message.get("id")
    if method == "initialize":
        advertised = json.dumps(params.get("clientCapabilities", {}).get("elicitation"), sort_keys=True)
        info = {"name": "questions", "title": f"Questions {advertised}", "version": "1"}
        capabilities = {"auth": {"logout": {}}}
        send({"id": request_id, "result": {"protocolVersion": 1, "agentCapabilities": capabilities, "agentInfo": info}})
    elif method == "session/new":
        send({"id": request_id, "result": {"sessionId": "questions-1"}})
    elif method == "logout":
        send({"id": request_id, "result": {}})
    elif method == "session/prompt":
        threading.Thread(target=run_prompt, args=(request_id, params), daemon=True).start()
    elif request_id is not None:
        send({"id": request_id, "error": {"code": -32601, "message": f"Method not found: {method}"}})


if __name__ == "__main__":
    serve(handle)
