"""What ``GET /meta`` says: the demo server's one agent, its exposed server tools, options and capabilities."""

from __future__ import annotations

from typing import Any

VERSION = 3

SEARCH = "web_search"
"""A server tool meant to be trusted: run inline, its ``tool_result`` in the same stream."""
DEPLOY = "deploy_preview"
"""A server tool meant to need the person's permission (``tool_permission``)."""
NOTES = "internal_notes"
"""A tool the server runs but never exposes in ``/meta``: clients see its call and result only."""

SERVER_TOOLS: list[dict[str, Any]] = [
    {
        "name": SEARCH,
        "title": "Web search",
        "description": "Search the (pretend) web and return the top three results.",
        "parameters": {
            "type": "object",
            "properties": {"query": {"type": "string", "description": "What to search for"}},
            "required": ["query"],
        },
    },
    {
        "name": DEPLOY,
        "title": "Deploy a preview",
        "description": "Deploy a branch to a (pretend) preview environment.",
        "parameters": {
            "type": "object",
            "properties": {"branch": {"type": "string"}},
            "required": ["branch"],
        },
    },
]

OPTIONS: list[dict[str, Any]] = [
    {"name": "tone", "title": "Tone", "type": "select", "options": ["friendly", "terse"], "default": "friendly"},
    {"name": "language", "title": "Answer language", "type": "text", "default": "English"},
    {"name": "apiKey", "title": "Search API key", "type": "secret", "default": ""},
]

AGENT: dict[str, Any] = {
    "name": "demo",
    "title": "AAP demo agent",
    "version": "0.1.0",
    "description": (
        "A remote agent that streams, thinks and calls tools: yours, its own trusted and untrusted ones. "
        "Say “tools” and it calls them in parallel; “change” writes a note and runs a command (you are asked first); "
        "“fail” shows an error stop."
    ),
    "tools": SERVER_TOOLS,
    "options": OPTIONS,
    "capabilities": {
        "history": {"compacted": {}, "full": {}},
        "stream": {"delta": {}, "message": {}, "none": {}},
        "application": {"tools": {}},
        "image": {"http": {}, "data": {}},
    },
}


def meta() -> dict[str, Any]:
    return {"version": VERSION, "agents": [AGENT]}


def defaults() -> dict[str, str]:
    return {option["name"]: option["default"] for option in OPTIONS}
