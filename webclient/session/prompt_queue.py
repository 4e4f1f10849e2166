"""Prompts the user sent while the agent was busy: shown as queued, editable, sent one per turn end."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from webclient.session.prompt_content import PromptBlock


@dataclass(eq=False)
class QueuedPrompt:
    id: str
    text: str
    blocks: list[PromptBlock]
    """What the prompt carries besides its text (attachments, mentions)."""
    by: dict[str, Any] | None = None
    """Who sent it (`webclient.session.attribution.by_json`)."""
    kept: bool = False
    """Queued before the server restarted: it waits for the person's "Send now", never sent by itself."""


@dataclass(eq=False)
class PromptQueue:
    listener: Callable[[], None]
    items: list[QueuedPrompt] = field(default_factory=list)

    def __iter__(self) -> Iterator[QueuedPrompt]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def add(self, text: str, blocks: list[PromptBlock], by: dict[str, Any] | None = None) -> QueuedPrompt:
        item = QueuedPrompt(secrets.token_urlsafe(6), text, blocks, by)
        self.items.append(item)
        self.listener()
        return item

    def edit(self, item_id: str, text: str) -> bool:
        """Change a queued prompt's text; an empty text with nothing attached removes it."""
        item = next((i for i in self.items if i.id == item_id), None)
        if item is None:
            return False
        text = text.strip()
        if not text and not item.blocks:
            return self.remove(item_id)
        if text != item.text:
            item.text = text
            self.listener()
        return True

    def remove(self, item_id: str) -> bool:
        before = len(self.items)
        self.items = [i for i in self.items if i.id != item_id]
        if len(self.items) != before:
            self.listener()
        return len(self.items) != before

    @property
    def sendable(self) -> list[QueuedPrompt]:
        """The prompts sent by themselves, one per turn end: all but those kept from before a restart."""
        return [item for item in self.items if not item.kept]

    @property
    def all_kept(self) -> bool:
        """Every queued prompt is from before the server restarted (each waits for "Send now")."""
        return bool(self.items) and not self.sendable

    def pop(self) -> QueuedPrompt | None:
        """Take the first prompt to send by itself (None: there is none; those kept from a restart stay)."""
        sendable = self.sendable
        if not sendable:
            return None
        self.items.remove(sendable[0])
        self.listener()
        return sendable[0]
