"""Content items as the view model holds them: protocol-neutral, immutable, raw payload kept.

The protocol adapters (ACP today, AAP later) build these from their wire shapes; templates render them.
Every item keeps the payload it came from in ``raw`` so nothing an agent sent is lost, whether or not
we understand it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class TextBlock:
    """Markdown text."""

    text: str
    raw: dict[str, Any] = field(default_factory=dict, compare=False)
    type: str = "text"


@dataclass(frozen=True, slots=True)
class ImageBlock:
    """An image, inline (base64 ``data``) or by ``uri``."""

    mime_type: str
    data: str | None
    uri: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, compare=False)
    type: str = "image"


@dataclass(frozen=True, slots=True)
class AudioBlock:
    """A base64 audio clip."""

    mime_type: str
    data: str
    raw: dict[str, Any] = field(default_factory=dict, compare=False)
    type: str = "audio"


@dataclass(frozen=True, slots=True)
class ResourceLink:
    """A link to a resource the agent can reach (often a file)."""

    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    raw: dict[str, Any] = field(default_factory=dict, compare=False)
    type: str = "resource_link"


@dataclass(frozen=True, slots=True)
class EmbeddedResource:
    """A resource whose contents came along: ``text``, or base64 ``blob``."""

    uri: str
    mime_type: str | None = None
    text: str | None = None
    blob: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, compare=False)
    type: str = "resource"


@dataclass(frozen=True, slots=True)
class Diff:
    """A file change; ``old_text`` None means a new file."""

    path: str
    old_text: str | None
    new_text: str
    raw: dict[str, Any] = field(default_factory=dict, compare=False)
    type: str = "diff"


@dataclass(frozen=True, slots=True)
class FileOperation:
    """One file a v2 diff changes: its ``operation`` (``add``, ``delete``, ``modify``, ``move``, ``copy``, or an
    extension, kept as sent), the path after it, the path before a move or copy, and what kind of file it is."""

    operation: str
    path: str
    old_path: str | None = None
    file_type: str | None = None
    mime_type: str | None = None


@dataclass(frozen=True, slots=True)
class DiffChanges:
    """The v2 draft's diff: the files it changes (authoritative) and, optionally, a patch of them (``git_patch`` is
    the format this client reads; another format is shown as its text)."""

    changes: tuple[FileOperation, ...]
    patch_format: str | None = None
    patch_text: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, compare=False)
    type: str = "diff_changes"
    kind: str = "diff"


@dataclass(frozen=True, slots=True)
class TerminalRef:
    """A terminal embedded in a tool call, by id."""

    terminal_id: str
    raw: dict[str, Any] = field(default_factory=dict, compare=False)
    type: str = "terminal"


@dataclass(frozen=True, slots=True)
class Unknown:
    """Anything we do not understand yet: shown generically, collapsed, with its JSON."""

    kind: str
    raw: dict[str, Any] = field(default_factory=dict)
    type: str = "unknown"


ContentBlock = TextBlock | ImageBlock | AudioBlock | ResourceLink | EmbeddedResource | Unknown
"""What a message can carry."""

ToolContent = ContentBlock | Diff | DiffChanges | TerminalRef
"""What a tool call can carry: any content block, a diff or a terminal."""


@dataclass(frozen=True, slots=True)
class Location:
    """A file position a tool call touches (``line`` is 1-based)."""

    path: str
    line: int | None = None


@dataclass(frozen=True, slots=True)
class PlanItem:
    """One entry of an agent's plan."""

    content: str
    priority: str
    status: str


@dataclass(frozen=True, slots=True)
class PermissionOption:
    """A choice offered in a permission request; ``kind`` is a styling hint."""

    option_id: str
    name: str
    kind: str
    asks_reason: bool = False
    """Whether the person may say why (a denial whose reason the agent is told: AAP's ``tool_permission``)."""
