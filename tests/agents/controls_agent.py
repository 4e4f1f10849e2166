"""A raw-JSON ACP agent for the page's controls: modes, config options, slash commands, title, usage.

Everything received is appended to ``$RECORD_FILE``. ``session/new`` answers with modes and (unless
``$MODES_ONLY=1``) config options: a grouped ``model`` select, a flat ``effort`` select and a boolean
``verbose`` (only if the client advertised boolean options), then sends its commands. Setting the
``effort`` to ``max`` fails with an error, so tests can see a refused change. Prompts:

- ``wait S`` — streams a dot every 0.1 s for S seconds (or until cancelled), then says "waited".
- ``usage`` — sends a title and a usage update.
- ``code`` — answers with a Python code block.
- ``mode`` — switches itself to ``plan`` with ``current_mode_update`` (the prose spelling ``modeId``).
- anything else — says "got: <the prompt as JSON>", so tests see what arrived.
"""

from __future__ import annotations

import json
import os
import threading
import time
from typing import Any

from raw_jsonrpc import send, serve
from raw_jsonrpc import update as session_update

MODES_ONLY = os.environ.get("MODES_ONLY") == "1"

_cancelled = threading.Event()
_state: dict[str, Any] = {"mode": "ask", "model": "sage", "effort": "medium", "verbose": False, "booleans": False}

MODES = [
    {"id": "ask", "name": "Ask", "description": "Ask before every change"},
    {"id": "code", "name": "Code", "description": "Change files without asking"},
    {"id": "plan", "name": "Plan", "description": "Plan only"},
]
COMMANDS = [
    {"name": "review", "description": "Review the current changes", "input": {"hint": "what to focus on"}},
    {"name": "test", "description": "Run the test suite"},
    {"name": "explain", "description": "Explain a file", "input": {"hint": "path"}},
]


def update(body: dict[str, Any]) -> None:
    session_update("controls-1", body)


def say(text: str) -> None:
    update({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}})


def config_options() -> list[dict[str, Any]]:
    options: list[dict[str, Any]] = [
        {
            "id": "model",
            "name": "Model",
            "category": "model",
            "type": "select",
            "currentValue": _state["model"],
            "options": [
                {"group": "fast", "name": "Fast", "options": [{"value": "swift", "name": "Swift"}]},
                {
                    "group": "thorough",
                    "name": "Thorough",
                    "options": [{"value": "sage", "name": "Sage"}, {"value": "sage-max", "name": "Sage Max"}],
                },
            ],
        },
        {
            "id": "effort",
            "name": "Effort",
            "category": "thought_level",
            "type": "select",
            "currentValue": _state["effort"],
            "options": [{"value": v, "name": v.capitalize()} for v in ("low", "medium", "high", "max")],
        },
    ]
    if _state["booleans"]:
        options.append({"id": "verbose", "name": "Verbose", "type": "boolean", "currentValue": _state["verbose"]})
    return options


def run_prompt(request_id: Any, prompt: list[dict[str, Any]]) -> None:
    _cancelled.clear()
    text = next((b.get("text", "") for b in prompt if b.get("type") == "text"), "")
    words = text.split()
    stop = "end_turn"
    if words[:1] == ["wait"]:
        deadline = time.monotonic() + float(words[1])
        while time.monotonic() < deadline:
            if _cancelled.is_set():
                stop = "cancelled"
                break
            say(".")
            time.sleep(0.1)
        else:
            say(f"waited for {text}")
    elif words[:1] == ["usage"]:
        update({"sessionUpdate": "session_info_update", "title": "Controls under test"})
        update(
            {
                "sessionUpdate": "usage_update",
                "used": 53_000,
                "size": 200_000,
                "cost": {"amount": 0.42, "currency": "USD"},
            }
        )
        say("usage sent")
    elif words[:1] == ["code"]:
        say("Here:\n\n```python\nprint('hi')\n```\n")
    elif words[:1] == ["mode"]:
        _state["mode"] = "plan"
        update({"sessionUpdate": "current_mode_update", "modeId": "plan"})
        say("switched to plan")
    else:
        say("got: " + json.dumps(prompt))
    send({"id": request_id, "result": {"stopReason": stop}})


def handle(message: dict[str, Any]) -> None:
    method, request_id, params = message.get("method"), message.get("id"), message.get("params") or {}
    if method == "initialize":
        caps = params.get("clientCapabilities") or {}
        _state["booleans"] = "boolean" in ((caps.get("session") or {}).get("configOptions") or {})
        result = {
            "protocolVersion": 1,
            "agentInfo": {"name": "controls-agent", "version": "1.0"},
            "agentCapabilities": {"promptCapabilities": {"image": True, "embeddedContext": True}},
        }
        send({"id": request_id, "result": result})
    elif method == "session/new":
        result: dict[str, Any] = {
            "sessionId": "controls-1",
            "modes": {"currentModeId": _state["mode"], "availableModes": MODES},
        }
        if not MODES_ONLY:
            result["configOptions"] = config_options()
        send({"id": request_id, "result": result})
        time.sleep(0.05)
        update({"sessionUpdate": "available_commands_update", "availableCommands": COMMANDS})
    elif method == "session/set_mode":
        _state["mode"] = params.get("modeId")
        send({"id": request_id, "result": {}})
        update({"sessionUpdate": "current_mode_update", "currentModeId": _state["mode"]})
    elif method == "session/set_config_option":
        config_id, value = params.get("configId"), params.get("value")
        if config_id == "effort" and value == "max":
            send({"id": request_id, "error": {"code": -32602, "message": "max effort is not available on this plan"}})
            return
        if config_id not in _state:
            send({"id": request_id, "error": {"code": -32602, "message": f"unknown option {config_id}"}})
            return
        _state[config_id] = value
        send({"id": request_id, "result": {"configOptions": config_options()}})
    elif method == "session/prompt":
        threading.Thread(target=run_prompt, args=(request_id, params.get("prompt") or []), daemon=True).start()
    elif method == "session/cancel":
        _cancelled.set()
    elif request_id is not None:
        send({"id": request_id, "error": {"code": -32601, "message": f"Method not found: {method}"}})


if __name__ == "__main__":
    serve(handle)
