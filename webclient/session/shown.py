"""What a session shows on its thread by itself, not because its agent said so: a turn's start with the user's
prompt, its end, a Stop, a notice. Each is recorded (kind ``session``) as it is shown, and `show_again` shows a
recorded one again when the thread is rebuilt from the journal (`webclient.session.replay`): one function per
event, called live and in the replay alike.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from webclient.session.attribution import shown_by
from webclient.session.prompt_content import PromptBlock
from webclient.session.recorder import SESSION, Recorder
from webclient.viewmodel.content import AudioBlock, EmbeddedResource, ImageBlock, ResourceLink, TextBlock
from webclient.viewmodel.entries import MessageEntry
from webclient.viewmodel.questions import Question
from webclient.viewmodel.thread import Thread

_BLOCKS: dict[str, type[PromptBlock]] = {
    "text": TextBlock,
    "image": ImageBlock,
    "audio": AudioBlock,
    "resource_link": ResourceLink,
    "resource": EmbeddedResource,
}

RESTARTED = "The server restarted during this turn"
"""The notice under a turn that was running when the server stopped (or died)."""


def _block_json(block: PromptBlock) -> dict[str, Any]:
    fields = asdict(block)
    del fields["raw"]
    return fields


def _block(fields: dict[str, Any]) -> PromptBlock:
    kind = _BLOCKS[fields["type"]]
    return kind(**{name: value for name, value in fields.items() if name != "type"})


class Shown:
    """Shows the session's own events on its thread, and records each for the replay."""

    def __init__(self, thread: Thread, recorder: Recorder) -> None:
        self.thread = thread
        self.recorder = recorder

    def _show(self, event: dict[str, Any]) -> None:
        self.recorder.record(SESSION, "session", json.dumps(event))
        show_again(self.thread, event)

    def notice(self, level: str, title: str, detail: str = "") -> None:
        self._show({"event": "notice", "level": level, "title": title, "detail": detail})

    def turn_started(self, prompt: Sequence[PromptBlock], by: dict[str, Any] | None = None) -> None:
        """A turn starts with ``prompt``, sent by ``by`` (`webclient.session.attribution.by_json`), if anyone."""
        event: dict[str, Any] = {"event": "turn", "prompt": [_block_json(block) for block in prompt]}
        if by is not None:
            event["by"] = by
        self._show(event)

    def turn_ended(self, stopped: bool) -> None:
        """The turn is over (``stopped``: by the user, or the agent said ``cancelled``). Its messages' words go to the
        recorder for the search over transcripts, each with its entry's number (a rebuild from the journal numbers
        the entries the same, so a search's hit links to its entry before and after a restart)."""
        self._show({"event": "turn-end", "stopped": stopped})
        for entry in reversed(self.thread.current_turn()):  # in the order they were said, as a search shows them
            if isinstance(entry, MessageEntry) and entry.kind in ("user-message", "agent-message") and entry.text:
                self.recorder.words("user" if entry.kind == "user-message" else "agent", entry.text, entry.seq)

    def queued(self, items: Sequence[tuple[str, str, Sequence[PromptBlock], dict[str, Any] | None]]) -> None:
        """The prompts waiting for their turn, as they are now (id, text, blocks, who sent it): the rebuilt page
        shows them."""
        queue = [
            {"id": i, "text": text, "blocks": [_block_json(b) for b in blocks], **({"by": by} if by else {})}
            for i, text, blocks, by in items
        ]
        self.recorder.record(SESSION, "session", json.dumps({"event": "queue", "items": queue}))

    def stopped(self) -> None:
        """The user stopped the turn: what was unfinished is not live any more."""
        self._show({"event": "stop"})

    def interrupted(self) -> None:
        """The server stopped (or died) during a turn, and the session was rebuilt from its journal."""
        self._show({"event": "interrupted"})


def queued_again(event: dict[str, Any]) -> list[tuple[str, str, list[PromptBlock], dict[str, Any] | None]]:
    """The queue a ``queue`` event recorded: (id, text, blocks, who sent it) of each waiting prompt."""
    return [
        (item["id"], item["text"], [_block(fields) for fields in item["blocks"]], item.get("by"))
        for item in event["items"]
    ]


def show_again(thread: Thread, event: dict[str, Any]) -> None:
    """Show one recorded event on the thread, as `Shown` did when it happened."""
    match event.get("event"):
        case "notice":
            thread.add_notice(event["level"], event["title"], event.get("detail", ""))
        case "turn":
            thread.start_turn([_block(fields) for fields in event["prompt"]]).by = shown_by(event.get("by"))
        case "turn-end":
            if event.get("stopped"):
                thread.stop_plan()
            thread.end_turn()
        case "stop":
            thread.cancel_unfinished()
        case "interrupted":
            thread.settle_permissions(interrupted=True)
            for entry in thread.latest(200):
                if isinstance(entry, Question) and entry.state == "pending":
                    entry.state = "interrupted"
                    thread.listener(entry.change)
            thread.cancel_unfinished()
            thread.add_notice("warning", RESTARTED, "What the agent was doing when it stopped is not known.")
            thread.end_turn()
