"""A raw-JSON ACP agent that misbehaves the ways real agents do, one fault per ``$FAULT`` (comma-separated).

Everything received (every line, JSON or not) is appended to ``$RECORD_FILE``. Faults:

- ``no-initialize``: never answers ``initialize``. ``wrong-id``: answers it with an id we never sent.
- ``no-session``: never answers ``session/new``.
- ``auth``: ``session/new`` fails with -32000 and a reason in ``data`` until ``authenticate`` succeeds; the
  methods are gemini-like (``oauth`` never answers, ``api-key`` fails with data, ``ok`` succeeds) plus an
  ``env_var``, a ``terminal`` and an unknown type.
- ``garbage``: non-JSON lines before and between messages, and answers glued behind terminal escape codes.
- ``models``: ``session/new`` offers ``models`` (gemini's shape) and modes; with ``model-option`` also a
  config option of category ``model``. ``settings``: a config option ``effort``.
- ``$FAULT_ONCE_FILE``: the faults apply to the first process only (a marker file), so Retry can succeed.

Prompts (any fault): ``fail`` (error with ``data.message``), ``tool`` (tool call ``call_1`` — the same id
every turn — asking permission, then done or failed by the answer), ``plan`` (an unfinished plan, then
dots until cancelled; the next prompt after a cancel ends at once with nothing, as claude-agent-acp does),
``huge MiB`` (a line of that many MiB written in chunks, then "after huge"), ``say TEXT``.
``session/set_mode`` fails with ``data.details``, ``session/set_config_option`` with a string ``data``;
``session/set_model`` fails for ``refuse-me``.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Any

from raw_jsonrpc import ask, send, serve, take_response
from raw_jsonrpc import update as session_update

FAULTS = set(filter(None, os.environ.get("FAULT", "").split(",")))
if os.environ.get("FAULT_ONCE_FILE"):
    # The fault only in the first process started: a Retry then meets a healthy agent.
    if os.path.exists(os.environ["FAULT_ONCE_FILE"]):
        FAULTS = set()
    else:
        open(os.environ["FAULT_ONCE_FILE"], "w").close()  # noqa: SIM115 - a marker, closed at once
SESSION = "faulty-1"
_cancelled = threading.Event()
_state = {"authenticated": False, "after_cancel": False, "model": "gemini-2.5-pro"}

AUTH_METHODS = [
    {"id": "oauth", "name": "Log in with Google", "description": "Opens **a browser** to sign in."},
    {
        "id": "api-key",
        "name": "Use Gemini API key",
        "description": "Requires setting the `GEMINI_API_KEY` environment variable",
    },
    {"id": "ok", "name": "Use a test token", "description": "Always works"},
    {
        "id": "env",
        "type": "env_var",
        "name": "Key in the environment",
        "vars": [{"name": "FAULTY_SET_VAR", "label": "Faulty key"}, {"name": "FAULTY_UNSET_VAR", "optional": True}],
    },
    {"id": "term", "type": "terminal", "name": "Log in in a terminal", "args": ["--login"], "env": {"MODE": "a b"}},
    {"id": "qr", "type": "qr-code", "name": "Scan a code", "description": "Scan the code on your phone"},
]
MODELS = {
    "availableModels": [
        {"modelId": "gemini-2.5-pro", "name": "Gemini 2.5 Pro", "description": "Most capable"},
        {"modelId": "gemini-2.5-flash", "name": "Gemini 2.5 Flash"},
        {"modelId": "refuse-me", "name": "Refused model"},
    ],
    "currentModelId": "gemini-2.5-pro",
}


def junk(text: str) -> None:
    """A line that is not JSON on stdout, as an agent's logging or a terminal prompt would be."""
    if "garbage" in FAULTS:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()


def answer(message: dict[str, Any]) -> None:
    """An answer; with ``garbage``, glued behind the escape codes that leave a full-screen terminal view."""
    if "garbage" in FAULTS:
        sys.stdout.write("\x1b[?1049l")
    send(message)


def say(text: str) -> None:
    session_update(SESSION, {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}})


