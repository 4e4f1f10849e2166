"""What a page holds of each tool-call card, and the fragments that bring one up to date: what changed, not the card.

An update of a tool call is most often one small thing: its status, its title, a new line of output (a content item
that grew, or a new one), a new location. The page gets that part alone, swapped by id into the card it holds
(``templates/_tool_call.html`` has a block and an id for each); the whole card only when its structure changed (a
part appeared or went, an item became something of another kind, a question was asked or answered, a subagent is
nested in it) or the page does not hold it. Nothing is rendered to find out what changed: a card's record is what
was sent (its status, title, locations and content items, the items being the view model's immutable objects),
compared with the card as it is now.
"""

from __future__ import annotations

from collections.abc import Container, Sequence
from dataclasses import dataclass
from typing import Any

from markupsafe import Markup

from webclient.render.rendering import Renderer
from webclient.session.core import Session
from webclient.viewmodel.content import Location, TerminalRef, ToolContent
from webclient.viewmodel.entries import ToolCall

CARD = "_tool_call.html"
"""The card's template: its blocks are the parts sent alone."""
WRAPPERS = "_live.html"
"""The wrappers that append new items to a part (blocks ``card_items`` and ``card_locations``)."""


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

    def shown(self, call: ToolCall) -> None:
        """The page was sent the card whole, as it is now."""
        self._cards[call.seq] = CardShown.of(call)

    def update(self, call: ToolCall, held: Container[int]) -> str | None:
        """The fragments that turn the card the page holds into ``call`` as it is now ("" when nothing it shows
        changed), or None when only the whole card will do. ``held``: the seqs of the entries the page holds (the
        records of the others are let go of now and then)."""
        if len(self._cards) > 2 * self.PRUNE_AT:
            self._cards = {seq: card for seq, card in self._cards.items() if seq in held}
        shown = self._cards.get(call.seq)
        if shown is None or self.session.subagents.nested_in(call):
            return None  # unknown to this page, or showing subagents whose every change comes as the card's
        now = CardShown.of(call)
        if now.frame != shown.frame:
            return None
        content = _changes(shown.content, now.content)
        locations = _changes(shown.locations, now.locations)
        if content is None or locations is None:
            return None
        if any(isinstance(item, TerminalRef) for item in now.content[content[1] :]):
            return None  # the live view follows an embedded terminal from when it renders the card
        parts: list[str] = []
        if now.head != shown.head:
            parts.append(self._part(call, "tool_head", "head"))
        elif now.title != shown.title:
            parts.append(self._part(call, "tool_title", "title"))
        changed, first_new = locations
        if changed:
            parts.append(self._part(call, "tool_locations", "locations"))
        elif first_new < len(now.locations):
            items = self._part(call, "tool_location_items", None, locations=now.locations[first_new:])
            parts.append(self.renderer.block(WRAPPERS, "card_locations", entry=call, items=Markup(items)))
        changed, first_new = content
        for index in changed:
            parts.append(self._part(call, "tool_items", "item", items=now.content[index : index + 1], first=index))
        if first_new < len(now.content):
            items = self._part(call, "tool_items", None, items=now.content[first_new:], first=first_new)
            parts.append(self.renderer.block(WRAPPERS, "card_items", entry=call, items=Markup(items)))
        if now.raw != shown.raw:
            parts.append(self._part(call, "tool_raw", "raw"))
        self._cards[call.seq] = now
        return "".join(parts)

    def _part(self, call: ToolCall, block: str, oob_part: str | None, **context: Any) -> str:
        """A block of the card (``oob_part``: the element that swaps itself in by id; None: the caller wraps it)."""
        return self.renderer.block(
            CARD, block, entry=call, session=self.session, oob_part=oob_part, **context, **self.context
        )


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
