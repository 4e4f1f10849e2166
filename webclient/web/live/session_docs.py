"""The rendered Markdown of each session's messages, shared by the session's pages and sockets.

A render cache, so it lives in the web layer, not in the session registry: made when a page first needs it,
let go of when the registry releases the session (it ended, or was forgotten); made again if its page is
opened after that.

A page's first paint may leave big finished messages as text (`MessageDocs.for_page`: a session rebuilt from its
journal has all of them to render): they are rendered in the background right after, a message at a time between
other work, and the page's socket, which counts them as changed since the page (`web.live.page_holds`), brings
them in as Markdown when it connects.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Callable

from starlette.requests import HTTPConnection

from webclient.render.message_docs import MessageDocs
from webclient.session.core import Session
from webclient.viewmodel.entries import Entry
from webclient.viewmodel.events import Change, Region
from webclient.web.live.live_view import LiveView


class SessionDocs:
    """One `MessageDocs` per session, kept in step with the thread (what it drops, its Markdown goes too)."""

    CATCH_UP_DELAY = 0.1
    """Seconds before rendering what a first paint left as text: the page goes out first."""

    def __init__(self) -> None:
        self._docs: dict[str, tuple[MessageDocs, Callable[[], None]]] = {}
        self._catching_up: dict[str, asyncio.Task[None]] = {}
        self._first_paint = False

    @property
    def first_paint(self) -> SessionDocs:
        """The same renderings, as a page's first paint uses them (`MessageDocs.for_page`)."""
        pages = copy.copy(self)  # the same dicts
        pages._first_paint = True
        return pages

    def of(self, session: Session, window: list[Entry] | None = None) -> MessageDocs:
        """The renderings of ``session``'s messages; for a first paint, as the page showing ``window`` (else its newest
        entries) uses them."""
        kept = self._docs.get(session.id)
        if kept is None:
            docs = MessageDocs(on_pending=lambda: self._catch_up_soon(session.id, docs))

            def dropped(key: Change) -> None:
                if key is Region.DROPPED:
                    docs.keep(session.thread.first_seq)  # the rendered Markdown of messages the thread let go of

            kept = self._docs[session.id] = (docs, session.watch(dropped))
        if self._first_paint:  # the window the page shows (`pages.sessions.session_page`)
            return kept[0].for_page(window if window is not None else LiveView.window(session.thread))
        return kept[0]

    def release(self, session_id: str) -> None:
        kept = self._docs.pop(session_id, None)
        if kept is not None:
            kept[1]()  # stop watching
        task = self._catching_up.pop(session_id, None)
        if task is not None:
            task.cancel()

    def _catch_up_soon(self, session_id: str, docs: MessageDocs) -> None:
        """Render what a first paint left as text, in the background (a view of it meanwhile renders it itself)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no event loop (a script): the next view renders it
            return
        running = self._catching_up.get(session_id)
        if running is None or running.done():
            task = self._catching_up[session_id] = loop.create_task(self._catch_up(docs))

            def done(_: object) -> None:
                if self._catching_up.get(session_id) is task:
                    del self._catching_up[session_id]

            task.add_done_callback(done)

    async def _catch_up(self, docs: MessageDocs) -> None:
        await asyncio.sleep(self.CATCH_UP_DELAY)
        while docs.render_pending():
            await asyncio.sleep(0)  # a message at a time: other sessions and sockets run in between


def session_docs(conn: HTTPConnection) -> SessionDocs:
    """The renderings for a socket, or for a page's first paint (an HTTP request: its socket sends what its first
    paint leaves as text as Markdown when it connects)."""
    docs: SessionDocs = conn.app.state.docs
    return docs.first_paint if conn.scope["type"] == "http" else docs
