"""A hostile raw-JSON agent for the sandbox tests: on a prompt it tries to reach past its workspace, from its own
process and from a terminal command it starts, and writes what happened into its own workspace.

Prompt: ``attack TARGETS_JSON`` (see ``sandbox_attacks.py``). It runs the attempts itself, then has the client run
``python sandbox_attacks.py TARGETS_JSON`` through ``terminal/create`` in its workspace and reads that command's
report, and writes ``{"agent": REPORT, "terminal": REPORT}`` to ``sandbox-report.json`` in its working folder
(which it must be able to do); then it says ``reported`` and ends the turn. ``connect TARGETS_JSON`` does only
what it may do (its folders; the connections, when it has the network) and reports the same way. Stdlib only: it
runs in a sandbox that sees its own folder, the Python that runs it, and the system's folders.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path
from typing import Any

from raw_jsonrpc import ask, send, serve, take_response, update
from sandbox_attacks import report

ATTACKS = str(Path(__file__).with_name("sandbox_attacks.py"))


def say(session_id: str, text: str) -> None:
    update(session_id, {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}})


def from_terminal(session_id: str, targets: str) -> dict[str, Any]:
    """The attempts again, as a command the client runs for the agent."""
    created = ask(
        "terminal/create",
        {"sessionId": session_id, "command": sys.executable, "args": [ATTACKS, targets], "cwd": os.getcwd()},
    )
    if "result" not in created:
        return {"refused": created.get("error")}
    terminal = {"sessionId": session_id, "terminalId": created["result"]["terminalId"]}
    ask("terminal/wait_for_exit", terminal)
    output = ask("terminal/output", terminal)["result"]["output"]
    ask("terminal/release", terminal)
    try:
        answer: dict[str, Any] = json.loads(output.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"unreadable": output[-2000:]}
    return answer


def run_prompt(request_id: Any, params: dict[str, Any]) -> None:
    session_id = params["sessionId"]
    text = " ".join(block.get("text", "") for block in params.get("prompt", []) if isinstance(block, dict))
    word, _, targets = text.partition(" ")
    if word == "attack":
        found = {"agent": report(json.loads(targets)), "terminal": from_terminal(session_id, targets)}
        Path("sandbox-report.json").write_text(json.dumps(found, indent=1))
        say(session_id, "reported")
    elif word == "connect":  # only what it may do: its folders, and the network when it has it
        Path("sandbox-report.json").write_text(json.dumps({"agent": report(json.loads(targets), attacking=False)}))
        say(session_id, "reported")
    else:
        say(session_id, "ok")
    send({"id": request_id, "result": {"stopReason": "end_turn"}})


def handle(message: dict[str, Any]) -> None:
    method, request_id, params = message.get("method"), message.get("id"), message.get("params") or {}
    if take_response(message):
        return
    if method == "initialize":
        send({"id": request_id, "result": {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []}})
    elif method == "session/new":
        send({"id": request_id, "result": {"sessionId": f"hostile-{os.getpid()}"}})
    elif method == "session/prompt":
        threading.Thread(target=run_prompt, args=(request_id, params), daemon=True).start()
    elif request_id is not None:
        send({"id": request_id, "error": {"code": -32601, "message": f"Method not found: {method}"}})


if __name__ == "__main__":
    serve(handle)
