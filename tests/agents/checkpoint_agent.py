"""A raw-JSON ACP agent for the checkpoint tests: it changes files in its folder itself, as an agent's own tools do.

Each line of a prompt is one step (paths relative to the cwd): ``write PATH TEXT...``, ``delete PATH``, ``slow
SECONDS`` (a turn that lasts, ended early by session/cancel). It answers "done in SESSION_ID: PROMPT" (the prompt's
first line, and the id of the agent's session it ran in). ``$FORK=1``: it offers ``session/fork``
(``sessionCapabilities.fork``) and answers it with a new id. Everything received is recorded (``$RECORD_FILE``).
"""

from __future__ import annotations

import itertools
import os
import threading
from pathlib import Path
from typing import Any

from raw_jsonrpc import send, serve, take_response, update

FORK = os.environ.get("FORK") == "1"
_cwd = Path("/")
_numbers = itertools.count(1)
_cancelled = threading.Event()


def run_prompt(request_id: Any, params: dict[str, Any]) -> None:
    session_id = params["sessionId"]
    text = "".join(block.get("text", "") for block in params.get("prompt", []) if block.get("type") == "text")
    _cancelled.clear()
    stop = "end_turn"
    for line in text.splitlines():
        words = line.split()
        if not words:
            continue
        if words[0] == "write" and len(words) >= 2:
            target = _cwd / words[1]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(" ".join(words[2:]) + "\n")
        elif words[0] == "delete" and len(words) == 2:
            (_cwd / words[1]).unlink(missing_ok=True)
        elif words[0] == "slow" and len(words) == 2:
            if _cancelled.wait(float(words[1])):
                stop = "cancelled"
    first = text.strip().splitlines()[-1] if text.strip() else ""
    update(
        session_id,
        {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": f"done in {session_id}: {first}"}},
    )
    send({"id": request_id, "result": {"stopReason": stop}})


def handle(message: dict[str, Any]) -> None:
    global _cwd
    method = message.get("method")
    request_id = message.get("id")
    params = message.get("params") or {}
    if take_response(message):
        return
    if method == "initialize":
        capabilities: dict[str, Any] = {"loadSession": False}
        if FORK:
            capabilities["sessionCapabilities"] = {"fork": {}}
        send(
            {
                "id": request_id,
                "result": {
                    "protocolVersion": 1,
                    "agentInfo": {"name": "checkpoint-agent", "title": "Checkpoint agent", "version": "1.0"},
                    "agentCapabilities": capabilities,
                    "authMethods": [],
                },
            }
        )
    elif method in ("session/new", "session/fork"):
        _cwd = Path(params.get("cwd", "/"))
        prefix = "fork" if method == "session/fork" else "s"
        send({"id": request_id, "result": {"sessionId": f"{prefix}-{os.getpid()}-{next(_numbers)}"}})
    elif method == "session/prompt":
        threading.Thread(target=run_prompt, args=(request_id, params), daemon=True).start()
    elif method == "session/cancel":
        _cancelled.set()
    elif request_id is not None:
        send({"id": request_id, "error": {"code": -32601, "message": f"Method not found: {method}"}})


if __name__ == "__main__":
    serve(handle)
