"""Every socket a person holds on a session, in one place: the page's (shown in the session's header by their part
in it, "alice (owner), bob driving, carol watching", updated as people come and go) and the agent's sign-in
terminal's (`web.live.agent_auth_socket`). A revoked share closes them all, and so does a deleted session, each
with a reason the page shows ("no longer shared with you", "deleted"); a share changed between watch and drive
reloads the page (with the composer or without) and closes a terminal its person may no longer drive. A signed-in
session that ends (sign-out, an admin's Revoke) closes every socket it opened too, one layer down
(`webclient.web.access.access`). Each socket also asks for the person's role again with every message it receives, so
nothing waits on this for a refusal.

A new kind of socket on a session joins here, or a revoke leaves it open."""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from starlette import status
from starlette.requests import HTTPConnection

from webclient.people.person import LOCAL, Person
from webclient.people.roles import Role, may_drive, role_of
from webclient.session.core import Session
from webclient.viewmodel.events import Region
from webclient.web.context import role_in


@dataclass(frozen=True, slots=True)
class Viewer:
    person: Person
    link: str | None
    """The share link's token the page came with."""
    role: Role | None
    """What they could do when the page opened."""
    close: Callable[[int, str], Awaitable[None]]
    """Closes the socket with a code and a reason."""
    page: bool = True
    """The session's page (its header shows who has it open); else a socket only a driver may hold (the sign-in
    terminal's), closed as soon as its person may not drive."""


REVOKED = "revoked"
"""The close reason of a page whose share was revoked: "no longer shared with you" (``static/js/socket-status.js``)."""
DELETED = "deleted"
"""The close reason of a page whose session was deleted."""
_RANK = {"watching": 0, "driving": 1, "owner": 2}
"""A person with two pages open (one through a share link) is named by the most they may do."""
ROLE_CHANGED = 4001
"""The close code for a page whose person may now drive what they watched, or only watch what they drove: the page
loads again (``static/js/socket-status.js``)."""


class Presence:
    """The open sockets of every session of this server, pages and sign-in terminals."""

    def __init__(self) -> None:
        self._open: dict[str, dict[int, Viewer]] = {}
        self._numbers = itertools.count()

    def join(self, session: Session, viewer: Viewer) -> Callable[[], None]:
        """``viewer`` opened a socket of ``session``; returns what to call when it closes (a page: the header shows
        both)."""
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

    def of(self, session: Session) -> list[tuple[Person, str]]:
        """The people who have the session open, each once, by name (a page that reconnects must not reorder the
        header), each with their part in it: ``owner``, ``driving`` or ``watching``; none in token mode (its one
        person is not named)."""
        seen: dict[str, tuple[Person, str]] = {}
        for viewer in self._open.get(session.id, {}).values():
            if viewer.page and viewer.person.id != LOCAL.id:
                role = role_of(viewer.person, session.owner, session.shares, viewer.link)
                part = "owner" if role == "owner" else "driving" if may_drive(role) else "watching"
                known = seen.get(viewer.person.id)
                if known is None or _RANK[part] > _RANK[known[1]]:
                    seen[viewer.person.id] = (viewer.person, part)
        return sorted(seen.values(), key=lambda here: (here[0].label.casefold(), here[0].id))

    async def shut_out(self, session: Session) -> None:
        """Close the sockets of those who may not see ``session`` any more (a share revoked), the terminals of those who
        may not drive it any more, and the pages of those who may now do more or less with it (a share changed between
        watch and drive)."""
        for viewer in list(self._open.get(session.id, {}).values()):
            role = role_of(viewer.person, session.owner, session.shares, viewer.link)
            if role is None or not (viewer.page or may_drive(role)):
                await viewer.close(status.WS_1008_POLICY_VIOLATION, REVOKED)
            elif may_drive(role) != may_drive(viewer.role):
                await viewer.close(ROLE_CHANGED, "")

    async def moved(self, session_id: str) -> None:
        """Close every socket of a session another instance runs from now on: its pages reconnect (1012, as for a
        restart), through whichever instance, to the new owner."""
        for viewer in list(self._open.get(session_id, {}).values()):
            await viewer.close(status.WS_1012_SERVICE_RESTART, "")

    async def deleted(self, session_id: str) -> None:
        """Close every socket of a session that was deleted: its pages say so."""
        for viewer in list(self._open.get(session_id, {}).values()):
            await viewer.close(status.WS_1008_POLICY_VIOLATION, DELETED)


def presence(conn: HTTPConnection) -> Presence:
    """The server's `Presence` (made with the first page that asks)."""
    state = conn.app.state
    found: Presence | None = getattr(state, "presence", None)
    if found is None:
        found = state.presence = Presence()
    return found


def page_context(conn: HTTPConnection, session: Session) -> dict[str, Any]:
    """What the session page's templates need to know of sharing: whether this person only watches, whether they
    own it (the Share panel), and who has it open."""
    their_role = role_in(conn, session)
    return {"role": their_role, "watching": not may_drive(their_role), "presence": presence(conn)}
