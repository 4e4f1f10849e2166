"""The Jinja environment and the helpers templates use; everything that turns state into HTML text.

Autoescape is on everywhere: agent text, titles, paths and JSON reach the page escaped, and the only
markup we trust is what :mod:`webclient.render.markdown` produced (sanitised).
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from jinja2.filters import do_urlencode as _jinja_urlencode
from jinja2_fragments import render_block
from markupsafe import Markup, escape

from webclient.render import diffs
from webclient.render.markdown import MarkdownStream, render_markdown
from webclient.render.terminal import line_html
from webclient.render.text import TITLE_LIMIT, mixed_scripts, reveal, reveal_plain, scrub, shorten
from webclient.session.uploads import AUDIO_TYPES, IMAGE_TYPES
from webclient.viewmodel.entries import Entry, MessageEntry
from webclient.viewmodel.terminal_screen import Line, TerminalScreen

TEMPLATES_DIR = Path(__file__).resolve().parents[2] / "templates"

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
KNOWN_PLAN_STATUSES = frozenset({"pending", "in_progress", "completed"})
KNOWN_PLAN_PRIORITIES = frozenset({"high", "medium", "low"})
SAFE_IMAGE_TYPES = IMAGE_TYPES | {"image/avif", "image/bmp"}
"""Images the page shows: the types a prompt sends as images, and two more that browsers decode safely."""
SAFE_AUDIO_TYPES = AUDIO_TYPES | {"audio/wave", "audio/mp3", "audio/aac"}
"""Audio the page plays: the types a prompt sends as audio, two aliases agents use, and AAC."""
SAFE_URL_SCHEMES = frozenset({"http", "https", "mailto"})
RAW_JSON_LIMIT = 200_000
"""Characters of raw JSON at most (a tool call's input or output, a log line); the rest is left out, with a note."""


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


def plan_status_class(status: str) -> str:
    """A CSS class for a plan entry's status: the three ACP names their own, anything else one neutral look."""
    return status if status in KNOWN_PLAN_STATUSES else "other"


def plan_priority_class(priority: str) -> str:
    return priority if priority in KNOWN_PLAN_PRIORITIES else "other"


def urlencode(value: Any) -> str:
    """Jinja's ``urlencode`` for text that may hold lone surrogates (valid JSON, not UTF-8): they become
    U+FFFD instead of an error that would break the page for good."""
    if isinstance(value, dict):
        value = {scrub(str(key)): scrub(str(item)) for key, item in value.items()}
    elif isinstance(value, str):
        value = scrub(value)
    return str(_jinja_urlencode(value))


def tab_title(value: Any) -> str:
    """A title for the browser tab: invisible characters shown, cut to `TITLE_LIMIT` characters."""
    return shorten(reveal_plain(value), TITLE_LIMIT)


def safe_url(url: str | None) -> str | None:
    """``url`` if following it cannot run code (http, https, mailto); else None."""
    if not url:
        return None
    try:
        scheme = urlsplit(url.strip()).scheme.lower()
    except ValueError:
        return None
    return url if scheme in SAFE_URL_SCHEMES else None


def file_uri_path(uri: str) -> str | None:
    """The local path a ``file:`` URI names, or None for any other URI."""
    try:
        parts = urlsplit(uri)
    except ValueError:
        return None
    if (
        parts.scheme.lower() != "file"
        or parts.netloc.lower() not in ("", "localhost")
        or not parts.path.startswith("/")
    ):
        return None
    return unquote(parts.path)


def size(count: int) -> str:
    """A byte count as people read it: 512 B, 3.1 KB, 2.4 MB."""
    if count < 1024:
        return f"{count} B"
    if count < 1000 * 1024:
        return f"{count / 1024:.1f} KB"
    return f"{count / (1024 * 1024):.1f} MB"


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def pretty_json(value: Any) -> str:
    """Indented JSON for people (the page, the export), cut at a size a browser shows comfortably; lone
    surrogates become U+FFFD."""
    try:
        text = scrub(json.dumps(value, indent=2, ensure_ascii=False, default=repr))
    except Exception:  # circular or otherwise odd: show what Python sees
        text = scrub(repr(value))
    if len(text) > RAW_JSON_LIMIT:
        text = f"{text[:RAW_JSON_LIMIT]}\n… ({len(text):,} characters in all)"
    return text


def terminal_lines(lines: Iterable[Line]) -> Markup:
    """Finished terminal lines as HTML, each ending with a newline (they sit in a ``<pre>``)."""
    return Markup("".join(f"{line_html(line)}\n" for line in lines))


def terminal_screen(screen: TerminalScreen) -> Markup:
    """The part of a terminal that may still change: its visible screen."""
    return Markup("\n".join(line_html(line) for line in screen.screen()))


def tokens(count: int) -> str:
    """A token count as people say it: 950, 12k, 1.2M."""
    if count < 1000:
        return str(count)
    if count < 1_000_000:
        return f"{count / 1000:.1f}k".replace(".0k", "k") if count < 10_000 else f"{count // 1000}k"
    return f"{count / 1_000_000:.1f}M".replace(".0M", "M")


CURRENCY_SYMBOLS = {"USD": "$", "EUR": "€", "GBP": "£", "JPY": "¥"}


def money(amount: float, currency: str | None) -> str:
    """A cost with its currency (ISO 4217 code), e.g. $0.42 or 0.42 CHF."""
    code = (currency or "").upper()
    if code in CURRENCY_SYMBOLS:
        return f"{CURRENCY_SYMBOLS[code]}{amount:,.2f}"
    return f"{amount:,.2f} {code[:12]}".strip()


def markdown_filter(text: str) -> Markup:
    return Markup(render_markdown(text))


@dataclass(slots=True)
class MessageView:
    """What a message looks like now: finished blocks, the rest rendered as of the last catch-up, and the
    text that arrived since (shown as it is, at the end of the rendered rest, until the next catch-up)."""

    html: Markup
    live: Markup
    """The unfinished rest as Markdown, with the raw text after it in ``<span id="…-tail">``."""
    raw: str
    state: tuple[int, int, int, int]
    """(markdown generation, blocks rendered, characters caught up, source characters shown): what a page holds."""


_CLOSING_TAGS = re.compile(r"(?:</[a-z0-9]+>\s*)+$")


def _split_for_tail(html: str) -> tuple[str, str]:
    """``html`` cut where the raw tail goes: inside its last element, so new text continues the paragraph (or
    code block) it belongs to instead of starting a line of its own."""
    end = _CLOSING_TAGS.search(html)
    if end is None or html[end.start() + 2 : end.start() + 4] in ("td", "th"):
        return html, ""  # text typed into a table cell would resize every column: keep it below
    return html[: end.start()], html[end.start() :]


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
        plan_status_class=plan_status_class,
        plan_priority_class=plan_priority_class,
        mixed_scripts=mixed_scripts,
        safe_url=safe_url,
        build_diff=diffs.build_diff,
        diff_layout=diffs.diff_layout,
        gap_rows=diffs.gap_rows,
        expand_gap=diffs.expand_gap,
        expand_file=diffs.expand_file,
        terminal_lines=terminal_lines,
        terminal_screen=terminal_screen,
        tokens=tokens,
        file_uri_path=file_uri_path,
        size=size,
        b64=b64,
        SAFE_AUDIO_TYPES=SAFE_AUDIO_TYPES,
        money=money,
        SAFE_IMAGE_TYPES=SAFE_IMAGE_TYPES,
        UPLOAD_IMAGE_TYPES=IMAGE_TYPES,
        UPLOAD_AUDIO_TYPES=AUDIO_TYPES,
    )
    env.filters.update(
        markdown=markdown_filter,
        pretty_json=pretty_json,
        visible=reveal,
        visible_text=reveal_plain,
        tab_title=tab_title,
        urlencode=urlencode,
    )
    return env


