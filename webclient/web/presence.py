"""Who has each session open now: one entry per open page socket, shown in the session's header ("Alice, Bob
watching") and updated as people come and go; and the sockets a revoked share shuts out, closed, as those of the
people whose share changed between watch and drive (their page loads again, with the composer or without)."""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from starlette.requests import HTTPConnection

from webclient.people.person import LOCAL, Person
from webclient.people.roles import Role, may_drive, role_of
from webclient.session.core import Session
from webclient.viewmodel.changes import Region


@dataclass(frozen=True, slots=True)
class Viewer:
    person: Person
    link: str | None
    """The share link's token the page came with."""
    role: Role | None
    """What they could do when the page opened."""
    close: Callable[[int], Awaitable[None]]
    """Closes the page's socket with a code."""


WS_POLICY_VIOLATION = 1008
"""The close code for a page whose person may no longer see the session: the page says so."""
ROLE_CHANGED = 4001
"""The close code for a page whose person may now drive what they watched, or only watch what they drove: the page
loads again (``static/js/socket-status.js``)."""


class Presence:
    """The open page sockets of every session of this server."""

    def __init__(self) -> None:
        self._open: dict[str, dict[int, Viewer]] = {}
        self._numbers = itertools.count()

    def join(self, session: Session, viewer: Viewer) -> Callable[[], None]:
        """``viewer`` opened ``session``'s page; returns what to call when they leave. The header shows both."""
        number = next(self._numbers)
        self._open.setdefault(session.id, {})[number] = viewer
        session.thread.listener(Region.STATUS)

        def leave() -> None:
            viewers = self._open.get(session.id, {})
            viewers.pop(number, None)
            if not viewers:
                self._open.pop(session.id, None)
            session.thread.listener(Region.STATUS)

        return leave

    def of(self, session_id: str) -> list[Person]:
        """The people who have the session open, each once, by name (a page that reconnects must not reorder the
        header); none in token mode (its one person is not named)."""
        seen: dict[str, Person] = {}
        for viewer in self._open.get(session_id, {}).values():
            if viewer.person.id != LOCAL.id:
                seen.setdefault(viewer.person.id, viewer.person)
        return sorted(seen.values(), key=lambda person: (person.label.casefold(), person.id))

    async def shut_out(self, session: Session) -> None:
        """Close the sockets of those who may not see ``session`` any more (a share revoked), and of those who may
        now do more or less with it (a share changed between watch and drive)."""
        for viewer in list(self._open.get(session.id, {}).values()):
            role = role_of(viewer.person, session.owner, session.shares, viewer.link)
            if role is None:
                await viewer.close(WS_POLICY_VIOLATION)
            elif may_drive(role) != may_drive(viewer.role):
                await viewer.close(ROLE_CHANGED)


def presence(conn: HTTPConnection) -> Presence:
    """The server's `Presence` (made with the first page that asks)."""
    state = conn.app.state
    found: Presence | None = getattr(state, "presence", None)
    if found is None:
        found = state.presence = Presence()
    return found
