"""The people who signed in, and their signed-in sessions (the ``people`` and ``signins`` tables, migration 0003).

A person's row is kept up to date at each sign-in (name, email, groups and admin as the provider or proxy said last;
``last_seen``). A signed-in session's row is keyed by the SHA-256 of the browser's cookie, never the cookie: a copy of
the store signs nobody in. It lasts ``WEBCLIENT_SIGNIN_DAYS`` from its last use; deleting it (sign-out, Revoke) ends
it. The web layer (`webclient.web.access.signins`) keeps what it read in memory; this module is the queries.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Row, delete, insert, select, update

from webclient.people.person import LOCAL, Person
from webclient.store.database import Database, DatabaseConnection
from webclient.store.schema import people, signins

TOKEN_MARK = "token-mark"
"""The ``method`` of the row that says which token the ``token`` sign-ins were made with (never a sign-in)."""
USER_AGENT_CHARS = 300
"""Of a browser's User-Agent kept with its sign-in (shown to admins to tell sign-ins apart)."""


@dataclass(frozen=True)
class SignInRow:
    """A signed-in session, as the admin page shows it."""

    id: str
    """The SHA-256 of its cookie (hex): what Revoke names."""
    person_id: str
    method: str
    created: datetime
    last_seen: datetime
    expires: datetime
    user_agent: str | None


@dataclass(frozen=True)
class PersonRow:
    """A person the server has seen, with their signed-in sessions (newest first)."""

    person: Person
    first_seen: datetime
    last_seen: datetime
    signins: tuple[SignInRow, ...]


def _groups(text: str) -> frozenset[str]:
    try:
        listed = json.loads(text)
    except ValueError:
        return frozenset()
    return frozenset(g for g in listed if isinstance(g, str)) if isinstance(listed, list) else frozenset()


def _person(row: Row[Any]) -> Person:
    return Person(id=row.id, name=row.name, email=row.email, groups=_groups(row.groups), admin=bool(row.admin))


async def _upsert(connection: DatabaseConnection, person: Person, now: datetime) -> None:
    values = {
        "name": person.name,
        "email": person.email,
        "groups": json.dumps(sorted(person.groups)),
        "admin": person.admin,
        "last_seen": now,
    }
    changed = await connection.execute(update(people).where(people.c.id == person.id).values(**values))
    if changed.rowcount == 0:
        await connection.execute(insert(people).values(id=person.id, first_seen=now, **values))


async def seen(engine: Database, person: Person, now: datetime) -> None:
    """Keep ``person``'s row as they are now (made at their first sign-in)."""
    async with engine.begin() as connection:
        await _upsert(connection, person, now)


async def sign_in(
    engine: Database, signin_id: str, person: Person, method: str, now: datetime, expires: datetime, agent: str
) -> None:
    """Record a new signed-in session for ``person`` (their row kept up to date in the same transaction), and forget
    the signed-in sessions that have expired."""
    async with engine.begin() as connection:
        await _upsert(connection, person, now)
        await connection.execute(delete(signins).where(signins.c.expires < now))
        await connection.execute(
            insert(signins).values(
                id=signin_id,
                person_id=person.id,
                method=method,
                created=now,
                last_seen=now,
                expires=expires,
                user_agent=agent[:USER_AGENT_CHARS] or None,
            )
        )


async def signed_in(engine: Database, signin_id: str, now: datetime) -> tuple[Person, datetime] | None:
    """The person of a signed-in session that has not expired, and when it expires; else None."""
    query = (
        select(people, signins.c.expires)
        .join(signins, signins.c.person_id == people.c.id)
        .where(signins.c.id == signin_id, signins.c.expires > now, signins.c.method != TOKEN_MARK)
    )
    async with engine.connect() as connection:
        row = (await connection.execute(query)).first()
    return (_person(row), _aware(row.expires)) if row is not None else None


async def used(engine: Database, signin_id: str, person_id: str, now: datetime, expires: datetime) -> None:
    """A signed-in session was used: it lasts from now, and its person was last seen now."""
    async with engine.begin() as connection:
        await connection.execute(
            update(signins).where(signins.c.id == signin_id).values(last_seen=now, expires=expires)
        )
        await connection.execute(update(people).where(people.c.id == person_id).values(last_seen=now))


async def end(engine: Database, signin_id: str) -> bool:
    """Delete a signed-in session (sign-out, Revoke); False if there was none."""
    async with engine.begin() as connection:
        result = await connection.execute(delete(signins).where(signins.c.id == signin_id))
    return bool(result.rowcount)


async def everyone(engine: Database, now: datetime) -> list[PersonRow]:
    """Every person the server has seen (most recently seen first), each with their live signed-in sessions."""
    async with engine.connect() as connection:
        persons = (await connection.execute(select(people).order_by(people.c.last_seen.desc(), people.c.id))).all()
        rows = (
            await connection.execute(
                select(signins)
                .where(signins.c.expires > now, signins.c.method != TOKEN_MARK)
                .order_by(signins.c.last_seen.desc(), signins.c.id)
            )
        ).all()
    by_person: dict[str, list[SignInRow]] = {}
    for row in rows:
        by_person.setdefault(row.person_id, []).append(
            SignInRow(
                id=row.id,
                person_id=row.person_id,
                method=row.method,
                created=_aware(row.created),
                last_seen=_aware(row.last_seen),
                expires=_aware(row.expires),
                user_agent=row.user_agent,
            )
        )
    return [
        PersonRow(_person(p), _aware(p.first_seen), _aware(p.last_seen), tuple(by_person.get(p.id, ())))
        for p in persons
    ]


async def keep_token_signins(engine: Database, mark: str) -> None:
    """Token mode, at start: unless the store's token mark is ``mark`` (the same token as last time), delete every
    token sign-in and set the mark. The mark is a row of ``signins`` for token mode's person, never looked up as a
    sign-in."""
    now = datetime.now(UTC)
    async with engine.begin() as connection:
        found = await connection.execute(select(signins.c.id).where(signins.c.id == mark))
        if found.first() is not None:
            return
        await connection.execute(delete(signins).where(signins.c.method.in_(("token", TOKEN_MARK))))
        await _upsert(connection, LOCAL, now)
        forever = datetime(9999, 1, 1, tzinfo=UTC)
        await connection.execute(
            insert(signins).values(
                id=mark, person_id=LOCAL.id, method=TOKEN_MARK, created=now, last_seen=now, expires=forever
            )
        )


def _aware(moment: datetime) -> datetime:
    """SQLite gives back naive datetimes (it stores no zone): ours are all UTC."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
