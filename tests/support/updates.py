"""ACP ``session/update`` payloads that tests hand to scripted agents (`tests/agents`), built the one way."""

from __future__ import annotations

from typing import Any


def text(value: str) -> dict[str, Any]:
    """A tool call's content item holding ``value`` as text."""
    return {"type": "content", "content": {"type": "text", "text": value}}


def tool_update(call: str = "c1", **fields: Any) -> dict[str, Any]:
    """A ``tool_call_update`` of the call ``call`` with ``fields``."""
    return {"sessionUpdate": "tool_call_update", "toolCallId": call, **fields}
