"""A raw-JSON test agent for process and terminal tests: stubborn on request, terminals by script.

Prompts (first word):

- ``cwd-race N DIR`` — N times, one after the other: ``terminal/create`` of ``pwd -P`` in DIR, wait, read the
  output, release. Says a JSON list with, per attempt, the directory printed, or ``"refused"``.
- ``hold MARK`` — starts ``sh -c '... & sleep 600; : MARK'`` through ``terminal/create`` and never ends the
  turn; in the background the shell runs a Python sleeper that leaves the process group (``setpgid``), with
  MARK in its command line.

Environment:

- ``STUBBORN=1`` — ignores SIGTERM (so does its child) and stdin EOF, and starts a child of its own,
  ``sh -c 'sleep 600; : MARK'`` where MARK is the first command-line argument.
- ``ROLE_FILE=PATH`` — the first agent process to create PATH is an ordinary one; every later one needs
  sign-in (``session/new`` fails with -32000) and never answers ``authenticate``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from typing import Any

from raw_jsonrpc import ask, send, serve, take_response, update

MARK = sys.argv[1] if len(sys.argv) > 1 else "no-mark"
STUBBORN = os.environ.get("STUBBORN") == "1"


def _first_of_role() -> bool:
    path = os.environ.get("ROLE_FILE")
    if not path:
        return True
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False
    return True


NEEDS_SIGN_IN = not _first_of_role()


def say(session_id: str, text: str) -> None:
    update(session_id, {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}})


def run_prompt(request_id: Any, params: dict[str, Any]) -> None:
    session_id = params["sessionId"]
    text = " ".join(block.get("text", "") for block in params.get("prompt", []) if isinstance(block, dict))
    words = text.split()
    script = words[0] if words else ""
    if script == "cwd-race":
        count, where = int(words[1]), words[2]
        seen = []
        for _ in range(count):
            created = ask("terminal/create", {"sessionId": session_id, "command": "pwd", "args": ["-P"], "cwd": where})
            if "result" not in created:
                seen.append("refused")
                continue
            terminal = {"sessionId": session_id, "terminalId": created["result"]["terminalId"]}
            ask("terminal/wait_for_exit", terminal)
            seen.append(ask("terminal/output", terminal)["result"]["output"].strip())
            ask("terminal/release", terminal)
        say(session_id, json.dumps(seen))
    elif script == "hold":
        stray = f"{sys.executable} -c 'import os, time; os.setpgid(0, 0); time.sleep(600)' {words[1]}"
        command = f"{stray} & sleep 600; : {words[1]}"
        ask("terminal/create", {"sessionId": session_id, "command": "sh", "args": ["-c", command]})
        say(session_id, "holding")
        return  # the turn never ends
    else:
        say(session_id, "ok")
    send({"id": request_id, "result": {"stopReason": "end_turn"}})


def handle(message: dict[str, Any]) -> None:
    method = message.get("method")
    request_id = message.get("id")
    params = message.get("params") or {}
    if take_response(message):
        return
    if method == "initialize":
        methods = [{"id": "never", "name": "Never answers", "description": "Sign-in that never ends"}]
        result = {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": methods if NEEDS_SIGN_IN else []}
        send({"id": request_id, "result": result})
    elif method == "authenticate":
        pass  # never answered
    elif method == "session/new":
        if NEEDS_SIGN_IN:
            send({"id": request_id, "error": {"code": -32000, "message": "Authentication required"}})
        else:
            send({"id": request_id, "result": {"sessionId": "terminal-1"}})
    elif method == "session/prompt":
        threading.Thread(target=run_prompt, args=(request_id, params), daemon=True).start()
    elif request_id is not None:
        send({"id": request_id, "error": {"code": -32601, "message": f"Method not found: {method}"}})


if __name__ == "__main__":
    if STUBBORN:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # inherited by the child across exec
        subprocess.Popen(["sh", "-c", f"sleep 600; : {MARK}"], stdin=subprocess.DEVNULL)
    serve(handle)
    while STUBBORN:  # stdin closed: stay anyway
        time.sleep(60)
