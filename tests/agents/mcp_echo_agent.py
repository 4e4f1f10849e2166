"""A raw-JSON agent that says which MCP servers it was given: ``session/new``'s or ``session/resume``'s
``mcpServers``, each as ``NAME (KIND)``, in answer to any prompt (never a value: what it got is in ``$RECORD_FILE``).

``$MCP_KINDS``: the kinds it advertises in ``mcpCapabilities`` besides stdio (``http``, ``sse``, comma-separated).
It offers ``session/resume`` (any id: it has no memory).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from raw_jsonrpc import send, serve, update  # noqa: E402

KINDS = {kind.strip() for kind in os.environ.get("MCP_KINDS", "").split(",") if kind.strip()}
given: list[dict[str, Any]] = []


def handle(message: dict[str, Any]) -> None:
    method, request_id, params = message.get("method"), message.get("id"), message.get("params") or {}
    if method == "initialize":
        capabilities = {
            "sessionCapabilities": {"resume": {}},
            "mcpCapabilities": {"http": "http" in KINDS, "sse": "sse" in KINDS},
        }
        send({"id": request_id, "result": {"protocolVersion": 1, "agentCapabilities": capabilities}})
    elif method in ("session/new", "session/resume"):
        given[:] = params.get("mcpServers") or []
        send({"id": request_id, "result": {"sessionId": "mcp-session"} if method == "session/new" else {}})
    elif method == "session/prompt":
        names = ", ".join(f"{server.get('name')} ({server.get('type', 'stdio')})" for server in given) or "none"
        body = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": f"MCP servers: {names}"}}
        update(params["sessionId"], body)
        send({"id": request_id, "result": {"stopReason": "end_turn"}})
    elif request_id is not None:
        send({"id": request_id, "error": {"code": -32601, "message": f"Method not found: {method}"}})


if __name__ == "__main__":
    serve(handle)
