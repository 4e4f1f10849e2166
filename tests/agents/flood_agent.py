"""Raw JSON-RPC test agent that floods: the prompt "flood" gets ``$FLOOD_COUNT`` ``tool_call``s at once ("flood N": N).

Stdlib only. Any other prompt is answered at once with one ``agent_message_chunk`` ("pong: " and the prompt's
text), so a test or a bench can time a round trip in a second session while the first one floods. Each
tool call is created finished (``completed``, with a small ``rawInput`` and one text content item), the
way an agent reports a burst of quick reads; the lines are written as fast as the pipe takes them. With
``$FLOOD_REPORT`` set, the number written so far goes to that file every 10,000 calls (for bench/isolation.py).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

_out = sys.stdout


def send(message: dict[str, Any]) -> None:
    _out.write(json.dumps({"jsonrpc": "2.0", **message}, separators=(",", ":")) + "\n")


def flood(session_id: str, count: int) -> None:
    report = os.environ.get("FLOOD_REPORT")
    for number in range(1, count + 1):
        if report and number % 10_000 == 0:
            progress(report, number, done=False)
        call = {
            "sessionUpdate": "tool_call",
            "toolCallId": f"flood-{number}",
            "title": f"Read file {number}",
            "kind": "read",
            "status": "completed",
            "rawInput": {"path": f"/tmp/flood/{number}.txt"},
            "content": [{"type": "content", "content": {"type": "text", "text": f"line {number}"}}],
        }
        send({"method": "session/update", "params": {"sessionId": session_id, "update": call}})
    if report:
        progress(report, count, done=True)


def progress(report: str, sent: int, done: bool) -> None:
    """How many tool calls are written (to the pipe: the server has read all but ~64 KiB of them)."""
    with open(report + ".part", "w") as out:
        json.dump({"sent": sent, "done": done}, out)
    os.replace(report + ".part", report)


def prompt_text(params: dict[str, Any]) -> str:
    return " ".join(block.get("text", "") for block in params.get("prompt", []) if isinstance(block, dict))


def main() -> None:
    count = int(os.environ.get("FLOOD_COUNT", "20000"))
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except json.JSONDecodeError:
            continue
        method, params = message.get("method"), message.get("params") or {}
        if method == "initialize":
            send({"id": message["id"], "result": {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []}})
        elif method == "session/new":
            send({"id": message["id"], "result": {"sessionId": "flood-session"}})
        elif method == "session/prompt":
            text = prompt_text(params)
            if text.startswith("flood"):
                words = text.split()
                flood(params.get("sessionId", ""), int(words[1]) if len(words) > 1 else count)
            else:
                chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": f"pong: {text}"}}
                send({"method": "session/update", "params": {"sessionId": params.get("sessionId"), "update": chunk}})
            send({"id": message["id"], "result": {"stopReason": "end_turn"}})
        elif "id" in message and method is not None:
            send({"id": message["id"], "error": {"code": -32601, "message": f"unknown method {method}"}})
        _out.flush()


if __name__ == "__main__":
    main()
