"""OpenID sign-ins started and not yet finished (`webclient.web.access.oidc`), kept in the store so that whichever
instance the provider sends the browser back to (or this one after a restart) can finish it, exactly once."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import delete, func, insert, select

from webclient.store.database import Database
from webclient.store.schema import signins_started


async def keep(engine: Database, values: dict[str, Any], now: datetime, most: int) -> None:
    """Keep one started sign-in (the table's columns); forget those expired, and the oldest past ``most``."""
    async with engine.begin() as connection:
        await connection.execute(delete(signins_started).where(signins_started.c.expires < now))
        await connection.execute(insert(signins_started).values(**values))
        count = (await connection.execute(select(func.count()).select_from(signins_started))).scalar_one()
        if count > most:
            oldest = select(signins_started.c.state).order_by(signins_started.c.expires).limit(count - most)
            await connection.execute(delete(signins_started).where(signins_started.c.state.in_(oldest)))


async def take(engine: Database, state: str, now: datetime) -> dict[str, Any] | None:
    """The started sign-in ``state`` names, taken away (a second caller, on any instance, gets None); None if there
    is none or it expired."""
    live = (signins_started.c.state == state, signins_started.c.expires >= now)  # an expired one goes at the next keep
    async with engine.begin() as connection:
        taken = (await connection.execute(delete(signins_started).where(*live).returning(*signins_started.c))).first()
    return None if taken is None else {key: value for key, value in taken._mapping.items() if key != "expires"}
