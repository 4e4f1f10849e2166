"""A raw-JSON ACP agent that takes prompts into its running turn (``_session/steering``, advertised as
``_meta.steering.supported``); everything received is recorded.

A prompt ``work`` streams a chunk every 0.1 s until a steering prompt arrives (or 20 s pass), then says what it was
steered with and ends the turn; anything else: "ok".
"""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from raw_jsonrpc import send, serve, update  # noqa: E402

_steered: list[str] = []
_arrived = threading.Event()


def say(session_id: str, text: str) -> None:
    update(session_id, {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}})


def run_prompt(request_id: Any, params: dict[str, Any]) -> None:
    session_id = params["sessionId"]
    text = " ".join(block.get("text", "") for block in params.get("prompt", []) if isinstance(block, dict)).strip()
    if text == "work":
        _arrived.clear()
        deadline = time.monotonic() + 20
        while not _arrived.is_set() and time.monotonic() < deadline:
            say(session_id, "working. ")
            time.sleep(0.1)
        say(session_id, "steered with: " + json.dumps(_steered))
    else:
        say(session_id, "ok")
    send({"id": request_id, "result": {"stopReason": "end_turn"}})


def handle(message: dict[str, Any]) -> None:
    method, params, request_id = message.get("method"), message.get("params") or {}, message.get("id")
    if method == "initialize":
        result = {"protocolVersion": 1, "agentCapabilities": {}, "_meta": {"steering": {"supported": True}}}
        send({"id": request_id, "result": result})
    elif method == "session/new":
        send({"id": request_id, "result": {"sessionId": "steer-1"}})
    elif method == "session/prompt":
        threading.Thread(target=run_prompt, args=(request_id, params), daemon=True).start()
    elif method == "_session/steering":
        _steered.append(" ".join(b.get("text", "") for b in params.get("prompt", []) if isinstance(b, dict)))
        send({"id": request_id, "result": {}})
        _arrived.set()
    elif request_id is not None:
        send({"id": request_id, "error": {"code": -32601, "message": f"Method not found: {method}"}})


if __name__ == "__main__":
    serve(handle)
