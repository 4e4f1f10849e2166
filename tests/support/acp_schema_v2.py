"""Every message of a v2 connection, both ways (the agent's too), checked against the official ACP v2 schema
(unstable: a superset; `tests.support.acp_schema` checks what the client sent in every test)."""

from __future__ import annotations

import json
from typing import Any

from tests.support import acp_schema


def validate(instance: Any, definition: str) -> None:
    """Check ``instance`` against ``definition`` of the v2 schema; raises `jsonschema.ValidationError`."""
    acp_schema.validate(instance, definition, version=2, unstable=True)


def definition(method: str, kind: str) -> str:
    """The definition of ``method``'s ``Request``, ``Response`` or ``Notification``."""
    for name, value in acp_schema.schema(2, unstable=True)["$defs"].items():
        if value.get("x-method") == method and name.endswith(kind):
            return name
    raise KeyError(f"no v2 {kind} for {method}")


def validate_traffic(lines: list[tuple[str, str]]) -> int:
    """Check every message of a v2 connection (``(direction, JSON line)``, in order) against the schema: requests,
    notifications and the answers to requests. Returns how many were checked."""
    asked: dict[tuple[str, Any], str] = {}
    checked = 0
    for direction, text in lines:
        message = json.loads(text)
        method = message.get("method")
        if method is not None:
            kind = "Request" if "id" in message else "Notification"
            validate(message.get("params", {}), definition(method, kind))
            if "id" in message:
                asked[direction, message["id"]] = method
        elif "result" in message:
            method = asked.pop(("out" if direction == "in" else "in", message["id"]))
            validate(message["result"], definition(method, "Response"))
        checked += 1
    return checked
