"""One turn of the demo agent: its events, in the order AAP v3 streams them, and the history it leaves.

A user message chooses a script by its words: ``tools`` calls every tool it can at once (the client's
``read_file`` and ``list_files`` when the client declared them, the trusted and the untrusted server tool when the
client enabled them, and its unexposed notes tool), ``change`` the client's ``write_file`` and ``run_command``,
``fail`` stops with ``error``, anything else gets a thought and an answer. Tool results and permissions (the
re-submission after ``tool_use``) are resolved as the spec says, then the agent sums up what came back.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

from .agents import DEPLOY, NOTES, SEARCH
from .sessions import Session

Event = tuple[str, dict[str, Any]]

GREETING = (
    "Hello from a **remote** agent: I run behind an AAP server, not as a process of this client. "
    "Say `tools` and I call your tools and mine in parallel; `change` writes a note and runs a command with your "
    "tools (you are asked first); `fail` shows an error stop."
)


def run_server_tool(name: str, arguments: dict[str, Any]) -> str:
    if name == SEARCH:
        query = str(arguments.get("query", ""))
        return f"1. {query} — https://example.com/1\n2. {query} explained — https://example.com/2\n3. More — https://example.com/3"
    if name == DEPLOY:
        branch = str(arguments.get("branch", "main"))
        return f"Deployed {branch} to https://preview.example.com/{branch}"
    return "noted"


def text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(block.get("text", "")) for block in content if isinstance(block, dict))
    return ""


class Turn:
    """Runs one ``POST /sessions/:id/turns``: ``events()`` yields its events and writes the session's history."""

    def __init__(self, session: Session, mode: str, delay: float) -> None:
        self.session = session
        self.mode = mode  # "delta" or "message" ("none" collects the "message" form)
        self.delay = delay
        self.start = len(session.history)
        self._assistant: dict[str, Any] | None = None

    @property
    def new_messages(self) -> list[dict[str, Any]]:
        """What this turn added to the history (the answer of ``stream: "none"``)."""
        return [m for m in self.session.history[self.start :] if m.get("role") in ("assistant", "tool")]

    async def events(self, messages: list[dict[str, Any]]) -> AsyncIterator[Event]:
        yield "turn_start", {}
        if len(messages) == 1 and messages[0].get("role") == "user":
            self.session.history.append(messages[0])
            words = text_of(messages[0].get("content")).lower()
            script = (
                self._tools()
                if "tools" in words
                else self._changes()
                if "change" in words
                else self._fail()
                if "fail" in words
                else self._greet()
            )
        else:
            script = self._resolve(messages)
        stop = "end_turn"
        async for event in script:
            if event[0] == "turn_stop":
                stop = event[1]["stopReason"]
                break
            yield event
        self._close()
        yield "turn_stop", {"stopReason": stop}

    # -- scripts ---------------------------------------------------------------------------------

    async def _greet(self) -> AsyncIterator[Event]:
        async for event in self._thinking("A greeting. I'll say what I can do."):
            yield event
        language = self.session.options.get("language", "English")
        async for event in self._text(
            GREETING + (f" (I was asked to answer in {language}.)" if language != "English" else "")
        ):
            yield event

    async def _fail(self) -> AsyncIterator[Event]:
        async for event in self._text("Let me try that… "):
            yield event
        yield "turn_stop", {"stopReason": "error"}

    async def _tools(self) -> AsyncIterator[Event]:
        async for event in self._thinking("Several things at once: read, list, search, and a preview to deploy."):
            yield event
        async for event in self._text("I'll look at your project and the web at the same time."):
            yield event
        calls: list[tuple[str, dict[str, Any]]] = []
        if "read_file" in self.session.client_tools:
            calls.append(("read_file", {"path": "README.md"}))
        if "list_files" in self.session.client_tools:
            calls.append(("list_files", {"path": "."}))
        if SEARCH in self.session.enabled:
            calls.append((SEARCH, {"query": "Agent Application Protocol"}))
        if DEPLOY in self.session.enabled:
            calls.append((DEPLOY, {"branch": "main"}))
        calls.append((NOTES, {"note": "the person asked for tools"}))
        inline: list[tuple[str, str, dict[str, Any]]] = []
        for name, arguments in calls:
            call_id = f"call_{uuid.uuid4().hex[:8]}"
            yield await self._tool_call(call_id, name, arguments)
            if name == NOTES or self.session.enabled.get(name):
                inline.append((call_id, name, arguments))
        for call_id, name, arguments in inline:
            yield self._tool_result(call_id, run_server_tool(name, arguments))
        self._close()
        if self.session.unresolved():
            yield "turn_stop", {"stopReason": "tool_use"}
            return
        async for event in self._summary():
            yield event

    async def _changes(self) -> AsyncIterator[Event]:
        """The client's tools that change things, which it asks the person about first: a file written, a command."""
        async for event in self._text("I'll leave a note in the project and list it with a command."):
            yield event
        if "write_file" in self.session.client_tools:
            note = "# Notes\n\nLeft by the remote demo agent.\n"
            yield await self._tool_call(
                f"call_{uuid.uuid4().hex[:8]}", "write_file", {"path": "NOTES.md", "content": note}
            )
        if "run_command" in self.session.client_tools:
            yield await self._tool_call(
                f"call_{uuid.uuid4().hex[:8]}", "run_command", {"command": "ls", "args": ["-1"]}
            )
        self._close()
        if self.session.unresolved():
            yield "turn_stop", {"stopReason": "tool_use"}
            return
        async for event in self._summary():
            yield event

    async def _resolve(self, messages: list[dict[str, Any]]) -> AsyncIterator[Event]:
        pending = {block["toolCallId"]: block for block in self.session.unresolved()}
        for message in messages:
            call = pending.get(message.get("toolCallId"))
            if call is None:
                continue
            if message.get("role") == "tool":
                self.session.history.append(
                    {"role": "tool", "toolCallId": call["toolCallId"], "content": message.get("content", "")}
                )
            elif message.get("role") == "tool_permission" and message.get("granted") is True:
                yield self._tool_result(call["toolCallId"], run_server_tool(call["name"], call.get("input") or {}))
            elif message.get("role") == "tool_permission":
                reason = message.get("reason")
                denied = f"Tool call denied: {reason}" if isinstance(reason, str) and reason else "Tool call denied"
                self.session.history.append({"role": "tool", "toolCallId": call["toolCallId"], "content": denied})
        async for event in self._summary():
            yield event

    async def _summary(self) -> AsyncIterator[Event]:
        """What the last round of tool calls brought back (inline results, the client's, permissions' outcomes)."""
        calls = self.session.last_tool_calls()
        results = {m["toolCallId"]: text_of(m.get("content")) for m in self.session.history if m.get("role") == "tool"}
        lines = [
            f"- `{call['name']}`: {' '.join(results[call['toolCallId']].split())[:120]}"
            if call["toolCallId"] in results
            else f"- `{call['name']}`: no answer"
            for call in calls
        ]
        async for event in self._text("Here is what came back:\n\n" + "\n".join(lines or ["- nothing"])):
            yield event

    # -- building the stream and the history -----------------------------------------------------

    def _message(self) -> dict[str, Any]:
        if self._assistant is None:
            self._assistant = {"role": "assistant", "content": []}
        return self._assistant

    def _close(self) -> None:
        if self._assistant is not None and self._assistant["content"]:
            self.session.history.append(self._assistant)
        self._assistant = None

    async def _stream(self, kind: str, text: str) -> AsyncIterator[Event]:
        field = "text" if kind == "text" else "thinking"
        self._message()["content"].append({"type": kind, field: text})
        if self.mode != "delta":
            yield kind, {field: text}
            return
        words = text.split(" ")
        for index in range(0, len(words), 3):
            await asyncio.sleep(self.delay)
            piece = " ".join(words[index : index + 3]) + (" " if index + 3 < len(words) else "")
            yield f"{kind}_delta", {"delta": piece}

    def _text(self, text: str) -> AsyncIterator[Event]:
        return self._stream("text", text)

    def _thinking(self, text: str) -> AsyncIterator[Event]:
        return self._stream("thinking", text)

    async def _tool_call(self, call_id: str, name: str, arguments: dict[str, Any]) -> Event:
        await asyncio.sleep(self.delay)
        self._message()["content"].append({"type": "tool_use", "toolCallId": call_id, "name": name, "input": arguments})
        return "tool_call", {"toolCallId": call_id, "name": name, "input": arguments}

    def _tool_result(self, call_id: str, content: str) -> Event:
        """A server tool's result: it closes the assistant message, as the reference SDK rebuilds them."""
        self._close()
        self.session.history.append({"role": "tool", "toolCallId": call_id, "content": content})
        return "tool_result", {"toolCallId": call_id, "content": content}


def sse(event: Event) -> bytes:
    return f"event: {event[0]}\ndata: {json.dumps(event[1])}\n\n".encode()
