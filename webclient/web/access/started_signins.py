"""OpenID sign-ins started and not yet finished, kept in the store (`webclient.store.signins_started`) until the
provider sends the browser back: any instance of the service behind the proxy finishes one, once, and a restart in
between loses nothing. A `webclient.web.access.oidc.StartedSignIns`."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

from webclient.store import signins_started as stored
from webclient.store.database import Database
from webclient.web.access.oidc import MAX_PENDING, PENDING_SECONDS, Pending


class InStore:
    """The store's sign-ins under way (at most `MAX_PENDING`, each for `PENDING_SECONDS`)."""

    def __init__(self, engine: Database) -> None:
        self.engine = engine

    async def keep(self, state: str, pending: Pending) -> None:
        now = datetime.now(UTC)
        values = {"state": state, **dataclasses.asdict(pending), "expires": now + timedelta(seconds=PENDING_SECONDS)}
        await stored.keep(self.engine, values, now, MAX_PENDING)

    async def take(self, state: str) -> Pending | None:
        taken = await stored.take(self.engine, state, datetime.now(UTC))
        return None if taken is None else Pending(**{key: value for key, value in taken.items() if key != "state"})
