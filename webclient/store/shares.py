"""Whom each session is shared with (the ``shares`` table): read into `Session.shares` when a session is rebuilt,
added and revoked from its Share panel. Rare writes: straight to the database, after the journal's writer wrote
the session's row (a share names it)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import delete, func, insert, select

from webclient.people.roles import Share
from webclient.store.database import Database
from webclient.store.schema import people, shares


@dataclass(frozen=True, slots=True)
class StoredShare:
    """A share as its panel lists it: the share, its row's id (what Revoke names), when and by whom."""

    id: int
    share: Share
    created: datetime
    created_by: str


async def of_session(engine: Database, session_id: str) -> list[StoredShare]:
    """The session's shares, oldest first."""
    query = select(shares).where(shares.c.session_id == session_id).order_by(shares.c.id)
    async with engine.connect() as connection:
        rows = (await connection.execute(query)).all()
    return [StoredShare(r.id, Share(r.kind, r.grantee, r.role), r.created, r.created_by) for r in rows]


async def add(engine: Database, session_id: str, share: Share, by: str) -> int:
    """Store ``share`` (one per grantee: sharing again changes the role); returns its id."""
    async with engine.begin() as connection:
        same = (shares.c.session_id == session_id) & (shares.c.kind == share.kind) & (shares.c.grantee == share.grantee)
        await connection.execute(delete(shares).where(same))
        values = {
            "session_id": session_id,
            "kind": share.kind,
            "grantee": share.grantee,
            "role": share.role,
            "created": datetime.now(UTC),
            "created_by": by,
        }
        result = await connection.execute(insert(shares).values(values))
        key = result.inserted_primary_key
        assert key is not None
        return int(key[0])


async def revoke(engine: Database, session_id: str, share_id: int) -> Share | None:
    """Delete the share ``share_id`` of the session; returns what it was (None: there was none)."""
    async with engine.begin() as connection:
        query = select(shares).where((shares.c.session_id == session_id) & (shares.c.id == share_id))
        found = (await connection.execute(query)).first()
        if found is None:
            return None
        await connection.execute(delete(shares).where(shares.c.id == share_id))
    return Share(found.kind, found.grantee, found.role)


async def known_people(engine: Database, limit: int = 500) -> list[tuple[str, str]]:
    """(id, name) of the people who signed in, most recent first: whom the Share panel offers."""
    query = select(people.c.id, people.c.name).order_by(people.c.last_seen.desc()).limit(limit)
    async with engine.connect() as connection:
        return [(row.id, row.name) for row in await connection.execute(query)]


async def person_named(engine: Database, typed: str) -> str:
    """The id of the person ``typed`` names: their id, else the one person with that name, or that e-mail address if
    ``typed`` is one (any case; only addresses their provider verified are kept: `webclient.web.access.signin_flow`);
    else ``typed`` itself (someone who has not signed in yet, named by the id they will have)."""
    lowered = typed.lower()
    # An address names only whoever has it as their (verified) e-mail, never someone who chose it as their name.
    by_name = func.lower(people.c.email if "@" in typed else people.c.name) == lowered
    query = select(people.c.id).where((people.c.id == typed) | by_name)
    async with engine.connect() as connection:
        found = [row.id for row in await connection.execute(query.limit(3))]
    if typed in found:
        return typed
    return found[0] if len(found) == 1 else typed
