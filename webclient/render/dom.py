"""The page's element ids, in one place: Python (out-of-band fragments) and templates (as globals) use these.

An id names what the server updates later, so both sides must spell it the same: an entry is ``entry-<seq>``,
and the parts inside it that a frame targets (the Markdown of a message, its live rest and raw tail, an embedded
terminal and its lines and screen, a diff) are that id with a suffix.
"""

from __future__ import annotations

from webclient.viewmodel.entries import Entry


def dom_id(entry: Entry) -> str:
    """The element of an entry (its card): every fragment about it targets this id or one made from it."""
    return f"{entry.scope}entry-{entry.seq}"


def markdown_id(entry: Entry) -> str:
    """A message's finished Markdown blocks (new blocks are appended to it)."""
    return f"{dom_id(entry)}-md"


def live_id(entry: Entry) -> str:
    """A message's unfinished rest, rendered as of the last catch-up (replaced whole)."""
    return f"{dom_id(entry)}-live"


def tail_id(entry: Entry) -> str:
    """The raw text of a message that arrived since the last catch-up (new text is appended to it)."""
    return f"{dom_id(entry)}-tail"


def terminal_id(entry: Entry, number: int) -> str:
    """Terminal ``number`` as the card of ``entry`` embeds it (a terminal may show in several cards)."""
    return f"{dom_id(entry)}-term-{number}"


def terminal_lines_id(terminal: str) -> str:
    """The finished lines of the embedded terminal ``terminal`` (an id from :func:`terminal_id`)."""
    return f"{terminal}-lines"


def terminal_screen_id(terminal: str) -> str:
    """The visible screen of the embedded terminal ``terminal``, which may still change."""
    return f"{terminal}-screen"


def entry_diff_id(entry: Entry, index: int) -> str:
    """The ``index``-th diff (from 1) in the card of ``entry``."""
    return f"{dom_id(entry)}-diff-{index}"


GLOBALS = {
    "dom_id": dom_id,
    "markdown_id": markdown_id,
    "live_id": live_id,
    "tail_id": tail_id,
    "terminal_id": terminal_id,
    "terminal_lines_id": terminal_lines_id,
    "terminal_screen_id": terminal_screen_id,
    "entry_diff_id": entry_diff_id,
}
"""The functions above under the names templates call them by."""
