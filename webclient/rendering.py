"""The Jinja environment and the helpers templates use; everything that turns state into HTML text.

Autoescape is on everywhere: agent text, titles, paths and JSON reach the page escaped, and the only
markup we trust is what :mod:`webclient.markdown` produced (sanitised).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from jinja2_fragments import render_block
from markupsafe import Markup

from webclient import diffs
from webclient.markdown import MarkdownStream, render_markdown
from webclient.terminal_screen import Line, TerminalScreen, line_html
from webclient.viewmodel.entries import Entry, MessageEntry

TEMPLATES_DIR = Path(__file__).resolve().parent.parent / "templates"

KNOWN_KINDS = {
    "read": "Read",
    "edit": "Edit",
    "delete": "Delete",
    "move": "Move",
    "search": "Search",
    "execute": "Run",
    "think": "Think",
    "fetch": "Fetch",
    "switch_mode": "Mode",
    "other": "Tool",
}
KNOWN_STATUSES = {
    "pending": "Pending",
    "in_progress": "Running",
    "completed": "Done",
    "failed": "Failed",
    "cancelled": "Cancelled",
}
KNOWN_OPTION_KINDS = frozenset({"allow_once", "allow_always", "reject_once", "reject_always"})
SAFE_IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp", "image/avif", "image/bmp"})
SAFE_URL_SCHEMES = frozenset({"http", "https", "mailto"})
RAW_JSON_LIMIT = 200_000


def dom_id(entry: Entry) -> str:
    """The page id of an entry: one function, so every fragment targets the same element."""
    return f"entry-{entry.seq}"


def kind_label(kind: str | None) -> str:
    return KNOWN_KINDS.get(kind or "other", "Tool")


def kind_class(kind: str | None) -> str:
    """A CSS class for a tool kind: known kinds their own, custom and future ones a generic look."""
    kind = kind or "other"
    return kind if kind in KNOWN_KINDS else "generic"


def status_label(status: str) -> str:
    return KNOWN_STATUSES.get(status, status.lstrip("_").replace("_", " ").capitalize() or "Unknown")


def status_class(status: str) -> str:
    return status if status in KNOWN_STATUSES else "generic"


def option_class(kind: str) -> str:
    return kind if kind in KNOWN_OPTION_KINDS else "generic"


def safe_url(url: str | None) -> str | None:
    """``url`` if following it cannot run code (http, https, mailto); else None."""
    if not url:
        return None
    try:
        scheme = urlsplit(url.strip()).scheme.lower()
    except ValueError:
        return None
    return url if scheme in SAFE_URL_SCHEMES else None


def pretty_json(value: Any) -> str:
    """Indented JSON for the page, cut at a size a browser shows comfortably."""
    text = json.dumps(value, indent=2, ensure_ascii=False, default=repr)
    if len(text) > RAW_JSON_LIMIT:
        text = f"{text[:RAW_JSON_LIMIT]}\n… ({len(text):,} characters in all)"
    return text


def terminal_lines(lines: Iterable[Line]) -> Markup:
    """Finished terminal lines as HTML, each ending with a newline (they sit in a ``<pre>``)."""
    return Markup("".join(f"{line_html(line)}\n" for line in lines))


def terminal_screen(screen: TerminalScreen) -> Markup:
    """The part of a terminal that may still change: its visible screen."""
    return Markup("\n".join(line_html(line) for line in screen.screen()))


def markdown_filter(text: str) -> Markup:
    return Markup(render_markdown(text))


@dataclass(slots=True)
class MessageView:
    """What a message looks like now: finished blocks as HTML, the rest as text still arriving."""

    html: Markup
    tail: str
    state: tuple[int, int, int]
    """(markdown generation, blocks rendered, source characters shown): what a page holds of it."""


def make_environment(templates_dir: Path = TEMPLATES_DIR) -> Environment:
    env = Environment(
        loader=FileSystemLoader(templates_dir),
        autoescape=select_autoescape(default=True, default_for_string=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals.update(
        dom_id=dom_id,
        kind_label=kind_label,
        kind_class=kind_class,
        status_label=status_label,
        status_class=status_class,
        option_class=option_class,
        safe_url=safe_url,
        build_diff=diffs.build_diff,
        gap_rows=diffs.gap_rows,
        expand_gap=diffs.expand_gap,
        expand_file=diffs.expand_file,
        terminal_lines=terminal_lines,
        terminal_screen=terminal_screen,
        SAFE_IMAGE_TYPES=SAFE_IMAGE_TYPES,
    )
    env.filters.update(markdown=markdown_filter, pretty_json=pretty_json)
    return env


class Renderer:
    """Renders pages and fragments of the shared templates; one per application."""

    def __init__(self, env: Environment | None = None) -> None:
        self.env = env or make_environment()

    def page(self, template: str, **context: Any) -> str:
        return self.env.get_template(template).render(**context)

    def block(self, template: str, block: str, **context: Any) -> str:
        return render_block(self.env, template, block, **context)


class MessageDocs:
    """The streaming Markdown of every message of one session, shared by all its viewers."""

    RENDER_INTERVAL = 0.3
    """Seconds between Markdown catch-ups while a message streams (plain text shows in between)."""
    TAIL_LIMIT = 4096
    """Characters of plain-text tail after which Markdown catches up at once: text sent as a tail is sent
    again as HTML, so a fast stream must not build a long one."""

    def __init__(self) -> None:
        self._docs: dict[int, MarkdownStream] = {}
        self._updated: dict[int, float] = {}

    def blocks(self, entry: MessageEntry) -> list[str]:
        """The rendered blocks of a message seen before through :meth:`view`."""
        return self._docs[entry.seq].blocks

    def view(self, entry: MessageEntry, now: float) -> MessageView:
        doc = self._docs.get(entry.seq)
        if doc is None:
            doc = self._docs[entry.seq] = MarkdownStream()
        text = entry.text
        if not entry.streaming:
            doc.update(text, final=True)
        elif (
            now - self._updated.get(entry.seq, 0.0) >= self.RENDER_INTERVAL
            or len(text) - doc.committed > self.TAIL_LIMIT
        ):
            doc.update(text)
            self._updated[entry.seq] = now
        tail = text[doc.committed :]
        return MessageView(Markup(doc.html), tail, (doc.generation, len(doc.blocks), len(text)))
