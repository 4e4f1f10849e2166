"""What a page holds of each tool-call card, and the fragments that bring one up to date: what changed, not the card.

An update of a tool call is most often one small thing: its status, its title, a new line of output (a content item
that grew, or a new one), a new location. The page gets that part alone, swapped by id into the card it holds
(``templates/_tool_call.html`` has a block and an id for each; its first locations and its first content come as
those parts alone); the whole card only when its structure changed (a part went, an item became something of another
kind, a question was asked or answered, a subagent is nested in it) or the page does not hold it. Nothing is rendered
to find out what changed: a card's record is what was sent (its status, title, locations and content items, the
items being the view model's immutable objects), compared with the card as it is now.

The smallest changes travel as records of the page's compact form (``message_edits``: a socket message of records
starts with ``RECORD``, fields are split by ``FIELD``), which ``static/js/card-status.js`` applies; the first field
is a letter and the card's number (``entry-N``), so that no message's id reads so:

* ``tN FIELD text``: the title, as text, or ``tN FIELD cut FIELD added``: cut so many characters from its end and
  add these (a title the page would show with markers for invisible characters, or one that holds a separator, goes
  as its HTML part);
* ``sN FIELD status FIELD label``: a status of the known ones when nothing else of the head changed (the page sets
  the card's, the head's and the chip's status and the chip's text);
* ``iN FIELD k FIELD edits``: an edit of the inner HTML of the card's k-th content item (our template's, escaped):
  ``r FIELD html`` replaces it (the page does not hold it as a string), else ``=length`` (of the string the page
  holds) and one or two splices ``at FIELD cut FIELD added`` applied in turn (counts in UTF-16 code units, as the page
  counts): a window of output that slid (lines gone at the top, lines added at the bottom) costs its new lines, not
  the window.
"""

from __future__ import annotations

import re
from collections.abc import Container, Sequence
from dataclasses import dataclass, field
from typing import Any

from markupsafe import Markup, escape

from webclient.render.formats import KNOWN_STATUSES
from webclient.render.rendering import Renderer
from webclient.render.text import reveal, scrub
from webclient.session.core import Session
from webclient.viewmodel.content import Location, TerminalRef, ToolContent
from webclient.viewmodel.entries import ToolCall
from webclient.web.live.message_edits import FIELD, RECORD, common_prefix, storable, units

CARD = "_tool_call.html"
"""The card's template: its blocks are the parts sent alone."""
WRAPPERS = "_live.html"
"""The wrappers that add new parts to a card (blocks ``card_items``, ``card_locations``, ``card_content`` and
``card_located``)."""
REPLACE = "r"
"""The first field of an item's edit that replaces its whole inner HTML."""
HOLDS = "="
"""Starts the first field of an item's splices: the length of the string they apply to (a page that holds another
leaves the item as it is rather than splice HTML it does not know)."""
SLIDE_TRIES = 16
"""At most so many places are tried where the output the page holds may go on in the new (a window that slid)."""


@dataclass(slots=True)
class CardShown:
    """What the page holds of one card: enough to tell which of its parts an update changed."""

    frame: tuple[object, ...]
    """What only the whole card may change: kind, the question asked and its state, where the raw JSON is."""
    head: tuple[object, ...]
    """What the head shows besides the title: status, tool name, Stop or "Stopping…"."""
    title: str | None
    locations: tuple[Location, ...]
    content: tuple[ToolContent, ...]
    raw: tuple[bool, bool]
    """Whether the raw input and output are there to open."""
    items: dict[int, str] = field(default_factory=dict)
    """The inner HTML of content items (by index from 0) as the page holds it as a string (from the HTML that brought
    them, or the edit since)."""

    @classmethod
    def of(cls, call: ToolCall) -> CardShown:
        permission = call.permission
        asked = (permission, permission.state, permission.chosen, permission.rule, permission.by) if permission else ()
        return cls(
            frame=(call.kind, asked, call.raw_input is not None or call.raw_output is not None or bool(call.raw)),
            head=(call.effective_status, call.name, call.stopping, call.can_cancel),
            title=call.title,
            locations=tuple(call.locations),
            content=tuple(call.content),
            raw=(call.raw_input is not None, call.raw_output is not None),
        )


