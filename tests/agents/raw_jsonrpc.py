"""What the raw-JSON test agents share: writing JSON-RPC lines, and reading stdin while recording it.

Stdlib only. Everything the agent receives is appended to the JSONL file named by ``$RECORD_FILE`` (if
set), so tests assert exactly what the client sent.
"""

from __future__ import annotations

import itertools
import json
import os
import queue
import sys
import threading
from collections.abc import Callable
from typing import Any

_out_lock = threading.Lock()
_ids = itertools.count(1001)  # next() on a count is atomic under the GIL: safe from several threads
_responses: dict[int, queue.Queue[dict[str, Any]]] = {}


def send(message: dict[str, Any]) -> None:
    """One JSON-RPC message on stdout (``jsonrpc`` added); safe from several threads."""
    line = json.dumps({"jsonrpc": "2.0", **message}, separators=(",", ":"))
    with _out_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def update(session_id: str, body: dict[str, Any]) -> None:
    send({"method": "session/update", "params": {"sessionId": session_id, "update": body}})


def ask(method: str, params: dict[str, Any]) -> dict[str, Any]:
    """Send a request to the client and wait for its response (the whole message: ``result`` or ``error``).
    Call it from a thread other than the one reading stdin, which hands the response over (`take_response`)."""
    request_id = next(_ids)
    box: queue.Queue[dict[str, Any]] = queue.Queue()
    _responses[request_id] = box
    send({"id": request_id, "method": method, "params": params})
    return box.get()


def take_response(message: dict[str, Any]) -> bool:
    """Hand a response to the `ask` waiting for it; False when ``message`` is not one."""
    box = _responses.pop(message.get("id"), None) if "method" not in message else None
    if box is None:
        return False
    box.put(message)
    return True


def serve(handle: Callable[[dict[str, Any]], None]) -> None:
    """Record and hand every JSON object read from stdin to ``handle``, until stdin closes."""
    record_path = os.environ.get("RECORD_FILE")
    record = open(record_path, "a", buffering=1) if record_path else None  # noqa: SIM115 - lives as long as the process
    for line in sys.stdin:
        if record is not None:
            record.write(line if line.endswith("\n") else line + "\n")
        try:
            message = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(message, dict):
            handle(message)
