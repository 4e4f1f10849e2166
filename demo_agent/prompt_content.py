"""A ``session/prompt``'s content, split into the words that pick a scenario and the blocks attached to them.

Text blocks are joined into :attr:`Prompt.text` (its first word, with or without ``/``, names the scenario; the
rest are the scenario's arguments). Every other block — ``image``, ``audio``, ``resource_link``, ``resource``, or
a type this agent does not know — is an attachment, acknowledged in the answer (:mod:`.attachments`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import unquote, urlparse

TITLE_WORDS = 6
TITLE_CHARS = 48


@dataclass(frozen=True, slots=True)
class Prompt:
    text: str = ""
    attachments: tuple[dict[str, Any], ...] = field(default=())

    @classmethod
    def from_wire(cls, blocks: Any) -> Prompt:
        """Parse the ``prompt`` array leniently: anything that is not an object is skipped."""
        texts: list[str] = []
        attachments: list[dict[str, Any]] = []
        for block in blocks if isinstance(blocks, list) else []:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text":
                texts.append(str(block.get("text", "")))
            else:
                attachments.append(block)
        return cls(" ".join(texts), tuple(attachments))

    @property
    def command(self) -> str:
        """The first word, lower-cased, without a leading ``/``."""
        words = self.text.split(maxsplit=1)
        return words[0].lower().removeprefix("/") if words else ""

    @property
    def args(self) -> str:
        """Everything after the first word."""
        words = self.text.split(maxsplit=1)
        return words[1].strip() if len(words) > 1 else ""

    def title(self) -> str:
        """A short session title: the first few words (a command loses its ``/``), else what was attached."""
        words = self.text.split()[:TITLE_WORDS]
        if words:
            words[0] = words[0].removeprefix("/")
            title = " ".join(words)
            title = title[:1].upper() + title[1:]
            if len(title) > TITLE_CHARS or len(self.text.split()) > TITLE_WORDS:
                title = title[:TITLE_CHARS].rstrip(" ,.;:") + "…"
            return title
        names = [attachment_name(a) for a in self.attachments]
        if not names:
            return "Empty prompt"
        return f"About {names[0]}" + (f" and {len(names) - 1} more" if len(names) > 1 else "")


def attachment_name(block: dict[str, Any]) -> str:
    """A short name for an attached block: its ``name``, the last part of its URI, else its type."""
    resource = block.get("resource")
    uri = block.get("uri") or (resource.get("uri") if isinstance(resource, dict) else None)
    if isinstance(block.get("name"), str) and block["name"]:
        return str(block["name"])
    if isinstance(uri, str) and uri:
        parsed = urlparse(uri)
        return PurePosixPath(unquote(parsed.path)).name or parsed.netloc or uri
    return {"image": "an image", "audio": "an audio clip"}.get(str(block.get("type")), "an attachment")
