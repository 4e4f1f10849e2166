"""A raw-JSON ACP agent whose text tries to dress up the page; the prompt's first word picks what it sends.

* ``spoof``: a plan whose priority and status are class names of the page, a tool call titled with a bidi
  override whose locations hide a Cyrillic "а" and a zero-width space, a session title with an override, and a
  permission whose ``reject_once`` option is named ``"\\u202eecno wollA"`` (it reads "Allow once").
* ``long``: a 30,000-character unbroken token everywhere one fits: a message, a table cell, a tool title, a
  location path, a diff line, a file in the workspace (so the file panel and Changes show it), a terminal line,
  a plan item, a permission option name, the session title.
* ``tall``: a permission card with ten options of a few hundred characters each.
* ``colours``: terminal output in 256 colours and true colour, and a Markdown table with aligned columns.
* ``chat``: one short message, so a test can fill the thread.
* ``two``: two permission questions at once: ``two-a`` offers the agent's own "Always allow" (``allow_always``),
  ``two-b`` an ``allow_always`` named "Allow for this session" (as the remote demo's client tools do).
* ``files``: through the client (``fs/write_text_file``), a new file whose name hides a bidi override and a
  30,000-character line into a file that was there, and on disk by itself another file with an override in its
  name, so the thread's file changes, Changes and its diffs show them.

Permission requests stay open (the answer is recorded in ``$RECORD_FILE`` like everything received).
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from raw_jsonrpc import ask, send, serve, take_response, update  # noqa: E402

TOKEN = "x" * 30_000
BIDI_OPTION = "\u202eecno wollA"
HOMOGLYPH = "p\u0430ypal.py"  # the "а" is Cyrillic
BIDI_FILE = "notes\u202etxt.exe"  # reads "notesexe.txt"
_cwd = "/"
_next_id = 1000


def ask_permission(session_id: str, call_id: str, options: list[dict[str, Any]]) -> None:
    global _next_id
    _next_id += 1
    update(session_id, {"sessionUpdate": "tool_call", "toolCallId": call_id, "title": "Run it", "kind": "execute",
                        "status": "pending"})  # fmt: skip
    send(
        {
            "id": _next_id,
            "method": "session/request_permission",
            "params": {"sessionId": session_id, "toolCall": {"toolCallId": call_id}, "options": options},
        }
    )


def spoof(session_id: str) -> None:
    update(session_id, {"sessionUpdate": "session_info_update", "title": "Fix the \u202egnp.exe build " + "y" * 200})
    update(
        session_id,
        {
            "sessionUpdate": "plan",
            "entries": [
                {"content": "Look around", "priority": "high jump", "status": "pending side-panel open"},
                {"content": "Cover the page", "priority": "medium side-panel", "status": "in_progress dock"},
                {"content": "Read the code", "priority": "low", "status": "completed"},
            ],
        },
    )
    update(
        session_id,
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "spoof-1",
            "title": "Read \u202etxt.exe",
            "kind": "read",
            "status": "completed",
            "locations": [{"path": os.path.join(_cwd, HOMOGLYPH)}, {"path": os.path.join(_cwd, "a\u200bb.txt")}],
        },
    )
    ask_permission(
        session_id,
        "spoof-perm",
        [
            {"optionId": "allow", "name": "Allow once", "kind": "allow_once"},
            {"optionId": "reject", "name": BIDI_OPTION, "kind": "reject_once"},
        ],
    )


def long(session_id: str) -> None:
    Path(_cwd, "long.txt").write_text(f"a\n{TOKEN}\nc\n")  # shows in the file panel and in Changes
    update(session_id, {"sessionUpdate": "session_info_update", "title": TOKEN})
    text = f"before {TOKEN} after\n\n| a | b |\n|---|--:|\n| {TOKEN} | 1 |\n"
    update(session_id, {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}})
    update(
        session_id,
        {"sessionUpdate": "plan", "entries": [{"content": TOKEN, "priority": "high", "status": "in_progress"}]},
    )
    update(
        session_id,
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "long-1",
            "title": TOKEN,
            "kind": "edit",
            "status": "completed",
            "locations": [
                {"path": os.path.join(_cwd, "long.txt"), "line": 2},
                {"path": os.path.join(_cwd, "y" * 30_000), "line": 3},
            ],
            "content": [
                {
                    "type": "diff",
                    "path": os.path.join(_cwd, "z" * 30_000),
                    "oldText": f"a\n{TOKEN}\nc\n",
                    "newText": f"a\n{TOKEN}b\nc\n",
                }
            ],
        },
    )
    update(
        session_id,
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "long-term",
            "title": "long output",
            "kind": "execute",
            "status": "in_progress",
            "_meta": {"terminal_info": {"terminal_id": "t-long", "cwd": TOKEN}},
        },
    )
    update(
        session_id,
        {"sessionUpdate": "tool_call_update", "toolCallId": "long-term", "status": "completed",
         "_meta": {"terminal_output": {"terminal_id": "t-long", "data": TOKEN + "\r\nshort\r\n"}}},
    )  # fmt: skip
    ask_permission(session_id, "long-perm", [{"optionId": "long", "name": TOKEN, "kind": "allow_once"}])


def tall(session_id: str) -> None:
    words = "please allow this very long and winding option text that goes on and on "
    options = [
        {"optionId": f"opt-{i}", "name": f"Option {i}: " + words * 5, "kind": "allow_once" if i == 0 else "reject_once"}
        for i in range(10)
    ]
    ask_permission(session_id, "tall-perm", options)


def colours(session_id: str) -> None:
    output = "\x1b[38;5;208mindexed\x1b[0m \x1b[38;2;10;200;30mtruecolour\x1b[0m \x1b[48;5;21mbackground\x1b[0m\r\n"
    update(
        session_id,
        {"sessionUpdate": "tool_call", "toolCallId": "colours", "title": "colours", "kind": "execute",
         "status": "in_progress", "_meta": {"terminal_info": {"terminal_id": "t-col"}}},
    )  # fmt: skip
    update(
        session_id,
        {"sessionUpdate": "tool_call_update", "toolCallId": "colours", "status": "completed",
         "_meta": {"terminal_output": {"terminal_id": "t-col", "data": output}}},
    )  # fmt: skip
    table = "| left | middle | right |\n|:--|:-:|--:|\n| a | b | c |\n"
    update(session_id, {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": table}})


def files(session_id: str) -> None:
    Path(_cwd, "wide.txt").write_text("a\nb\nc\n")
    Path(_cwd, "draft\u202egnp.js").write_text("x\n")  # made behind the client's back: Changes finds it on disk
    ask("fs/write_text_file", {"sessionId": session_id, "path": os.path.join(_cwd, BIDI_FILE), "content": "hello\n"})
    ask("fs/write_text_file", {"sessionId": session_id, "path": os.path.join(_cwd, "wide.txt"),
                               "content": f"a\n{TOKEN}\nc\n"})  # fmt: skip
    update(
        session_id,
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "files-1",
            "title": "Edit",
            "kind": "edit",
            "status": "completed",
            "content": [{"type": "diff", "path": os.path.join(_cwd, BIDI_FILE), "oldText": None, "newText": "hello\n"}],
        },
    )


def two(session_id: str) -> None:
    ask_permission(session_id, "two-a", [
        {"optionId": "a-once", "name": "Allow once", "kind": "allow_once"},
        {"optionId": "a-always", "name": "Always allow", "kind": "allow_always"},
        {"optionId": "a-no", "name": "Reject", "kind": "reject_once"},
    ])  # fmt: skip
    ask_permission(session_id, "two-b", [
        {"optionId": "b-once", "name": "Allow once", "kind": "allow_once"},
        {"optionId": "b-session", "name": "Allow for this session", "kind": "allow_always"},
        {"optionId": "b-no", "name": "Deny", "kind": "reject_once"},
    ])  # fmt: skip


SCRIPTS = {"spoof": spoof, "two": two, "long": long, "tall": tall, "colours": colours, "files": files}


def run_prompt(request_id: Any, params: dict[str, Any]) -> None:
    session_id = params["sessionId"]
    text = " ".join(block.get("text", "") for block in params.get("prompt", []) if isinstance(block, dict))
    script = SCRIPTS.get(text.split()[0] if text.split() else "")
    if script is None:
        update(
            session_id, {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": f"said: {text}"}}
        )
        send({"id": request_id, "result": {"stopReason": "end_turn"}})
        return
    script(session_id)
    if script in (colours, files):
        send({"id": request_id, "result": {"stopReason": "end_turn"}})


def handle(message: dict[str, Any]) -> None:
    global _cwd
    method = message.get("method")
    request_id = message.get("id")
    params = message.get("params") or {}
    if take_response(message):
        return
    if method == "initialize":
        send({"id": request_id, "result": {"protocolVersion": 1, "agentInfo": {"name": "page-agent", "version": "1"},
                                           "agentCapabilities": {"loadSession": False}}})  # fmt: skip
    elif method == "session/new":
        _cwd = params.get("cwd", "/")
        send({"id": request_id, "result": {"sessionId": "page-1"}})
    elif method == "session/prompt":
        threading.Thread(target=run_prompt, args=(request_id, params), daemon=True).start()
    elif method is not None and request_id is not None:
        send({"id": request_id, "error": {"code": -32601, "message": f"Method not found: {method}"}})


if __name__ == "__main__":
    serve(handle)
