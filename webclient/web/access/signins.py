"""Signed-in sessions kept on the server (``WEBCLIENT_AUTH=token`` and ``oidc``): a browser's cookie is a random
value, the store keeps its SHA-256 with the person it signs in (`webclient.store.people`), and deleting that row
(sign-out, an admin's Revoke) ends it at once, web sockets included.

Reading the store on every request and socket would cost a query each: what was read is kept here and read again
after :data:`RECHECK_SECONDS` (so a Revoke by another server sharing the store counts within that time; this
server's own ends a sign-in at once), and a use is written at most once a :data:`TOUCH_SECONDS`. A sign-in lasts
``WEBCLIENT_SIGNIN_DAYS`` from its last use.

In token mode the token signs its sign-ins: the store's key of a cookie is an HMAC keyed by the token, and a server
started with another token ends every sign-in made with the one before (changing a leaked token locks out whoever
used it), as the cookie derived from the token did.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from webclient.people.person import Person

if TYPE_CHECKING:
    from webclient.store.database import Database

RECHECK_SECONDS = 10.0
"""A sign-in kept in memory is read from the store again after this long (another server may have ended it)."""
TOUCH_SECONDS = 60.0
"""A signed-in session's use (and its person's ``last_seen``) is written at most this often."""
MAX_KNOWN = 50_000
"""Signed-in sessions kept in memory at most (the least recently read go first; they are read again when used)."""


def signin_id(cookie: str, key: bytes | None = None) -> str:
    """The store's key of a cookie: its SHA-256 (an HMAC keyed by ``key`` in token mode), so the store never holds
    what signs a browser in."""
    if key is None:
        return hashlib.sha256(cookie.encode()).hexdigest()
    return hmac.new(key, cookie.encode(), hashlib.sha256).hexdigest()


@dataclass
class _Known:
    person: Person
    expires: datetime
    written: datetime
    read: datetime


class SignIns:
    """The signed-in sessions of one server: made at sign-in, looked up per request, ended by sign-out or Revoke."""

    def __init__(
        self, engine: Database, days: float, key: bytes | None = None, recheck: float = RECHECK_SECONDS
    ) -> None:
        """``key``: token mode's, derived from the token (see :meth:`for_token`); None for OpenID sign-ins."""
        self.engine = engine
        self.lasts = timedelta(days=days)
        self.key = key
        self.recheck = timedelta(seconds=recheck)
        self._known: dict[str, _Known] = {}
        self._sockets: dict[str, set[asyncio.Event]] = {}
        self._people: dict[str, tuple[Person, datetime]] = {}

    async def start(self, person: Person, method: str, user_agent: str) -> str:
        """A new signed-in session for ``person``; returns the cookie's value (only the browser keeps it)."""
        from webclient.store import people as stored  # here: SQLAlchemy is imported only when a store is used

        cookie = secrets.token_urlsafe(32)
        key = signin_id(cookie, self.key)
        now = datetime.now(UTC)
        await stored.sign_in(self.engine, key, person, method, now, now + self.lasts, user_agent)
        self._people[person.id] = (person, now)
        self._remember(key, _Known(person, now + self.lasts, now, now))
        return cookie

    async def person(self, cookie: str) -> tuple[Person, str] | None:
        """Who ``cookie`` signs in and its signed-in session's id, or None (unknown, ended or expired)."""
        from webclient.store import people as stored  # here: SQLAlchemy is imported only when a store is used

        if not cookie or len(cookie) > 200:
            return None
        key = signin_id(cookie, self.key)
        now = datetime.now(UTC)
        known = self._known.get(key)
        if known is None or now - known.read >= self.recheck:
            found = await stored.signed_in(self.engine, key, now)
            if found is None:
                self._known.pop(key, None)
                return None
            written = known.written if known is not None else now - timedelta(seconds=TOUCH_SECONDS)
            known = _Known(found[0], found[1], written, now)
            self._remember(key, known)
        if known.expires <= now:
            self._known.pop(key, None)
            return None
        if (now - known.written).total_seconds() >= TOUCH_SECONDS:
            known.written, known.expires = now, now + self.lasts
            await stored.used(self.engine, key, known.person.id, now, known.expires)
        return known.person, key

    def _remember(self, key: str, known: _Known) -> None:
        self._known.pop(key, None)
        while len(self._known) >= MAX_KNOWN:
            del self._known[next(iter(self._known))]
        self._known[key] = known

    async def for_token(self) -> None:
        """Token mode, at start: end the sign-ins made with another token than this server's (their cookies could
        no longer be checked, so they are gone rather than listed as live)."""
        from webclient.store import people as stored  # here: SQLAlchemy is imported only when a store is used

        assert self.key is not None
        await stored.keep_token_signins(self.engine, signin_id("\0 the token of these sign-ins", self.key))

    async def end(self, key: str) -> bool:
        """End a signed-in session (sign-out, Revoke): its row goes, and its open web sockets are closed."""
        from webclient.store import people as stored  # here: SQLAlchemy is imported only when a store is used

        self._known.pop(key, None)
        ended = await stored.end(self.engine, key)
        for event in self._sockets.pop(key, set()):
            event.set()
        return ended

    def watch(self, key: str) -> asyncio.Event:
        """An event set when signed-in session ``key`` ends (a web socket it opened closes then)."""
        event = asyncio.Event()
        self._sockets.setdefault(key, set()).add(event)
        return event

    def unwatch(self, key: str, event: asyncio.Event) -> None:
        events = self._sockets.get(key)
        if events is not None:
            events.discard(event)
            if not events:
                del self._sockets[key]

    async def seen(self, person: Person) -> None:
        """Keep the people table up to date for a person named by a trusted proxy on each request: written when
        what the proxy says of them changes, else at most once a :data:`TOUCH_SECONDS`."""
        from webclient.store import people as stored  # here: SQLAlchemy is imported only when a store is used

        now = datetime.now(UTC)
        last = self._people.get(person.id)
        if last is not None and last[0] == person and (now - last[1]).total_seconds() < TOUCH_SECONDS:
            return
        self._people[person.id] = (person, now)
        await stored.seen(self.engine, person, now)
