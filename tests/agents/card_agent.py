"""A raw-JSON ACP agent that sends named steps of ``session/update`` bodies: the prompt names the step.

``$CARD_STEPS`` names a JSON file ``{"step": [update, ...], ...}``; the prompt ``step`` sends that step's updates in
order, then ends the turn (any other prompt: "ok"). A tool call left running takes the updates of later turns, so a
test drives a card one step (one turn, one frame or a few) at a time, and no step's data is in the prompt.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from raw_jsonrpc import send, serve, update  # noqa: E402


def handle(message: dict[str, Any]) -> None:
    method, params, request_id = message.get("method"), message.get("params") or {}, message.get("id")
    if method == "initialize":
        send({"id": request_id, "result": {"protocolVersion": 1, "agentCapabilities": {}}})
    elif method == "session/new":
        send({"id": request_id, "result": {"sessionId": "card-1"}})
    elif method == "session/prompt":
        name = " ".join(block.get("text", "") for block in params.get("prompt", []) if isinstance(block, dict)).strip()
        steps = json.loads(Path(os.environ["CARD_STEPS"]).read_text())
        ok = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "ok"}}
        for body in steps.get(name, [ok]):
            update(params["sessionId"], body)
        send({"id": request_id, "result": {"stopReason": "end_turn"}})
    elif request_id is not None and method is not None:
        send({"id": request_id, "error": {"code": -32601, "message": f"Method not found: {method}"}})


if __name__ == "__main__":
    serve(handle)