class CardUpdates:
    """The tool-call cards one page holds, and the fragments of their changes."""

    PRUNE_AT = 500
    """Records past twice this many are trimmed to the cards the page holds (the page lets go of cards it scrolled
    past or a resync replaced without this object being told)."""

    def __init__(self, renderer: Renderer, session: Session, context: dict[str, Any]) -> None:
        self.renderer = renderer
        self.session = session
        self.context = context
        self._cards: dict[int, CardShown] = {}

    def shown(self, call: ToolCall, html: str) -> None:
        """The page was sent the card whole, as it is now, in ``html`` (its items' inner HTML the page holds from
        there as strings, as ``card-status.js`` reads them from the socket's message)."""
        card = self._cards[call.seq] = CardShown.of(call)
        card.items.update(held_items(call, html))

    def update(self, call: ToolCall, held: Container[int]) -> list[str] | None:
        """The fragments and records that turn the card the page holds into ``call`` as it is now (none when nothing
        it shows changed), or None when only the whole card will do. ``held``: the seqs of the entries the page holds
        (the records of the others are let go of now and then)."""
        if len(self._cards) > 2 * self.PRUNE_AT:
            self._cards = {seq: card for seq, card in self._cards.items() if seq in held}
        shown = self._cards.get(call.seq)
        if shown is None or call.scope or self.session.subagents.nested_in(call):
            return None  # unknown to this page, a subagent's (inside a card), or showing subagents whose every change
            # comes as the card's
        now = CardShown.of(call)
        if now.frame != shown.frame:
            return None
        appears = not shown.content and bool(now.content)
        content = ([], 0) if appears else _changes(shown.content, now.content)
        located = not shown.locations and bool(now.locations)
        locations = ([], 0) if located else _changes(shown.locations, now.locations)
        if content is None or locations is None:
            return None
        if any(isinstance(item, TerminalRef) for item in now.content[content[1] :]):
            return None  # the live view follows an embedded terminal from when it renders the card
        if appears and call.permission is not None:
            return None  # the content goes before the question, which has no id to put it by
        parts: list[str] = []
        target = str(call.seq)  # a record names the card by its number (entry-N)
        if now.head != shown.head:
            status = _status_record(target, shown.head, now.head)
            parts.append(status or self._part(call, "tool_head", "head"))
        if now.title != shown.title and (now.head == shown.head or parts[-1].startswith(RECORD)):
            parts.append(_title_record(target, shown.title, now.title) or self._part(call, "tool_title", "title"))
        changed, first_new = locations
        if located:
            block = self._part(call, "tool_locations", None)
            parts.append(self.renderer.block(WRAPPERS, "card_located", entry=call, locations=Markup(block)))
        elif changed:
            parts.append(self._part(call, "tool_locations", "locations"))
        elif first_new < len(now.locations):
            items = self._part(call, "tool_location_items", None, locations=now.locations[first_new:])
            parts.append(self.renderer.block(WRAPPERS, "card_locations", entry=call, items=Markup(items)))
        if appears:
            block = self._part(call, "tool_content", None)
            now.items.update(held_items(call, block))
            wrapped = self.renderer.block(
                WRAPPERS, "card_content", entry=call, before=bool(now.frame[2]), content=Markup(block)
            )
            parts.append(wrapped)
        else:
            changed, first_new = content
            for index in changed:
                inner = self._part(call, "tool_item", None, item=now.content[index], item_index=index + 1, call=call)
                inner = storable(inner)
                parts.append(_item_record(target, index, shown.items.get(index), inner))
                now.items[index] = inner
            now.items.update((index, html) for index, html in shown.items.items() if index not in now.items)
            if first_new < len(now.content):
                items = self._part(call, "tool_items", None, items=now.content[first_new:], first=first_new)
                now.items.update(held_items(call, items))
                parts.append(self.renderer.block(WRAPPERS, "card_items", entry=call, items=Markup(items)))
        if now.raw != shown.raw:
            parts.append(self._part(call, "tool_raw", "raw"))
        self._cards[call.seq] = now
        return parts

    def _part(self, entry: ToolCall, block: str, oob_part: str | None, **context: Any) -> str:
        """A block of the card (``oob_part``: the element that swaps itself in by id; None: the caller wraps it)."""
        context = {"entry": entry, "session": self.session, "oob_part": oob_part, **self.context, **context}
        return self.renderer.block(CARD, block, **context)


