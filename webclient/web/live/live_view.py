"""One class: LiveView, one browser connection to a session, which knows what the page holds and sends what changed.

Nothing is queued per connection. The session reports *which* parts changed; this object keeps them
in an ordered set and, when it may send (the first change after a quiet spell at once, then at most
every ``MIN_INTERVAL``), renders those parts from the current state into one frame of out-of-band
fragments. A streaming message's rest is edited (`message_edits`: what it gained, in the page's compact records;
finished Markdown blocks move, they are not sent again), and every other entry is re-rendered whole and swapped by
id.

A tool-call card the page holds is the exception: it gets only the parts of it that changed (`card_updates`).

A page holds a *window* of the thread: a (re)sync sends the newest ``WINDOW`` entries, and a "Show
earlier" sentinel at the top asks for the ``WINDOW`` before them when it scrolls into view. Every
render is therefore bounded by the window, never by the thread. This object knows which entries the
page holds: new entries are appended, entries it holds are updated, others are skipped. A slow browser
never makes the server hold more than ``RESYNC_AT`` changed parts; past that, or when more than a
window of new entries arrives within ``RESYNC_PAUSE``, the page gets the newest window instead (and
the next frame waits ``RESYNC_PAUSE``). A flood therefore costs about two windows a second, however
fast it is and however long the thread; what the page skipped is there under "Show earlier".
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

from markupsafe import Markup

from webclient.render.dom import PAGE_IDS, dom_id, terminal_id
from webclient.render.message_docs import MessageDocs, MessageView, Progress, earlier_part
from webclient.render.panels import file_panel
from webclient.render.rendering import Renderer
from webclient.render.text import scrub
from webclient.session.core import Session
from webclient.viewmodel.content import TerminalRef
from webclient.viewmodel.entries import Entry, MessageEntry, ToolCall
from webclient.viewmodel.events import Change, EntryChanged, Region, TerminalChanged
from webclient.viewmodel.terminals import TerminalView
from webclient.viewmodel.thread import Thread
from webclient.web.live.card_updates import CardUpdates
from webclient.web.live.message_edits import RECORD, Held, edit
from webclient.web.live.page_holds import PageHolds

PAGE = "session.html"
FRAGMENTS = "_live.html"
"""The wrappers of the fragments below (appends, Markdown blocks, raw text, terminal output, the thread)."""

TerminalState = tuple[int, int, str]
"""(lines dropped when it was last rendered whole, lines sent in all, state) of a terminal in one card."""


def composer_nonce() -> str:
    """A fresh token for the prompt form: a send replayed after a reconnect is recognised by it."""
    return secrets.token_urlsafe(12)


class LiveView:
    """Pushes a session's changes to one web socket, in order, coalesced, with bounded memory."""

    MIN_INTERVAL = 0.05
    RESYNC_AT = 1000
    WINDOW = 30
    """Entries a page opens on (about the last turns), a resync sends, and one "Show earlier" adds: a page opens at
    its end in the same time whatever the thread's length, and loads earlier entries as it scrolls up."""
    WINDOW_CHARS = 200_000
    """Characters of messages a window holds at most (a long message counting as the end a page shows of it): a
    window of long answers holds fewer entries (at least one), so a page is bounded in bytes too."""
    RESYNC_PAUSE = 0.5
    """Seconds the next frame waits after a resync the page's lag forced: a page that cannot keep up gets the
    newest window twice a second, not a window every frame."""
    SLICE = 0.004
    """Seconds of rendering after which a frame lets the event loop run (a window of cards takes ~50 ms)."""
    TERMINAL_REDRAW_AFTER = 1000
    """Lines a terminal may drop from its front before a page re-renders it whole (until then the page keeps
    them: re-sending thousands of lines for every dropped one would cost far more)."""

    MAX_PARTS_ASKED = 2
    """Requests for parts of long messages kept until the next frame (each is rendered once, in order; about 50 ms
    of Markdown each, so a page asking without end costs at most two a frame); more are dropped."""

    MAX_REPLIES = 8
    """Replies to this page alone (`reply`) waiting for the next frame; older ones are dropped past it."""

    SESSION_REGIONS = (Region.PLAN, Region.QUEUE, Region.COMMANDS, Region.CONTROLS, Region.CHANGES)
    """Page parts besides the header and the thread that a reconnecting page must get again."""

    def __init__(
        self,
        session: Session,
        renderer: Renderer,
        docs: MessageDocs,
        send: Callable[[str], Awaitable[None]],
        context: dict[str, Any],
    ) -> None:
        self.session = session
        self.renderer = renderer
        self.docs = docs
        self.send = send
        self.context = context
        self.dirty: dict[Change, None] = {}
        self.wake = asyncio.Event()
        self.needs_resync = True
        self._shown: dict[int, Progress | None] = {}
        """The entries the page holds (and, for messages, how much of them)."""
        self._held: dict[int, Held] = {}
        """The live rest of each streaming message as the page holds it, once a frame edited it (`message_edits`)."""
        self._unfilled: dict[int, tuple[MessageEntry, MessageView]] = {}
        """Streaming messages this frame rendered whole with an empty rest, which an edit then fills (so that the
        page, knowing the rest's HTML, can edit it: it could not read it back from what it parsed)."""
        self._newest = 0
        """The newest seq the page has or skipped: a higher one is a new entry, to append."""
        self._earlier: int | None = None
        """The page asked for the window of entries before this seq."""
        self._earlier_parts: dict[int, int] = {}
        """The page asked for the part of a long message (by seq) before this character."""
        self._oldest = 0
        """The seq of the oldest entry the page holds: only a request for the entries before it is served (a
        request made twice, or by a sentinel a resync replaced, would add entries the page has)."""
        self._latest = 0
        """The seq of the newest entry the page holds, when it does not hold the thread's end (it opened on an older
        entry): new entries are not appended then, and only a request for the entries after it is served."""
        self._at_end = True
        """The page holds the thread's end: new entries are appended to it."""
        self._later: int | None = None
        """The page asked for the window of entries after this seq."""
        self._paused_until = 0.0
        self._behind = False
        """The page fell behind (too many changed parts): the resync it gets is followed by a pause."""
        self._slice_started = 0.0
        self._burst_started = 0.0
        self._burst = 0
        """New entries appended since ``_burst_started``: at most a window per ``RESYNC_PAUSE``."""
        self._terminals_shown: dict[tuple[int, int], TerminalState] = {}
        self._cards = CardUpdates(renderer, session, context)
        """What the page holds of each tool-call card: an update sends what changed in it."""
        self.follow = False
        """Whether this page's side panel follows the agent's latest location."""
        self._holds: PageHolds | None = None
        """What the page held when rendered, whose watcher ``run`` stops once it watches the session itself."""
        self._replies: list[str] = []
        """Fragments for this page only (what its own action came to), sent with the next frame."""

    def adopt(self, holds: PageHolds) -> None:
        """Start from what the page holds (`webclient.web.live.page_holds`): no resync, only what changed since its
        render. The record's changes are this view's from now on (the same dict: changes until ``run`` watches the
        session go on being noted there)."""
        self._holds = holds
        self._shown = holds.shown
        self._newest, self._oldest, self._latest = holds.newest, holds.oldest, holds.latest
        self._at_end = holds.latest >= holds.newest
        self.dirty = holds.dirty
        self.needs_resync = holds.overflowed

    @classmethod
    def window(cls, thread: Thread, before: int | None = None) -> list[Entry]:
        """The newest entries (numbered below ``before``) a page opens on, or one "Show earlier" adds: ``WINDOW`` at
        most, and within ``WINDOW_CHARS`` of messages."""
        return _within(thread.latest(cls.WINDOW, before=before), cls.WINDOW_CHARS, newest_first=True)

    @classmethod
    def window_after(cls, thread: Thread, after: int) -> list[Entry]:
        """The entries after ``after`` that one "Show later" adds: as a window, from the other end."""
        return _within(thread.following(cls.WINDOW, after), cls.WINDOW_CHARS, newest_first=False)

    def mark(self, change: Change) -> None:
        """Note a change (called by the session for every change: keep it trivial)."""
        if not self.needs_resync:
            self.dirty[change] = None
            if len(self.dirty) > self.RESYNC_AT:  # the page is far behind: it gets the newest window instead
                self.needs_resync = self._behind = True
                self.dirty.clear()
        self.wake.set()

    def earlier(self, before: int) -> None:
        """The page scrolled to its top: send it the window of entries before ``before`` (in order with frames)."""
        self._earlier = before
        self.wake.set()

    def later(self, after: int) -> None:
        """The page, opened on an older entry, scrolled to its bottom: send it the window of entries after ``after``."""
        self._later = after
        self.wake.set()

    def message_earlier(self, seq: int, before: int) -> None:
        """The page asked for the part of the long message ``seq`` before character ``before`` (`earlier_part`)."""
        if len(self._earlier_parts) < self.MAX_PARTS_ASKED:
            self._earlier_parts[seq] = before
            self.wake.set()

    def reply(self, fragment: str) -> None:
        """Send ``fragment`` (out-of-band HTML) to this page alone with the next frame: what an action of this
        page's person came to, which no one else sees and the session does not journal."""
        self._replies.append(fragment)
        del self._replies[: -self.MAX_REPLIES]
        self.wake.set()

    def resync(self) -> None:
        """Re-render the page's window (after a change of how it is drawn, such as the diff layout)."""
        self.needs_resync = True
        self.wake.set()

    async def run(self) -> None:
        """Send until cancelled: a resync first (so a reconnect loses nothing), or only what changed since the
        page's render when it was adopted; then changes."""
        loop = asyncio.get_running_loop()
        stop_watching = self.session.watch(self.mark, page=True)  # an open page keeps the agent awake, or wakes it
        if self._holds is not None:
            self._holds.stop()
            if self._holds.overflowed and not self.needs_resync:
                self.needs_resync, self.dirty = True, {}
            self._holds = None
        last_sent = -1.0
        try:
            while True:
                asked = self._earlier is not None or self._later is not None or self._earlier_parts or self._replies
                if not (self.needs_resync or self.dirty or asked):
                    await self.wake.wait()
                self.wake.clear()
                delay = max(last_sent + self.MIN_INTERVAL, self._paused_until) - loop.time()
                if delay > 0:
                    await asyncio.sleep(delay)
                frame = await self.frame(loop.time())
                last_sent = loop.time()
                for message in _messages(frame):
                    await self.send(scrub(message))
        finally:
            stop_watching()

    # -- frames ------------------------------------------------------------------------------------

    async def _breathe(self) -> None:
        """Between two entries of a frame: let other sessions run once this frame has rendered for ``SLICE``.

        The frame stays consistent: each entry is rendered from its state at that moment, and whatever
        changes meanwhile is marked again for the next frame."""
        if time.perf_counter() - self._slice_started > self.SLICE:
            await asyncio.sleep(0)
            self._slice_started = time.perf_counter()

    async def _render(self, entries: list[Entry], now: float) -> str:
        html = []
        for entry in entries:
            await self._breathe()
            html.append(self._entry(entry, now, oob=None))
        return "".join(html)

    async def frame(self, now: float) -> list[str]:
        """Everything the page lacks, in order: out-of-band fragments and records of message edits."""
        if now - self._burst_started >= self.RESYNC_PAUSE:
            self._burst_started, self._burst = now, 0
        new = sum(1 for change in self.dirty if isinstance(change, EntryChanged) and change.seq > self._newest)
        if self._burst + new > self.WINDOW and not self.needs_resync:
            self.needs_resync = self._behind = True  # more new entries than a page can show: the newest window
        if self._behind:
            self._behind = False
            self._paused_until = now + self.RESYNC_PAUSE
        self._burst += new
        self._slice_started = time.perf_counter()
        if self.needs_resync:
            self.needs_resync = False
            self._earlier = self._later = None
            self.dirty.clear()
            return [await self._resync(now), *self._fills(), *self._replied()]
        changes = list(self.dirty)
        self.dirty.clear()
        parts: list[str] = [await self._earlier_window(now)] if self._earlier is not None else []
        parts += [await self._later_window(now)] if self._later is not None else []
        parts += self._message_parts()
        appended: list[str] = []

        def flush_appended() -> None:
            # New entries go out before any later part, which may target something inside them.
            if appended:
                parts.append(self._wrap("appended", entries=Markup("".join(appended))))
                appended.clear()

        thread = self.session.thread
        for change in changes:
            await self._breathe()
            if not isinstance(change, EntryChanged):
                flush_appended()
                parts.append(self._part(change))
                continue
            seq = change.seq
            entry = thread.get(seq)
            if entry is None or (seq <= self._newest and seq not in self._shown):
                continue  # dropped, or outside what the page holds: "Show earlier" will render it as it is then
            if seq > self._newest:
                self._newest = seq
                if not self._at_end:
                    continue  # the page shows older entries: "Show later" will render it as it is then
                appended.append(self._entry(entry, now, oob=None))
                continue
            flush_appended()
            parts += self._tool_call_update(entry, now) if isinstance(entry, ToolCall) else [self._update(entry, now)]
        flush_appended()
        return [*parts, *self._fills(), *self._replied()]

    def _start(self, first: Entry | None, oob: str | None = "true") -> str:
        """The top of the page's thread: "Show earlier" when older entries exist, a notice when they were dropped."""
        first_kept = self.session.thread.first_seq
        earlier = first.seq if first is not None and first.seq > first_kept else None
        return self.renderer.block(PAGE, "thread_start", session=self.session, earlier=earlier, oob=oob, **self.context)

    async def _earlier_window(self, now: float) -> str:
        """The window before the page's oldest entry, put above it, and the new top of the thread."""
        assert self._earlier is not None
        before, self._earlier = self._earlier, None
        if before != self._oldest:
            return ""
        entries = self.window(self.session.thread, before=before)
        if entries:
            self._oldest = entries[0].seq
        html = await self._render(entries, now)
        older = self._wrap("earlier", entries=Markup(html)) if html else ""
        return older + self._start(entries[0] if entries else None)

    async def _later_window(self, now: float) -> str:
        """The window after the page's newest entry, put at the thread's end, and the new end of the thread (no
        "Show later" once the page holds the thread's end: new entries are appended from then on)."""
        assert self._later is not None
        after, self._later = self._later, None
        if self._at_end or after != self._latest:
            return ""
        entries = self.window_after(self.session.thread, after)
        if entries:
            self._latest = entries[-1].seq
        last = self.session.thread.last
        if last is None or self._latest >= last.seq:
            self._at_end = True
            self._newest = max(self._newest, self._latest)
        html = await self._render(entries, now)
        later = None if self._at_end else self._latest
        end = self.renderer.block(PAGE, "thread_end", session=self.session, later=later, oob="true", **self.context)
        return (f'<div hx-swap-oob="beforebegin:#{PAGE_IDS.thread_end}">{html}</div>' if html else "") + end

    def _message_parts(self) -> list[str]:
        """The parts of long messages the page asked for, of messages it holds shown by their end."""
        asked, self._earlier_parts = self._earlier_parts, {}
        parts = []
        for seq, before in asked.items():
            entry = self.session.thread.get(seq)
            shown = self._shown.get(seq)
            if isinstance(entry, MessageEntry) and shown is not None and shown.generation < 0 and 0 < before:
                parts.append(earlier_part(entry, before))
        return parts

    def _wrap(self, block: str, **context: Any) -> str:
        """One of the fragment wrappers of ``FRAGMENTS`` around what it is given (markup, or text to escape)."""
        return self.renderer.block(FRAGMENTS, block, **context)

    async def _resync(self, now: float) -> str:
        self._shown.clear()
        self._held.clear()
        self._terminals_shown.clear()
        thread = self.session.thread
        window = self.window(thread)
        last = thread.last
        self._newest = self._latest = last.seq if last is not None else 0
        self._oldest = window[0].seq if window else 0
        self._at_end = True
        entries = Markup(await self._render(window, now))
        start = Markup(self._start(window[0] if window else None, oob=None))
        regions = "".join(self._region(region) for region in (Region.STATUS, *self.SESSION_REGIONS))
        thread_html = self._wrap("thread", start=start, entries=entries)
        return regions + thread_html + self._wrap("nonce", nonce=composer_nonce())

    def _part(self, change: TerminalChanged | Region) -> str:
        """A changed part that is not an entry: a terminal, the followed location, or a page region."""
        match change:
            case TerminalChanged(number=number):
                return self._terminal_updates(number)
            case Region.LOCATION:
                return self.follow_location() if self.follow else ""
            case Region.DROPPED:  # the thread let go of its oldest entries: so does this record of the page
                first = self.session.thread.first_seq
                for seq in [seq for seq in self._shown if seq < first]:
                    del self._shown[seq]
                    self._held.pop(seq, None)
                return ""
            case Region.STATUS if not len(self.session.thread):  # the empty thread's hint follows the agent's hello
                return self._region(change) + self._start(None)
            case _:
                return self._region(change)

    def follow_location(self) -> str:
        """The side panel showing the agent's latest location (empty when it has none)."""
        location = self.session.thread.latest_location
        if location is None:
            return ""
        panel = file_panel(self.session, location.path, location.line)
        return self.renderer.page(
            "_follow.html",
            session=self.session,
            display=panel.display,
            line=panel.line,
            view=panel.view,
            error=panel.error,
            lines_url=None,
            following=True,
            **self.context,
        )

    REGION_BLOCKS: dict[Region, tuple[str, ...]] = {Region.STATUS: ("status", "end_session")}
    """The page's blocks a region's change swaps besides (or instead of) the block of its name: End, in the workbar,
    comes and goes with the agent's state."""

    def _region(self, region: Region) -> str:
        """The page's blocks of the region (the block of the same name as the region), each swapped whole."""
        names = self.REGION_BLOCKS.get(region, (str(region),))
        return "".join(
            self.renderer.block(PAGE, name, session=self.session, oob="true", **self.context) for name in names
        )

    def _entry(self, entry: Entry, now: float, oob: str | None) -> str:
        message: MessageView | None = None
        if isinstance(entry, MessageEntry):
            message = self.docs.view(entry, now)
            self._shown[entry.seq] = message.progress
            self._held.pop(entry.seq, None)
            if entry.streaming and entry.kind != "user-message":
                self._unfilled[entry.seq] = (entry, message)
                message = replace(message, before=Markup(""), raw="", after=Markup(""))
        else:
            self._shown[entry.seq] = None
        html = self.renderer.block(
            PAGE, "entry", entry=entry, message=message, session=self.session, oob=oob, **self.context
        )
        if isinstance(entry, ToolCall):
            self._cards.shown(entry, html)
            for item in entry.content:
                term = self.session.thread.terminals.get(item.terminal_id) if isinstance(item, TerminalRef) else None
                if term is not None:
                    self._terminals_shown[(entry.seq, term.number)] = self._terminal_state(term)
        return html

    @staticmethod
    def _terminal_state(term: TerminalView) -> TerminalState:
        screen = term.screen
        return (screen.dropped, screen.dropped + len(screen.committed), term.shown_state)

    def _terminal_updates(self, number: int) -> str:
        """New output of a terminal for every card of this page that shows it: new lines appended, the
        screen replaced; the whole terminal when it ended or dropped many lines."""
        term = self.session.thread.terminals.by_number(number)
        if term is None:
            return ""
        parts = []
        screen = term.screen
        for seq in self.session.thread.terminals.embedded_in(term.terminal_id):
            entry = self.session.thread.get(seq)
            if seq not in self._shown or entry is None:
                continue  # the page will get the card whole (or does not hold it)
            shown = self._terminals_shown.get((seq, number))
            if shown is None:  # the card was shown before the terminal had any output
                parts.append(self._entry(entry, 0.0, oob="true"))
                continue
            base_dropped, sent, state = shown
            total = screen.dropped + len(screen.committed)
            tid = terminal_id(entry, number)
            new = total - sent
            if (
                state != term.shown_state
                or new > len(screen.committed)
                or screen.dropped - base_dropped > self.TERMINAL_REDRAW_AFTER
            ):
                parts.append(self.renderer.page("_terminal.html", term=term, tid=tid, oob="true", **self.context))
                self._terminals_shown[(seq, number)] = self._terminal_state(term)
                continue
            if new > 0:
                lines = screen.committed[len(screen.committed) - new :]
                parts.append(self._wrap("terminal_lines", tid=tid, lines=lines))
            parts.append(self._wrap("terminal_screen", tid=tid, screen=screen))
            self._terminals_shown[(seq, number)] = (base_dropped, total, state)
        return "".join(parts)

    def _update(self, entry: Entry, now: float) -> str:
        shown = self._shown.get(entry.seq)
        if not isinstance(entry, MessageEntry) or shown is None or entry.kind == "user-message":
            return self._entry(entry, now, oob="true")  # a user message is plain text: shown whole
        view = self.docs.view(entry, now)
        progress = view.progress
        if not progress.continues(shown, thought=entry.kind == "thought"):
            return self._entry(entry, now, oob="true")
        self._shown[entry.seq] = progress
        return self._edit(entry, view, "".join(view.blocks[shown.blocks : progress.blocks]))

    def _replied(self) -> list[str]:
        replies, self._replies = self._replies, []
        return replies

    def _fills(self) -> list[str]:
        """The rests of the streaming messages rendered whole since the last call, as edits (after their HTML)."""
        fills = [self._edit(entry, view, "") for entry, view in self._unfilled.values()]
        self._unfilled.clear()
        return fills

    def _edit(self, entry: MessageEntry, view: MessageView, finished: str) -> str:
        """The record that brings the page's rest of ``entry`` to ``view`` (moving ``finished`` blocks out of it)."""
        record, held = edit(dom_id(entry), self._held.get(entry.seq), finished, view.live_before, view.live_after)
        if entry.streaming:
            self._held[entry.seq] = held
        else:
            self._held.pop(entry.seq, None)
        return record

    # -- tool-call cards ----------------------------------------------------------------------------

    def _tool_call_update(self, call: ToolCall, now: float) -> list[str]:
        """What changed in a card the page holds (its status, title, new output, ...: fragments and records), or the
        card whole when its structure changed (`card_updates.CardUpdates`)."""
        fragments = self._cards.update(call, self._shown)
        return [self._entry(call, now, oob="true")] if fragments is None else fragments


def _messages(parts: list[str]) -> list[str]:
    """A frame's parts as socket messages, in order: each run of fragments one message, each run of records one."""
    messages: list[str] = []
    records = False
    for part in parts:
        if not part:
            continue
        if messages and part.startswith(RECORD) == records:
            messages[-1] += part
        else:
            records = part.startswith(RECORD)
            messages.append(part)
    return messages


def _within(entries: list[Entry], chars: int, newest_first: bool) -> list[Entry]:
    """``entries`` (oldest first) cut to those within ``chars`` of messages, counted from the newest (or the oldest),
    at least one."""
    order = range(len(entries) - 1, -1, -1) if newest_first else range(len(entries))
    held = 0
    for count, index in enumerate(order):
        entry = entries[index]
        if isinstance(entry, MessageEntry):
            held += min(entry.length, MessageDocs.LONG_MESSAGE)
            if held > chars and count:
                return entries[index + 1 :] if newest_first else entries[:index]
    return entries
