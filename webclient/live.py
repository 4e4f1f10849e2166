"""One browser connection to a session: it knows what the page holds and sends only what changed.

Nothing is queued per connection. The session reports *which* parts changed; this object keeps them
in an ordered set and, when it may send (the first change after a quiet spell at once, then at most
every ``MIN_INTERVAL``), renders those parts from the current state into one frame of out-of-band
fragments. A slow browser therefore never makes the server hold more than the set of changed parts;
when that set grows past ``RESYNC_AT`` the page is simply re-rendered whole. Streamed text is
appended (only the characters the page lacks), Markdown blocks are added once they are final, and
every other entry is re-rendered whole and swapped by id.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

from markupsafe import escape

from webclient.rendering import MessageDocs, MessageView, Renderer, dom_id
from webclient.session import ChangeKey, Session
from webclient.viewmodel.entries import Entry, MessageEntry

PAGE = "session.html"

MessageState = tuple[int, int, int, bool, int]
"""(markdown generation, blocks, characters, streaming, attachments) of a message as the page has it."""


def composer_nonce() -> str:
    """A fresh token for the prompt form: a send replayed after a reconnect is recognised by it."""
    return secrets.token_urlsafe(12)


class LiveView:
    """Pushes a session's changes to one web socket, in order, coalesced, with bounded memory."""

    MIN_INTERVAL = 0.05
    RESYNC_AT = 1000

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
        self.dirty: dict[ChangeKey, None] = {}
        self.wake = asyncio.Event()
        self.needs_resync = True
        self._shown: dict[int, MessageState | None] = {}
        self._own_regions: list[str] = []

    def mark(self, key: ChangeKey) -> None:
        """Note that ``key`` changed (called by the session for every change: keep it trivial)."""
        self.dirty[key] = None
        self.wake.set()

    def refresh_composer(self) -> None:
        """Give this page a fresh, empty prompt form (after its prompt was accepted)."""
        self._own_regions.append("composer")
        self.wake.set()

    async def run(self) -> None:
        """Send until cancelled: a whole re-render first (so a reconnect loses nothing), then changes."""
        loop = asyncio.get_running_loop()
        stop_watching = self.session.watch(self.mark)
        last_sent = -1.0
        try:
            while True:
                if not (self.needs_resync or self.dirty or self._own_regions):
                    await self.wake.wait()
                self.wake.clear()
                delay = last_sent + self.MIN_INTERVAL - loop.time()
                if delay > 0:
                    await asyncio.sleep(delay)
                frame = self.frame(loop.time())
                last_sent = loop.time()
                if frame:
                    await self.send(frame)
        finally:
            stop_watching()

    # -- frames ------------------------------------------------------------------------------------

    def frame(self, now: float) -> str:
        """Everything the page lacks, as one string of out-of-band fragments."""
        if self.needs_resync or len(self.dirty) > self.RESYNC_AT:
            self.needs_resync = False
            self.dirty.clear()
            return self._resync(now) + self._regions(self._take_own_regions())
        keys = list(self.dirty)
        self.dirty.clear()
        parts: list[str] = []
        appended: list[str] = []
        for key in keys:
            if isinstance(key, str):
                parts.append(self._region(key))
                continue
            entry = self.session.thread.entry(key)
            if key in self._shown:
                parts.append(self._update(entry, now))
            else:
                appended.append(self._entry(entry, now, oob=None))
        if appended:
            parts.append(f'<div hx-swap-oob="beforeend:#thread">{"".join(appended)}</div>')
        return "".join(parts) + self._regions(self._take_own_regions())

    def _take_own_regions(self) -> list[str]:
        regions, self._own_regions = self._own_regions, []
        return regions

    def _regions(self, names: list[str]) -> str:
        return "".join(self._region(name) for name in dict.fromkeys(names))

    def _resync(self, now: float) -> str:
        self._shown.clear()
        entries = "".join(self._entry(entry, now, oob=None) for entry in self.session.thread)
        nonce = f'<input type="hidden" name="nonce" id="prompt-nonce" value="{composer_nonce()}" hx-swap-oob="true">'
        return f'{self._region("status")}<section id="thread" hx-swap-oob="innerHTML">{entries}</section>{nonce}'

    def _region(self, name: str) -> str:
        extra = {"nonce": composer_nonce()} if name == "composer" else {}
        return self.renderer.block(PAGE, name, session=self.session, oob="true", **self.context, **extra)

    def _entry(self, entry: Entry, now: float, oob: str | None) -> str:
        message: MessageView | None = None
        if isinstance(entry, MessageEntry):
            message = self.docs.view(entry, now)
            self._shown[entry.seq] = (*message.state, entry.streaming, len(entry.attachments))
        else:
            self._shown[entry.seq] = None
        return self.renderer.block(
            PAGE, "entry", entry=entry, message=message, session=self.session, oob=oob, **self.context
        )

    def _update(self, entry: Entry, now: float) -> str:
        shown = self._shown.get(entry.seq)
        if not isinstance(entry, MessageEntry) or shown is None:
            return self._entry(entry, now, oob="true")
        view = self.docs.view(entry, now)
        generation, blocks, chars = view.state
        old_generation, old_blocks, old_chars, old_streaming, old_attachments = shown
        if (
            generation != old_generation
            or blocks < old_blocks
            or chars < old_chars
            or len(entry.attachments) != old_attachments
            or (entry.streaming != old_streaming and entry.kind == "thought")
        ):
            return self._entry(entry, now, oob="true")
        self._shown[entry.seq] = (generation, blocks, chars, entry.streaming, old_attachments)
        target = dom_id(entry)
        if blocks > old_blocks:
            new_blocks = "".join(self.docs.blocks(entry)[old_blocks:])
            return (
                f'<div hx-swap-oob="beforeend:#{target}-md">{new_blocks}</div>'
                f'<div id="{target}-tail" hx-swap-oob="innerHTML">{escape(view.tail)}</div>'
            )
        if chars > old_chars:
            return f'<div hx-swap-oob="beforeend:#{target}-tail">{escape(entry.text[old_chars:])}</div>'
        return ""
