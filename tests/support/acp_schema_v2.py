"""The official ACP v2 schema (unstable: a superset), as the SDK 2.4.0 package ships it (installed with the
TypeScript test agents), and a check of every message of a v2 connection against it."""

from __future__ import annotations

import functools
import json
from typing import Any

import jsonschema  # type: ignore[import-untyped]  # no types-jsonschema in the dev extras

from tests.support.ts_agents import NODE_MODULES, node


@functools.cache
def schema() -> dict[str, Any]:
    node()  # fails, saying how to install them, when the test agents are not installed
    path = NODE_MODULES / "@agentclientprotocol" / "sdk" / "schema" / "v2" / "schema.unstable.json"
    return dict(json.loads(path.read_text()))


@functools.cache
def _validator(definition: str) -> Any:
    defs = schema()["$defs"]
    return jsonschema.validators.validator_for(schema())({"$defs": defs, "$ref": f"#/$defs/{definition}"})


def validate(instance: Any, definition: str) -> None:
    """Check ``instance`` against ``definition``; raises `jsonschema.ValidationError`."""
    _validator(definition).validate(instance)


def definition(method: str, kind: str) -> str:
    """The definition of ``method``'s ``Request``, ``Response`` or ``Notification``."""
    for name, value in schema()["$defs"].items():
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
