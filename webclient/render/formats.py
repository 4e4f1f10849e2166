"""Labels, CSS classes and formats the page and the export show: a tool's kind, a status, a size, a cost.

Plain text out (autoescape applies where they are used); the names of known kinds and statuses are ACP's, and
anything an agent invents gets a generic look instead of a class of its own choosing.
"""

from __future__ import annotations

import base64
import json
from typing import Any
from urllib.parse import unquote, urlsplit

from jinja2.filters import do_urlencode as _jinja_urlencode

from webclient.render.text import TITLE_LIMIT, reveal_plain, scrub, shorten
from webclient.session.uploads import AUDIO_TYPES, IMAGE_TYPES
from webclient.viewmodel.entries import TurnUsage

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
    "paused": "Paused",
}
OPERATION_LABELS = {"add": "Added", "delete": "Deleted", "modify": "Modified", "move": "Moved", "copy": "Copied"}
KNOWN_OPTION_KINDS = frozenset({"allow_once", "allow_always", "reject_once", "reject_always"})
KNOWN_PLAN_STATUSES = frozenset({"pending", "in_progress", "completed", "cancelled"})
KNOWN_PLAN_PRIORITIES = frozenset({"high", "medium", "low"})
SAFE_IMAGE_TYPES = IMAGE_TYPES | {"image/avif", "image/bmp"}
"""Images the page shows: the types a prompt sends as images, and two more that browsers decode safely."""
SAFE_AUDIO_TYPES = AUDIO_TYPES | {"audio/wave", "audio/mp3", "audio/aac"}
"""Audio the page plays: the types a prompt sends as audio, two aliases agents use, and AAC."""
SAFE_URL_SCHEMES = frozenset({"http", "https", "mailto"})
RAW_JSON_LIMIT = 200_000
"""Characters of raw JSON at most (a tool call's input or output, a log line); the rest is left out, with a note."""


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


def operation_label(operation: str) -> str:
    """A v2 diff's file operation in words; an extension's (``_rename_dir``) as its name."""
    return OPERATION_LABELS.get(operation, operation.lstrip("_").replace("_", " ").capitalize() or "Changed")


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


NOTICE_LABELS = {"info": "Agent notice", "warning": "Agent warning", "error": "Agent error"}
COMPACTION_LABELS = {
    "in_progress": "Compacting the conversation…",
    "completed": "Conversation compacted",
    "failed": "Compacting the conversation failed",
    "cancelled": "Compacting the conversation was cancelled",
}


def notice_label(level: str, severity: str = "") -> str:
    """What an agent's notice is: its level, and a severity this client does not know, named."""
    label = NOTICE_LABELS.get(level, "Agent notice")
    return f"{label} ({severity.lstrip('_') or severity})" if severity else label


def compaction_label(status: str | None) -> str:
    """A compaction's state in words; a status this client does not know is named."""
    if status is None:
        return "Compacting the conversation"
    return COMPACTION_LABELS.get(status, f"Compacting the conversation: {status.lstrip('_') or status}")


def compaction_class(status: str | None) -> str:
    return status if status in COMPACTION_LABELS else "generic"


def turn_usage(usage: TurnUsage) -> str:
    """A turn's tokens: "1,234 tokens (900 in, 334 out, 20 thought, 5,000 cached read)"."""
    extra = {"thought": usage.thought, "cached read": usage.cached_read, "cached write": usage.cached_write}
    parts = [f"{usage.input:,} in", f"{usage.output:,} out"]
    parts += [f"{count:,} {name}" for name, count in extra.items() if count is not None]
    return f"{usage.total:,} token{'' if usage.total == 1 else 's'} ({', '.join(parts)})"
