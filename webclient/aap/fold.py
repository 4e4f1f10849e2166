"""A turn's AAP events → the view model, the same thread ACP sessions use: messages, thoughts and tool-call cards.

Text and thinking stream into messages (deltas appended, ``text``/``thinking`` as whole messages), every
``tool_call`` becomes a card, and a ``tool_result`` (a server tool's, run inline) completes its card. Tools whose
names nobody declared are shown like any other. The same fold rebuilds a session from its journal.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

from webclient.aap.cards import CARD, Asked, asked_of, card_patch
from webclient.aap.turn import TurnEvent, tool_call_of
from webclient.viewmodel.content import Diff, ImageBlock, TerminalRef, TextBlock, ToolContent, Unknown
from webclient.viewmodel.entries import MessageRole
from webclient.viewmodel.thread import Thread

TERMINAL_SHOWN = "client_terminal"
"""Not an AAP event: the client's own record that one of its commands runs in a terminal shown on the call's card."""
CALL_OUTCOME = "client_outcome"
"""Not an AAP event either: what the client did about a call (ran it, ran it and got this, denied it)."""

DATA_URL = re.compile(r"data:(?P<mime>image/[A-Za-z0-9.+-]+);base64,(?P<data>[A-Za-z0-9+/=\s]*)")
"""An image AAP sends inline (its ``url`` a ``data:`` URL); any other URL stays a link."""

TOOL_KINDS = {
    "read_file": "read",
    "list_files": "read",
    "search": "search",
    "write_file": "edit",
    "run_command": "execute",
}
"""The card style of the client's own tools; everything else is drawn as a generic tool."""


def verbatim(text: str) -> str:
    """``text`` as a Markdown code block, shown as it is (a tool's output is not Markdown): the fence is longer
    than any run of backticks inside."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text}\n{fence}"


def blocks(content: Any) -> list[ToolContent]:
    """A tool's result (a string, or text/image/... blocks) as view-model content, its text shown verbatim."""
    if isinstance(content, str):
        return [TextBlock(verbatim(content), {"type": "text", "text": content})]
    found: list[ToolContent] = []
    for block in content if isinstance(content, list) else [content]:
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
            found.append(TextBlock(verbatim(block["text"]), block))
        elif isinstance(block, dict) and block.get("type") == "image" and isinstance(block.get("url"), str):
            inline = DATA_URL.fullmatch(block["url"])  # shown when it is one of the image types the page shows
            mime, data, uri = (inline["mime"], inline["data"], None) if inline else ("image/*", None, block["url"])
            found.append(ImageBlock(mime_type=mime, data=data, uri=uri, raw=block))
        else:
            found.append(
                Unknown(
                    kind=str(block.get("type") if isinstance(block, dict) else type(block).__name__),
                    raw=block if isinstance(block, dict) else {"value": block},
                )
            )
    return found


class EventFold:
    """Folds the events of one session's turns into its thread. Message ids are made here (AAP has none), one per
    stretch of text or thinking, so a tool call between two stretches starts a new message."""

    def __init__(self, thread: Thread) -> None:
        self.thread = thread
        self._ids = itertools.count(1)
        self._message: dict[str, str] = {}  # "text" / "thinking" → the id of the message it streams into
        self.asked: dict[str, Asked] = {}
        """What each call's question says besides its title (`webclient.aap.cards`), by call id."""

    def take(self, event: TurnEvent) -> None:
        name, data = event.name, event.data
        if name in ("text_delta", "thinking_delta") and isinstance(data.get("delta"), str):
            self._say(name.removesuffix("_delta"), data["delta"], whole=False)
        elif name == "text" and isinstance(data.get("text"), str):
            self._say("text", data["text"], whole=True)
        elif name == "thinking" and isinstance(data.get("thinking"), str):
            self._say("thinking", data["thinking"], whole=True)
        elif name == "tool_call" and (call := tool_call_of(data)) is not None:
            self._message.clear()
            patch = {
                "title": call.name,
                "kind": TOOL_KINDS.get(call.name, "other"),
                "status": "pending",
                "raw_input": call.input,
            }
            self.thread.upsert_tool_call(call.id, patch, {"name": call.name, "input": call.input}, create=True)
        elif name == "tool_result" and isinstance(data.get("toolCallId"), str):
            self.result(data["toolCallId"], data.get("content"), "completed")
        elif name == CARD and isinstance(data.get("toolCallId"), str):
            self.asked[data["toolCallId"]] = asked_of(data)
            self.thread.upsert_tool_call(data["toolCallId"], card_patch(data), {})
        elif name == "turn_stop":
            self._message.clear()
        elif name == CALL_OUTCOME and isinstance(data.get("toolCallId"), str) and isinstance(data.get("status"), str):
            if data.get("content") is None:
                self.status(data["toolCallId"], data["status"])
            else:
                self.result(data["toolCallId"], data["content"], data["status"])
        elif (
            name == TERMINAL_SHOWN
            and isinstance(data.get("toolCallId"), str)
            and isinstance(data.get("terminalId"), str)
        ):
            raw = {"type": "terminal", "terminalId": data["terminalId"]}
            self.thread.append_tool_content(
                data["toolCallId"], TerminalRef(terminal_id=data["terminalId"], raw=raw), raw
            )

    def result(self, call_id: str, content: Any, status: str) -> None:
        """A tool call's outcome on its card: the server's inline result, a client tool's, or a denial (under the
        terminal a client command ran in, or the diff of a write, which stay)."""
        self._message.clear()
        call = self.thread.tool_call(call_id)
        kept = [item for item in call.content if isinstance(item, TerminalRef | Diff)] if call is not None else []
        patch = {"status": status, "content": [*kept, *blocks(content)], "raw_output": content}
        self.thread.upsert_tool_call(call_id, patch, {"result": content})

    def status(self, call_id: str, status: str) -> None:
        self.thread.upsert_tool_call(call_id, {"status": status}, {})

    def _say(self, kind: str, text: str, *, whole: bool) -> None:
        if whole or kind not in self._message:
            self._message.clear()
            self._message[kind] = f"aap-{next(self._ids)}"
        role: MessageRole = "agent-message" if kind == "text" else "thought"
        self.thread.append_message(role, TextBlock(text), self._message[kind])
