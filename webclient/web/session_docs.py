"""The rendered Markdown of each session's messages, shared by the session's pages and sockets.

A render cache, so it lives in the web layer, not in the session registry: made when a page first needs it,
let go of when the registry releases the session (it ended, or was forgotten); made again if its page is
opened after that.
"""

from __future__ import annotations

from collections.abc import Callable

from starlette.requests import HTTPConnection

from webclient.render.message_docs import MessageDocs
from webclient.session.core import Session
from webclient.viewmodel.changes import Change, Region


class SessionDocs:
    """One `MessageDocs` per session, kept in step with the thread (what it drops, its Markdown goes too)."""

    def __init__(self) -> None:
        self._docs: dict[str, tuple[MessageDocs, Callable[[], None]]] = {}

    def of(self, session: Session) -> MessageDocs:
        kept = self._docs.get(session.id)
        if kept is None:
            docs = MessageDocs()

            def dropped(key: Change) -> None:
                if key is Region.DROPPED:
                    docs.keep(session.thread.first_seq)  # the rendered Markdown of messages the thread let go of

            kept = self._docs[session.id] = (docs, session.watch(dropped))
        return kept[0]

    def release(self, session_id: str) -> None:
        kept = self._docs.pop(session_id, None)
        if kept is not None:
            kept[1]()  # stop watching


def session_docs(conn: HTTPConnection) -> SessionDocs:
    docs: SessionDocs = conn.app.state.docs
    return docs
