"""A raw-JSON ACP agent for tests: the prompt text picks a script; everything received is recorded.

Every line the client sends is appended to the JSONL file named by ``$RECORD_FILE`` (if set), so
tests assert exactly what the agent received. Scripts (first word of the prompt):

- ``stream N`` — N agent_message_chunk notifications ("w0 w1 ..."), then end_turn.
- ``tools`` — a tool call created, updated, given streamed content, then completed.
- ``permission`` — a pending edit tool call and a permission request with the four option kinds;
  reports the outcome in a message; returns ``cancelled`` if the outcome was cancelled.
- ``slow`` — streams a chunk every 50 ms for up to 30 s; stops with ``cancelled`` on session/cancel.
- ``echo`` — echoes the prompt back as user_message_chunk before answering.
- ``crash`` — sends one chunk, writes to stderr, exits with code 3 mid-turn.
- ``xss`` — sends hostile text as message, thought, tool title, location path, option names.
- ``run N`` — runs a command through ``terminal/create`` that prints N coloured lines 0.3 s apart,
  embeds it in a tool call, waits for it, reads its output and releases it.
- ``hold MARK kill|release|wait`` — runs ``sh`` with two long sleepers (a child and a grandchild) whose
  command lines contain MARK, then kills or releases the terminal, or waits for the session to end.
- ``fs read|write PATH [TEXT]`` — one ``fs/*`` request; the answer (result or error) is said as JSON.
- ``meta`` — a display-only terminal reported through tool-call ``_meta`` (claude-agent-acp style).
- ``look REL LINE...`` — one read tool call per LINE with a location in REL (relative to the cwd), 0.4 s apart.
- ``diff-twice`` — a tool call with a diff of a long file, then the same diff sent again.
- ``unknown`` — one session/update of a type no client knows (``future_thing``, with a payload), then end_turn.
- ``ask KIND WHAT...`` / ``askonly KIND WHAT...`` — a tool call of KIND (``execute``: its raw input's command is
  WHAT; else WHAT are paths relative to the cwd, its locations) and a permission request about it, with the four
  option kinds (``askonly``: "Allow once" only); says "answer: OPTION" (or "answer: cancelled").
- anything else — one message: "ok".
``$AUTH_REQUIRED=1`` makes session/new fail with -32000 until ``authenticate`` succeeds.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from typing import Any

from raw_jsonrpc import ask, send, serve, take_response, update

AUTH_REQUIRED = os.environ.get("AUTH_REQUIRED") == "1"

_cancelled = threading.Event()
_authenticated = threading.Event()
_cwd = "/"


def say(session_id: str, text: str, message_id: str | None = None) -> None:
    body: dict[str, Any] = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
    if message_id:
        body["messageId"] = message_id
    update(session_id, body)


def ask_about(session_id: str, kind: str, what: list[str], *, only_allow: bool) -> None:
    call_id = f"ask-{time.monotonic_ns()}"
    call: dict[str, Any] = {"sessionUpdate": "tool_call", "toolCallId": call_id, "title": f"{kind} {' '.join(what)}"}
    if kind == "execute":
        call["rawInput"] = {"command": " ".join(what)}
    else:
        call["locations"] = [{"path": os.path.join(_cwd, path)} for path in what]
    update(session_id, {**call, "kind": kind, "status": "pending"})
    options = [{"optionId": "allow-once", "name": "Allow once", "kind": "allow_once"}]
    if not only_allow:
        options += [
            {"optionId": "allow-always", "name": "Always allow", "kind": "allow_always"},
            {"optionId": "reject-once", "name": "Reject", "kind": "reject_once"},
            {"optionId": "reject-always", "name": "Always reject", "kind": "reject_always"},
        ]
    answer = ask(
        "session/request_permission", {"sessionId": session_id, "toolCall": {"toolCallId": call_id}, "options": options}
    )
    outcome = answer.get("result", {}).get("outcome", {})
    say(session_id, f"answer: {outcome.get('optionId') if outcome.get('outcome') == 'selected' else 'cancelled'}")


def run_prompt(request_id: Any, params: dict[str, Any]) -> None:
    session_id = params["sessionId"]
    text = " ".join(block.get("text", "") for block in params.get("prompt", []) if isinstance(block, dict))
    words = text.split()
    script = words[0] if words else ""
    stop = "end_turn"
    _cancelled.clear()
    if script == "stream":
        count = int(words[1]) if len(words) > 1 else 10
        for i in range(count):
            say(session_id, f"w{i} ")
    elif script == "tools":
        update(
            session_id,
            {
                "sessionUpdate": "tool_call",
                "toolCallId": "t1",
                "title": "Read notes.txt",
                "kind": "read",
                "status": "pending",
                "locations": [{"path": "/tmp/notes.txt", "line": 3}],
            },
        )
        update(session_id, {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "in_progress"})
        for part in ("alpha", "beta"):
            update(
                session_id,
                {
                    "sessionUpdate": "tool_call_content_chunk",
                    "toolCallId": "t1",
                    "content": {"type": "content", "content": {"type": "text", "text": part}},
                },
            )
        update(session_id, {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed"})
        update(
            session_id,
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "t2",
                "title": "Custom widget",
                "kind": "_widget",
                "status": "_warming",
                "content": [{"type": "_chart", "points": [1, 2, 3]}],
            },
        )
        say(session_id, "tools done")
    elif script == "permission":
        update(
            session_id,
            {
                "sessionUpdate": "tool_call",
                "toolCallId": "edit-1",
                "title": "Edit notes.txt",
                "kind": "edit",
                "status": "pending",
            },
        )
        answer = ask(
            "session/request_permission",
            {
                "sessionId": session_id,
                "toolCall": {"toolCallId": "edit-1"},
                "options": [
                    {"optionId": "allow-once", "name": "Allow once", "kind": "allow_once"},
                    {"optionId": "allow-always", "name": "Always allow", "kind": "allow_always"},
                    {"optionId": "reject-once", "name": "Reject", "kind": "reject_once"},
                    {"optionId": "reject-always", "name": "Always reject", "kind": "reject_always"},
                ],
            },
        )
        outcome = answer.get("result", {}).get("outcome", {})
        if outcome.get("outcome") == "selected":
            chosen = outcome.get("optionId")
            status = "completed" if str(chosen).startswith("allow") else "failed"
            update(session_id, {"sessionUpdate": "tool_call_update", "toolCallId": "edit-1", "status": status})
            say(session_id, f"answer: {chosen}", "after-permission")
        else:
            stop = "cancelled"
    elif script in ("ask", "askonly") and len(words) > 2:
        ask_about(session_id, words[1], words[2:], only_allow=script == "askonly")
    elif script == "slow":
        deadline = time.monotonic() + 30
        i = 0
        while time.monotonic() < deadline and not _cancelled.is_set():
            say(session_id, f"s{i} ")
            i += 1
            time.sleep(0.05)
        stop = "cancelled" if _cancelled.is_set() else "end_turn"
    elif script == "echo":
        update(session_id, {"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": text}})
        say(session_id, "echoed")
    elif script == "link":
        say(session_id, f"[the link]({words[1]})")
    elif script == "crash":
        say(session_id, "about to crash")
        sys.stderr.write("fatal: the scripted agent crashed on purpose\n")
        sys.stderr.flush()
        os._exit(3)
    elif script == "run":
        count = int(words[1]) if len(words) > 1 else 3
        code = (
            "import time\n"
            f"for i in range({count}):\n"
            "    print(f'\\x1b[32mline {i}\\x1b[0m done', flush=True)\n"
            "    time.sleep(0.3)\n"
        )
        created = ask(
            "terminal/create",
            {"sessionId": session_id, "command": sys.executable, "args": ["-c", code], "outputByteLimit": 10_000},
        )
        terminal_id = created["result"]["terminalId"]
        update(
            session_id,
            {
                "sessionUpdate": "tool_call",
                "toolCallId": "run-1",
                "title": "Run the lines",
                "kind": "execute",
                "status": "in_progress",
                "content": [{"type": "terminal", "terminalId": terminal_id}],
            },
        )
        exit_status = ask("terminal/wait_for_exit", {"sessionId": session_id, "terminalId": terminal_id})["result"]
        output = ask("terminal/output", {"sessionId": session_id, "terminalId": terminal_id})["result"]
        ask("terminal/release", {"sessionId": session_id, "terminalId": terminal_id})
        update(session_id, {"sessionUpdate": "tool_call_update", "toolCallId": "run-1", "status": "completed"})
        say(session_id, json.dumps({"exit": exit_status, "lines": output["output"].count("\n")}))
    elif script == "hold":
        mark, action = words[1], words[2]
        sleeper = f"{sys.executable} -c 'import time; time.sleep(300)' {mark}"
        created = ask(
            "terminal/create",
            {"sessionId": session_id, "command": "sh", "args": ["-c", f"{sleeper} & {sleeper}; wait", mark]},
        )
        terminal_id = created["result"]["terminalId"]
        update(
            session_id,
            {
                "sessionUpdate": "tool_call",
                "toolCallId": "hold-1",
                "title": "Hold",
                "kind": "execute",
                "status": "in_progress",
                "content": [{"type": "terminal", "terminalId": terminal_id}],
            },
        )
        time.sleep(1)
        if action == "kill":
            ask("terminal/kill", {"sessionId": session_id, "terminalId": terminal_id})
            status = ask("terminal/wait_for_exit", {"sessionId": session_id, "terminalId": terminal_id})
            say(session_id, json.dumps(status.get("result")))
        elif action == "release":
            ask("terminal/release", {"sessionId": session_id, "terminalId": terminal_id})
            after = ask("terminal/output", {"sessionId": session_id, "terminalId": terminal_id})
            say(session_id, json.dumps(after.get("error")))
        else:
            say(session_id, "holding")
            _cancelled.wait(300)
    elif script == "fs":
        action, path = words[1], words[2]
        if action == "read":
            answer = ask("fs/read_text_file", {"sessionId": session_id, "path": path})
        else:
            answer = ask("fs/write_text_file", {"sessionId": session_id, "path": path, "content": " ".join(words[3:])})
        say(session_id, json.dumps({k: answer[k] for k in ("result", "error") if k in answer}))
    elif script == "meta":
        update(
            session_id,
            {
                "sessionUpdate": "tool_call",
                "toolCallId": "meta-1",
                "title": "Format check",
                "kind": "execute",
                "status": "in_progress",
                "content": [{"type": "terminal", "terminalId": "agent-term-1"}],
                "_meta": {"terminal_info": {"terminal_id": "agent-term-1", "cwd": _cwd}},
            },
        )
        for chunk in ("\x1b[1mchecking\x1b[0m\n", "a.py \x1b[32mok\x1b[0m\n", "b.py \x1b[31mbad\x1b[0m\n"):
            time.sleep(0.2)
            update(
                session_id,
                {
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": "meta-1",
                    "_meta": {"terminal_output": {"terminal_id": "agent-term-1", "data": chunk}},
                },
            )
        update(
            session_id,
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "meta-1",
                "status": "failed",
                "_meta": {"terminal_exit": {"terminal_id": "agent-term-1", "exit_code": 1, "signal": None}},
            },
        )
    elif script == "look":
        rel = words[1]
        for n, line in enumerate(words[2:], start=1):
            update(
                session_id,
                {
                    "sessionUpdate": "tool_call",
                    "toolCallId": f"look-{n}",
                    "title": f"Read {rel}",
                    "kind": "read",
                    "status": "completed",
                    "locations": [{"path": os.path.join(_cwd, rel), "line": int(line)}],
                },
            )
            time.sleep(0.4)
    elif script == "diff-twice":
        old = "".join(f"line {i}\n" for i in range(1, 3001))
        new = old.replace("line 1500\n", "line 1500 changed\n")
        diff = {"type": "diff", "path": os.path.join(_cwd, "long.txt"), "oldText": old, "newText": new}
        call = {
            "toolCallId": "d1",
            "title": "Edit long.txt",
            "kind": "edit",
            "status": "in_progress",
            "content": [diff],
        }
        update(session_id, {"sessionUpdate": "tool_call", **call})
        say(session_id, "first")
        _cancelled.wait(float(words[1]) if len(words) > 1 else 2)
        update(
            session_id,
            {"sessionUpdate": "tool_call_update", "toolCallId": "d1", "status": "completed", "content": [diff]},
        )
        say(session_id, "second")
    elif script == "unknown":
        update(session_id, {"sessionUpdate": "future_thing", "payload": {"answer": 42, "note": "from the future"}})
    elif script == "xss":
        hostile = '<img src=x onerror="alert(1)"><script>alert(2)</script>[a](javascript:alert(3))'
        update(session_id, {"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": hostile}})
        say(session_id, hostile)
        update(
            session_id,
            {
                "sessionUpdate": "tool_call",
                "toolCallId": "x1",
                "title": hostile,
                "kind": "read",
                "status": "completed",
                "locations": [{"path": f"/tmp/{hostile}", "line": 1}],
                "content": [{"type": "diff", "path": f"/tmp/{hostile}", "oldText": hostile, "newText": hostile + "!"}],
            },
        )
    else:
        say(session_id, "ok")
    send({"id": request_id, "result": {"stopReason": stop}})


def handle(message: dict[str, Any]) -> None:
    method = message.get("method")
    request_id = message.get("id")
    params = message.get("params") or {}
    if take_response(message):
        return
    if method == "initialize":
        methods = [{"id": "token", "name": "Use a token", "description": "Sign in with a test token"}]
        send(
            {
                "id": request_id,
                "result": {
                    "protocolVersion": 1,
                    "agentInfo": {"name": "scripted-agent", "title": "Scripted agent", "version": "1.0"},
                    "agentCapabilities": {"loadSession": False},
                    "authMethods": methods if AUTH_REQUIRED else [],
                },
            }
        )
    elif method == "authenticate":
        _authenticated.set()
        send({"id": request_id, "result": {}})
    elif method == "session/new":
        global _cwd
        _cwd = params.get("cwd", "/")
        if AUTH_REQUIRED and not _authenticated.is_set():
            send({"id": request_id, "error": {"code": -32000, "message": "Authentication required"}})
        else:
            send({"id": request_id, "result": {"sessionId": "scripted-1"}})
    elif method == "session/prompt":
        threading.Thread(target=run_prompt, args=(request_id, params), daemon=True).start()
    elif method == "session/cancel":
        _cancelled.set()
    elif request_id is not None:
        send({"id": request_id, "error": {"code": -32601, "message": f"Method not found: {method}"}})


if __name__ == "__main__":
    serve(handle)
