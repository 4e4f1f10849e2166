"""What the raw-JSON test agents share: writing JSON-RPC lines, and reading stdin while recording it.

Stdlib only. Everything the agent receives is appended to the JSONL file named by ``$RECORD_FILE`` (if
set), so tests assert exactly what the client sent.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Callable
from typing import Any

_out_lock = threading.Lock()


def send(message: dict[str, Any]) -> None:
    """One JSON-RPC message on stdout (``jsonrpc`` added); safe from several threads."""
    line = json.dumps({"jsonrpc": "2.0", **message}, separators=(",", ":"))
    with _out_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def update(session_id: str, body: dict[str, Any]) -> None:
    send({"method": "session/update", "params": {"sessionId": session_id, "update": body}})


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
