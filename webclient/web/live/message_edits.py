"""A streaming message's live rest, sent as edits of the HTML the page holds: each byte of text once.

A page shows a streaming message as its finished Markdown blocks (never sent again) and its live rest: the HTML
of what may still change. The page keeps that rest as two strings, ``before`` the place where text arrives and
``after`` it (the tail's cursor and the closing tags), and a frame sends an :class:`Edit` of them: cut so many
characters from the end of ``before``, add this HTML, move so many characters from the start of ``before`` into
the finished blocks, and, only when it changed, the new ``after``. ``static/js/live-text.js`` applies it and draws
the rest again from the two strings. So prose grows by what it gained; a Markdown construct that closes (a code
span, bold, a link) costs the cut of its literal text and the add of its HTML; a block that is finished moves,
it is not sent again.

An edit travels as a record of the page's compact form, not as HTML for htmx: the notifications of a paced agent
are a few words each, and an out-of-band wrapper would cost more bytes than the words. A socket message holds
records or HTML, never both: ``RECORD id FIELD cut FIELD moved FIELD added [FIELD after]`` for each record, where
id is the message's element id (its number alone for ``entry-N``), cut and moved count UTF-16 code units (the
page's string lengths; empty for none) and a cut of ``r`` replaces the whole rest.
"""

from __future__ import annotations

from dataclasses import dataclass

from webclient.render.text import scrub

RECORD = "\x1e"
"""Starts each record of a compact socket message (the page tells one from HTML by its first character)."""
FIELD = "\x1f"
ENTRY = "entry-"
"""An entry's id without a scope starts so: a record names it by its number alone."""
REPLACE = "r"
"""The cut of a record that replaces the whole rest (the page's rest is not known)."""
_SEPARATORS = str.maketrans({RECORD: "\ufffd", FIELD: "\ufffd"})


@dataclass(frozen=True, slots=True)
class Held:
    """A live rest as a page holds it (`before` the place where text arrives, `after` it)."""

    before: str
    after: str


def units(text: str) -> int:
    """``text``'s length as the page counts it (UTF-16 code units): characters past U+FFFF count twice."""
    return len(text) if text.isascii() else len(text.encode("utf-16-le")) // 2


def common_prefix(a: str, b: str) -> int:
    """The length of the longest common prefix of ``a`` and ``b``, comparing halves in C, not characters in Python."""
    low, high = 0, min(len(a), len(b))
    if a[:high] == b[:high]:
        return high
    while low < high:  # a[:low] == b[:low] and a[:high] != b[:high]
        middle = (low + high + 1) // 2
        if a[low:middle] == b[low:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def storable(html: str) -> str:
    """``html`` as a record may carry it: without the two separators (an agent's text may hold them; they are not
    text anyone reads) and without lone surrogates (which UTF-16 cannot count and a socket cannot send)."""
    html = scrub(html)
    return html.translate(_SEPARATORS) if RECORD in html or FIELD in html else html


def edit(dom_id: str, held: Held | None, finished: str, before: str, after: str) -> tuple[str, Held]:
    """The record that turns the rest a page holds (``held``; None when it is not known, e.g. just rendered whole)
    into ``finished`` (new finished blocks, which the page moves out of the rest) + ``before`` + ``after``; "" when
    nothing changed. Returns the record and the rest the page holds then."""
    whole, after = storable(finished + str(before)), storable(str(after))
    now = Held(whole[len(finished) :], after)
    moved = str(units(finished)) if finished else ""
    target = dom_id.removeprefix(ENTRY)
    if held is None:
        return RECORD + FIELD.join((target, REPLACE, moved, whole, after)), now
    same = common_prefix(held.before, whole)
    if not finished and same == len(held.before) == len(whole) and after == held.after:
        return "", now
    cut = held.before[same:]
    fields = [target, str(units(cut)) if cut else "", moved, whole[same:]]
    if after != held.after:
        fields.append(after)
    return RECORD + FIELD.join(fields), now