class Renderer:
    """Renders pages and fragments of the shared templates; one per application."""

    def __init__(self, env: Environment | None = None) -> None:
        self.env = env or make_environment()

    def page(self, template: str, **context: Any) -> str:
        return scrub(self.env.get_template(template).render(**context))

    def block(self, template: str, block: str, **context: Any) -> str:
        return scrub(render_block(self.env, template, block, **context))


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
        self._live: dict[int, tuple[int, str, str]] = {}
        """Per message: source characters caught up, and the unfinished rest rendered then, cut where the raw
        text goes (cut once per catch-up, not once per frame)."""

    def keep(self, first_seq: int) -> None:
        """Forget the messages numbered below ``first_seq`` (the thread dropped them to bound its memory)."""
        for cache in (self._docs, self._updated, self._live):
            for seq in [seq for seq in cache if seq < first_seq]:
                del cache[seq]

    def blocks(self, entry: MessageEntry) -> list[str]:
        """The rendered blocks of a message seen before through :meth:`view`."""
        return self._docs[entry.seq].blocks

    def view(self, entry: MessageEntry, now: float) -> MessageView:
        doc = self._docs.get(entry.seq)
        if doc is None:
            doc = self._docs[entry.seq] = MarkdownStream()
        text = entry.text
        caught_up, before, after = self._live.get(entry.seq, (0, "", ""))
        if not entry.streaming:
            doc.update(text, final=True)
            caught_up, before, after = len(text), "", ""
        elif now - self._updated.get(entry.seq, 0.0) >= self.RENDER_INTERVAL or len(text) - caught_up > self.TAIL_LIMIT:
            doc.update(text)
            self._updated[entry.seq] = now
            # Markdown drops a paragraph's trailing space or newline: keep it in the raw text that follows.
            rest = doc.tail.rstrip()
            caught_up = len(text) - (len(doc.tail) - len(rest))
            before, after = _split_for_tail(render_markdown(rest)) if rest else ("", "")
        self._live[entry.seq] = (caught_up, before, after)
        raw = text[caught_up:]
        span = f'<span class="md-tail" id="{dom_id(entry)}-tail">{escape(raw)}</span>'
        return MessageView(
            Markup(doc.html),
            Markup(before + span + after),
            raw,
            (doc.generation, len(doc.blocks), caught_up, len(text)),
        )
