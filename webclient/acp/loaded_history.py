"""What an agent replays during ``session/load`` of a conversation the thread shows already: not shown again, but
its prompts are matched against the prompts shown, so that the page can say whether the agent remembers the same.
https://agentclientprotocol.com/protocol/session-setup#loading-sessions
"""

from __future__ import annotations

from typing import Any, cast

from webclient.acp import wire, wire_v2
from webclient.acp.wire_values import items, mapping, string
from webclient.viewmodel.entries import MessageEntry
from webclient.viewmodel.thread import Thread


class LoadedHistory:
    """The updates of one ``session/load``, and the prompts among them (consecutive chunks make one prompt)."""

    def __init__(self) -> None:
        self.updates = 0
        self.prompts: list[str] = []
        self._in_prompt = False

    def take(self, update: Any) -> None:
        self.updates += 1
        said = mapping(update)
        kind = said.get("sessionUpdate")
        if kind == "user_message":  # v2: a whole message (replayed with session/resume's replayFrom)
            message = cast(wire_v2.V2UserMessage, said)
            texts = (string(mapping(block).get("text")) for block in items(message.get("content")))
            self.prompts.append("".join(text for text in texts if text is not None))
            self._in_prompt = False
            return
        chunk = cast(wire.ContentChunk, said)  # v2's has the same keys
        text = string(mapping(chunk.get("content")).get("text")) if kind == "user_message_chunk" else None
        if text is not None:
            if self._in_prompt:
                self.prompts[-1] += text
            else:
                self.prompts.append(text)
            self._in_prompt = True
        else:
            self._in_prompt = False

    def verdict(self, thread: Thread, method: str = "session/load") -> tuple[str, str, str]:
        """The notice that says how the agent's history compares with the thread: level, title, detail."""
        prompts = (entry for entry in thread if isinstance(entry, MessageEntry) and entry.kind == "user-message")
        shown = [entry.text.strip() for entry in prompts]
        remembered = [prompt.strip() for prompt in self.prompts]
        if remembered == shown or not remembered:
            count = len(remembered)
            what = f"the {count} prompt{'s' if count != 1 else ''} shown" if remembered else "what is shown"
            return "info", "The agent resumed its session", f"With {method}: what it replayed matches {what}."
        return (
            "warning",
            "The agent resumed its session, but remembers it differently",
            f"It replayed {len(remembered)} prompts; this page shows {len(shown)}. What it replayed is not shown.",
        )
