"""Who owns each folder under an agent's shared root (the ``folders`` table), and which sessions' folders a person
may work in because a session there is shared with them to drive (`webclient.agents.folders` decides with both).

Rare writes (a person's first session in a folder): straight to the database."""

from __future__ import annotations

from collections.abc import Collection
from datetime import UTC, datetime

from sqlalchemy import insert, select
from sqlalchemy.exc import IntegrityError

from webclient.store.database import Database
from webclient.store.schema import folders, sessions, shares


async def owners(engine: Database) -> dict[str, str]:
    """Every owned folder's path, with its owner's id."""
    async with engine.connect() as connection:
        return {row.path: row.owner for row in await connection.execute(select(folders.c.path, folders.c.owner))}


async def claim(engine: Database, path: str, owner: str) -> str:
    """Make ``owner`` the owner of ``path`` unless someone is already; returns who owns it now (the first wins, also
    between two servers on one database)."""
    try:
        async with engine.begin() as connection:
            await connection.execute(insert(folders).values(path=path, owner=owner, created=datetime.now(UTC)))
        return owner
    except IntegrityError:
        async with engine.connect() as connection:
            found = (await connection.execute(select(folders.c.owner).where(folders.c.path == path))).scalar()
        return str(found) if found is not None else owner


async def driven_workspaces(engine: Database, person_id: str, groups: Collection[str]) -> list[str]:
    """The folders of the sessions shared with ``person_id`` (or one of their ``groups``) to drive."""
    grantee = (shares.c.kind == "person") & (shares.c.grantee == person_id)
    if groups:
        grantee = grantee | (shares.c.kind == "group") & shares.c.grantee.in_(list(groups))
    query = (
        select(sessions.c.workspace)
        .join(shares, shares.c.session_id == sessions.c.id)
        .where((shares.c.role == "drive") & grantee)
        .distinct()
    )
    async with engine.connect() as connection:
        return [row.workspace for row in await connection.execute(query)]
