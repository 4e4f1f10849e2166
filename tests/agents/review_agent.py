"""A raw-JSON ACP agent for the review tests: it edits a file in two places, and says back every prompt it gets.

Scripts (first word of the person's words, the last text block of the prompt):

- ``edit NAME`` — reads NAME (relative to the cwd) through ``fs/read_text_file``, appends `` (edited)`` to its
  second and its second-to-last line, and writes it back through ``fs/write_text_file``: two hunks, far apart.
- anything else — one message: ``got:`` and each text block of the prompt, joined with `` | ``.

Everything received is recorded to ``$RECORD_FILE`` (as the scripted agent does).
"""

from __future__ import annotations

import os
import threading
from typing import Any

from raw_jsonrpc import ask, send, serve, take_response, update

_cwd = "/"


def say(session_id: str, text: str) -> None:
    update(session_id, {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}})


def run_prompt(request_id: Any, params: dict[str, Any]) -> None:
    session_id = params["sessionId"]
    texts = [block.get("text", "") for block in params.get("prompt", []) if block.get("type") == "text"]
    words = texts[-1].split() if texts else []
    if words[:1] == ["edit"] and len(words) > 1:
        path = os.path.join(_cwd, words[1])
        content = ask("fs/read_text_file", {"sessionId": session_id, "path": path})["result"]["content"]
        lines = content.split("\n")
        for index in (1, len(lines) - 3):
            lines[index] += " (edited)"
        ask("fs/write_text_file", {"sessionId": session_id, "path": path, "content": "\n".join(lines)})
        say(session_id, "edited")
    else:
        say(session_id, "got: " + " | ".join(texts))
    send({"id": request_id, "result": {"stopReason": "end_turn"}})


def handle(message: dict[str, Any]) -> None:
    global _cwd
    method, request_id, params = message.get("method"), message.get("id"), message.get("params") or {}
    if take_response(message):
        return
    if method == "initialize":
        info = {"name": "review-agent", "title": "Review agent", "version": "1.0"}
        capabilities = {"loadSession": False}
        result = {"protocolVersion": 1, "agentInfo": info, "agentCapabilities": capabilities, "authMethods": []}
        send({"id": request_id, "result": result})
    elif method == "session/new":
        _cwd = params.get("cwd", "/")
        send({"id": request_id, "result": {"sessionId": "review-1"}})
    elif method == "session/prompt":
        threading.Thread(target=run_prompt, args=(request_id, params), daemon=True).start()
    elif method == "session/cancel":
        pass
    elif request_id is not None:
        send({"id": request_id, "error": {"code": -32601, "message": f"Method not found: {method}"}})


if __name__ == "__main__":
    serve(handle)
