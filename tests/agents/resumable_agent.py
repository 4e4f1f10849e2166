"""A raw-JSON agent that remembers its sessions across processes, as real agents do on disk.

``RESUME_MODE`` says what it offers to take a session up again: ``resume`` (``sessionCapabilities.resume``),
``load`` (``loadSession``: it replays the conversation as ``session/update`` first), ``list`` (``resume`` and
``sessionCapabilities.list``), ``list-load`` (``load`` and ``list``), ``all`` (``resume``, ``list``, ``title``,
``close`` and ``delete``), or ``none``. Sessions live in
``$SESSIONS_FILE`` (JSON: id → cwd, title and the conversation). A prompt is answered "I remember N earlier
prompts" and an echo, so a test sees whether the context came back.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from raw_jsonrpc import send, serve, update  # noqa: E402

MODE = os.environ.get("RESUME_MODE", "none")
STORE = Path(os.environ["SESSIONS_FILE"])


def sessions() -> dict[str, Any]:
    return json.loads(STORE.read_text()) if STORE.exists() else {}


def save(all_sessions: dict[str, Any]) -> None:
    STORE.write_text(json.dumps(all_sessions))


def capabilities() -> dict[str, Any]:
    session: dict[str, Any] = {}
    if MODE in ("resume", "list", "all"):
        session["resume"] = {}
    if MODE in ("list", "list-load", "all"):
        session["list"] = {}
    if MODE == "all":
        session.update(title={}, close={}, delete={})
    return {"loadSession": MODE in ("load", "list-load"), "sessionCapabilities": session}


def say(session_id: str, kind: str, text: str) -> None:
    update(session_id, {"sessionUpdate": kind, "content": {"type": "text", "text": text}})


def text_of(prompt: list[dict[str, Any]]) -> str:
    return " ".join(block.get("text", "") for block in prompt if block.get("type") == "text")


def handle(message: dict[str, Any]) -> None:
    method, params, request_id = message.get("method"), message.get("params") or {}, message.get("id")
    if method == "initialize":
        info = {"name": "resumable", "title": f"Resumable ({MODE})", "version": "1"}
        result = {"protocolVersion": 1, "agentCapabilities": capabilities(), "agentInfo": info}
        send({"id": request_id, "result": result})
    elif method == "session/new":
        all_sessions = sessions()
        session_id = f"agent-session-{len(all_sessions) + 1}"
        all_sessions[session_id] = {"cwd": params.get("cwd"), "title": None, "turns": []}
        save(all_sessions)
        send({"id": request_id, "result": {"sessionId": session_id}})
    elif method in ("session/resume", "session/load"):
        known = sessions().get(params.get("sessionId"))
        if known is None:
            send({"id": request_id, "error": {"code": -32002, "message": "No such session"}})
            return
        if method == "session/load":
            for prompt, reply in known["turns"]:
                say(params["sessionId"], "user_message_chunk", prompt)
                say(params["sessionId"], "agent_message_chunk", reply)
        send({"id": request_id, "result": {}})
    elif method in ("session/set_title", "session/close", "session/delete"):
        all_sessions = sessions()
        if method == "session/set_title" and params.get("sessionId") in all_sessions:
            all_sessions[params["sessionId"]]["title"] = params.get("title")
        elif method == "session/delete":
            all_sessions.pop(params.get("sessionId"), None)
        save(all_sessions)
        send({"id": request_id, "result": {}})
    elif method == "session/list":
        listed = [
            {"sessionId": session_id, "cwd": known["cwd"], "title": known["title"] or f"Chat {session_id[-1]}"}
            for session_id, known in sessions().items()
        ]
        send({"id": request_id, "result": {"sessions": listed}})
    elif method == "session/prompt":
        all_sessions = sessions()
        known = all_sessions[params["sessionId"]]
        text = text_of(params.get("prompt", []))
        reply = f"I remember {len(known['turns'])} earlier prompts. You said: {text}"
        say(params["sessionId"], "agent_message_chunk", reply)
        known["turns"].append([text, reply])
        save(all_sessions)
        send({"id": request_id, "result": {"stopReason": "end_turn"}})
    elif request_id is not None:
        send({"id": request_id, "error": {"code": -32601, "message": f"Method not found: {method}"}})


if __name__ == "__main__":
    serve(handle)
