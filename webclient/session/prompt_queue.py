"""Prompts the user sent while the agent was busy: shown as queued, editable, sent one per turn end; bounded in
number and bytes, as a prompt is in length (:class:`PromptBounds`)."""

from __future__ import annotations

import dataclasses
import secrets
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from webclient.config import Settings
from webclient.session.prompt_content import PromptBlock

MIB = 1024 * 1024


class PromptRefused(Exception):
    """A prompt neither sent nor queued (too long, or the queue is full): ``args[0]`` says which limit, for the
    person."""


def text_bytes(text: str) -> int:
    """The UTF-8 length of ``text`` (a lone surrogate from the page's JSON counts as the 3 bytes it is sent as)."""
    return len(text.encode("utf-8", "surrogatepass"))


def held_bytes(text: str, blocks: list[PromptBlock]) -> int:
    """What a queued prompt holds: its text and every text of its blocks (an attachment's base64 data above all)."""
    attached = sum(
        len(value)
        for block in blocks
        for block_field in dataclasses.fields(block)
        if isinstance(value := getattr(block, block_field.name), str)
    )
    return text_bytes(text) + attached


@dataclass(frozen=True)
class PromptBounds:
    """How long a prompt's text may be and how much a session may queue (0: no limit): ``WEBCLIENT_MAX_PROMPT_MB``,
    ``WEBCLIENT_MAX_QUEUED_PROMPTS``, ``WEBCLIENT_MAX_QUEUE_MB``."""

    prompt_bytes: int = 0
    queued: int = 0
    queue_bytes: int = 0

    @classmethod
    def from_settings(cls, settings: Settings) -> PromptBounds:
        return cls(int(settings.max_prompt_mb * MIB), settings.max_queued_prompts, int(settings.max_queue_mb * MIB))

    def too_long(self, text: str) -> str | None:
        """Why ``text`` is too long for a prompt, or None."""
        size = text_bytes(text)
        if self.prompt_bytes and size > self.prompt_bytes:
            return (
                f"The prompt is {size:,} bytes long, more than this server takes ({self.prompt_bytes:,} bytes, "
                "WEBCLIENT_MAX_PROMPT_MB): shorten it, or attach the text as a file."
            )
        return None

    def queue_full(self, queue: PromptQueue, adding: int) -> str | None:
        """Why one more prompt that holds ``adding`` bytes may not join ``queue``, or None."""
        if self.queued and len(queue) >= self.queued:
            return (
                f"{len(queue)} prompts are queued, the most this server queues (WEBCLIENT_MAX_QUEUED_PROMPTS="
                f"{self.queued}): wait for the agent, or remove a queued one."
            )
        return self.too_much(queue.held_bytes() + adding)

    def too_much(self, held: int) -> str | None:
        """Why a queue may not hold ``held`` bytes, or None."""
        if self.queue_bytes and held > self.queue_bytes:
            return (
                f"The queue would hold {held:,} bytes, more than this server queues ({self.queue_bytes:,} bytes, "
                "WEBCLIENT_MAX_QUEUE_MB): wait for the agent, or remove a queued one."
            )
        return None


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
    bounds: PromptBounds = PromptBounds()
    refused: Callable[[str], None] = lambda why: None
    """Told why an edit was refused (too long), to show the person."""

    def __iter__(self) -> Iterator[QueuedPrompt]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def held_bytes(self) -> int:
        return sum(held_bytes(item.text, item.blocks) for item in self.items)

    def add(self, text: str, blocks: list[PromptBlock], by: dict[str, Any] | None = None) -> QueuedPrompt:
        """Queue a prompt (its bounds are checked by whoever takes it, before its attachments are taken)."""
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
        grown = self.held_bytes() - text_bytes(item.text) + text_bytes(text)
        refusal = self.bounds.too_long(text) or self.bounds.too_much(grown)
        if refusal is not None:
            self.refused(refusal)
            return False
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