def _changes(before: Sequence[object], now: Sequence[object]) -> tuple[list[int], int] | None:
    """The indices of the items that changed in place and where the new ones start, or None when the list changed
    shape (emptied, filled, shortened, or an item became something of another kind, or a terminal)."""
    if bool(before) != bool(now) or len(now) < len(before):
        return None
    changed = []
    for index, (old, new) in enumerate(zip(before, now, strict=False)):
        if old is new or old == new:
            continue
        if type(old) is not type(new) or isinstance(new, TerminalRef):
            return None
        changed.append(index)
    return changed, len(before)


ITEM_HTML = re.compile(r'<div class="tool-item" id="entry-([0-9]+)-item-([0-9]+)">(.*?)<!----></div>', re.S)
"""A content item of a card of the thread in HTML sent to the page: its inner HTML up to the empty comment our
template ends it with (``card-status.js`` reads the same from the socket's messages)."""


def held_items(call: ToolCall, html: str) -> dict[int, str]:
    """The inner HTML of ``call``'s content items (by index from 0) in ``html``, as the page will hold them."""
    if call.scope or 'class="tool-item"' not in html:
        return {}
    seq = str(call.seq)
    return {int(k) - 1: inner for number, k, inner in ITEM_HTML.findall(html) if number == seq}


def _record(*fields: str) -> str:
    return RECORD + FIELD.join(fields)


def _title_text(title: str | None) -> str | None:
    """The title as the page shows it, when that is text alone and a record can carry it as it is (None: the page
    shows markers of invisible characters in it, or it holds a separator)."""
    text = scrub(title or "Tool call")
    return text if str(reveal(text)) == str(escape(text)) and storable(text) == text else None


def _title_record(target: str, before: str | None, title: str | None) -> str:
    """The record of a new title (what it kept of the one before, as text: the numbers of "working (7)" that went
    and came), or "" when it must go as its HTML part."""
    text, held = _title_text(title), _title_text(before)
    if text is None:
        return ""
    if held is not None and (kept := common_prefix(held, text)):
        cut = held[kept:]
        return _record(f"t{target}", str(units(cut)) if cut else "", text[kept:])
    return _record(f"t{target}", text)


def _status_record(target: str, before: tuple[object, ...], now: tuple[object, ...]) -> str:
    """The record of a new status when nothing else of the head changed and it is one of the known (its label and
    class fixed), else ""."""
    status = now[0]
    if before[1:] != now[1:] or not isinstance(status, str) or status not in KNOWN_STATUSES:
        return ""
    return _record(f"s{target}", status, KNOWN_STATUSES[status])


def _item_record(target: str, index: int, held: str | None, html: str) -> str:
    """The record that turns an item's inner HTML from ``held`` (None: the page does not hold it as a string) into
    ``html`` (storable): one or two splices, or the whole when that is no longer."""
    whole = _record(f"i{target}", str(index + 1), REPLACE, html)
    if held is None:
        return whole
    fields = [f"i{target}", str(index + 1), f"{HOLDS}{units(held)}"]
    for at, cut, added in splices(held, html):
        fields += [str(at), str(cut) if cut else "", added]
    edit = _record(*fields)
    return edit if len(edit) < len(whole) else whole


def splices(before: str, after: str) -> list[tuple[int, int, str]]:
    """Splices (at, cut, added; in UTF-16 code units, each applied to the string the last one left) that turn
    ``before`` into ``after``: what differs between their common start and end, as one splice, or as two when the
    end of ``before``'s middle is where ``after``'s middle starts (a window of lines that slid: a cut at the top,
    lines added at the bottom)."""
    start = common_prefix(before, after)
    end = common_prefix(before[start:][::-1], after[start:][::-1])
    old, new = before[start : len(before) - end], after[start : len(after) - end]
    at = units(before[:start])
    if old and new:
        anchor = new[: min(len(new), 24)]
        found = old.find(anchor, 1)
        for _ in range(SLIDE_TRIES):
            if found < 0:
                break
            kept = old[found:]
            if new.startswith(kept):
                return [(at, units(old[:found]), ""), (at + units(kept), 0, new[len(kept) :])]
            found = old.find(anchor, found + 1)
    return [(at, units(old), new)]