def run_prompt(request_id: Any, prompt: list[dict[str, Any]]) -> None:
    text = " ".join(b.get("text", "") for b in prompt if b.get("type") == "text").strip()
    words = text.split()
    if _state["after_cancel"]:
        _state["after_cancel"] = False
        send({"id": request_id, "result": {"stopReason": "end_turn"}})  # nothing said: claude after a Stop
        return
    stop = "end_turn"
    junk("[faulty] thinking about it")
    if words[:1] == ["fail"]:
        answer(
            {
                "id": request_id,
                "error": {
                    "code": -32603,
                    "message": "Internal error",
                    "data": {"message": "OPENAI_API_KEY is not set"},
                },
            }
        )
        return
    if words[:1] == ["tool"]:
        session_update(
            SESSION,
            {
                "sessionUpdate": "tool_call",
                "toolCallId": "call_1",
                "title": f"Edit ({text})",
                "kind": "edit",
                "status": "pending",
            },
        )
        options = [
            {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
            {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
        ]
        response = ask(
            "session/request_permission",
            {"sessionId": SESSION, "toolCall": {"toolCallId": "call_1"}, "options": options},
        )
        outcome = (response.get("result") or {}).get("outcome") or {}
        status = "completed" if outcome.get("optionId") == "allow" else "failed"
        session_update(SESSION, {"sessionUpdate": "tool_call_update", "toolCallId": "call_1", "status": status})
        say(f"tool {status}")
    elif words[:1] == ["plan"]:
        entries = [
            {"content": "Read the code", "priority": "high", "status": "completed"},
            {"content": "Change the code", "priority": "high", "status": "in_progress"},
        ]
        session_update(SESSION, {"sessionUpdate": "plan", "entries": entries})
        _cancelled.clear()
        while not _cancelled.wait(0.1):
            say(".")
        stop = "cancelled"
        _state["after_cancel"] = True
    elif words[:1] == ["huge"]:
        chunk = "x" * (1 << 20)
        for _ in range(int(words[1])):
            sys.stdout.write(chunk)  # one line, no newline until the end
        sys.stdout.write("\n")
        sys.stdout.flush()
        say("after huge")
    elif words[:1] == ["say"]:
        junk("[faulty] between two messages")
        say(text[4:])
    else:
        say(f"got: {text}")
    answer({"id": request_id, "result": {"stopReason": stop}})


def handle(message: dict[str, Any]) -> None:
    method, request_id, params = message.get("method"), message.get("id"), message.get("params") or {}
    if take_response(message):
        return
    if method == "initialize":
        if "no-initialize" in FAULTS:
            return
        junk("Loaded cached credentials.")
        junk("\x1b[32mfaulty agent 1.0 starting\x1b[0m")
        auth = "auth" in FAULTS
        answer(
            {
                "id": request_id + 1000 if "wrong-id" in FAULTS else request_id,
                "result": {
                    "protocolVersion": 1,
                    "agentInfo": {"name": "faulty-agent", "title": "Faulty agent", "version": "1.0"},
                    "agentCapabilities": {"loadSession": False},
                    "authMethods": AUTH_METHODS if auth else [],
                },
            }
        )
    elif method == "authenticate":
        method_id = params.get("methodId")
        if method_id == "oauth":
            return  # a browser opened on the server; nobody will ever come back
        if method_id == "api-key":
            error = {"code": -32603, "message": "Internal error", "data": {"message": "GEMINI_API_KEY is not set"}}
            send({"id": request_id, "error": error})
            return
        _state["authenticated"] = True
        send({"id": request_id, "result": {}})
    elif method == "session/new":
        if "no-session" in FAULTS:
            return
        if "auth" in FAULTS and not _state["authenticated"]:
            reason = "Gemini API key is missing or not configured."
            send({"id": request_id, "error": {"code": -32000, "message": "Authentication required", "data": reason}})
            return
        result: dict[str, Any] = {"sessionId": SESSION}
        if "models" in FAULTS:
            result["models"] = MODELS
            result["modes"] = {
                "currentModeId": "default",
                "availableModes": [{"id": "default", "name": "Default"}, {"id": "yolo", "name": "YOLO"}],
            }
        if "model-option" in FAULTS:
            model = {"id": "model", "name": "Model (option)", "category": "model", "type": "select"}
            options = [{"value": "m1", "name": "M1"}, {"value": "m2", "name": "M2"}]
            result["configOptions"] = [{**model, "currentValue": "m1", "options": options}]
        elif "settings" in FAULTS:
            options = [{"value": "low", "name": "Low"}, {"value": "high", "name": "High"}]
            result["configOptions"] = [
                {"id": "effort", "name": "Effort", "type": "select", "currentValue": "low", "options": options}
            ]
        answer({"id": request_id, "result": result})
    elif method == "session/prompt":
        threading.Thread(target=run_prompt, args=(request_id, params.get("prompt") or []), daemon=True).start()
    elif method == "session/cancel":
        _cancelled.set()
    elif method == "session/set_model":
        if params.get("modelId") == "refuse-me":
            error = {
                "code": -32602,
                "message": "Invalid params",
                "data": {"details": "Model refuse-me is not available"},
            }
            send({"id": request_id, "error": error})
        else:
            _state["model"] = params.get("modelId")
            send({"id": request_id, "result": {}})
    elif method == "session/set_mode":
        details = "Cannot enable privileged approval modes in an untrusted folder."
        send({"id": request_id, "error": {"code": -32603, "message": "Internal error", "data": {"details": details}}})
    elif method == "session/set_config_option":
        send(
            {
                "id": request_id,
                "error": {"code": -32603, "message": "Internal error", "data": "effort is locked by policy"},
            }
        )
    elif request_id is not None:
        send({"id": request_id, "error": {"code": -32601, "message": f"Method not found: {method}"}})


if __name__ == "__main__":
    sys.stderr.write(f"faulty agent: starting with faults {sorted(FAULTS)}\n")
    sys.stderr.flush()
    serve(handle)
