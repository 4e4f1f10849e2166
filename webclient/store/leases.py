"""Which instance runs which session, when several share one PostgreSQL: a lease per live session, and a heartbeat per
instance. PostgreSQL only (SQLite is one instance's store); every time is the database's (``now()``), never an
instance's clock.

A lease is taken atomically (the row locked, or inserted once), renewed by its holder's heartbeat, and may be taken by
another instance only once it has expired: two instances never hold one session at once. An instance that cannot
renew stops its sessions' agents before its leases expire (`webclient.web.cluster.instance`), and the journal writer
writes a session's rows only while this instance holds its lease (`fenced`), so a partitioned instance that comes back
cannot write over its successor.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy import text
from sqlalchemy.engine import Connection

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncEngine

LIVE_STATES = ("starting", "idle", "running", "awaiting-permission", "auth-required")
"""A session's stored state while its agent runs (`webclient.session.core.Session.shown_state`)."""
MID_TURN = ("running", "awaiting-permission")
"""Of those, a turn under way: taken over, it is resumed at once, not when someone opens it."""
FORGOTTEN_AFTER = 3600
"""Seconds after its last heartbeat an instance's row is deleted."""


@dataclass(frozen=True)
class Instance:
    """An instance as its last heartbeat described it."""

    id: str
    address: str | None
    draining: bool
    agents: int
    memory: int
    labels: frozenset[str]
    """What it offers (``WEBCLIENT_INSTANCE_LABELS``)."""


@dataclass(frozen=True)
class Taken:
    """This instance holds the lease now; ``before``: the instance whose lease had expired, by its address if it gave
    one (None: nobody's), and the session's stored state (what it was doing when its holder last wrote)."""

    before: str | None
    state: str


@dataclass(frozen=True)
class Held:
    """Another instance holds the lease: requests for the session go to ``address`` (None: it gave none)."""

    instance: str
    address: str | None


async def register(engine: AsyncEngine, me: str, address: str | None, labels: Collection[str] = ()) -> None:
    """This instance's row, at start; instances not heard of for `FORGOTTEN_AFTER` seconds go."""
    async with engine.begin() as connection:
        await connection.execute(
            text(
                "INSERT INTO instances (id, address, started, seen, labels) "
                "VALUES (:me, :address, now(), now(), :labels)"
            ),
            {"me": me, "address": address, "labels": ",".join(sorted(labels))},
        )
        forgotten = "DELETE FROM instances WHERE seen < now() - make_interval(secs => :after)"
        await connection.execute(text(forgotten), {"after": FORGOTTEN_AFTER})


async def forget_earlier(engine: AsyncEngine, me: str, address: str) -> int:
    """This instance was found listening at ``address`` (it asked itself there): any other instance registered there
    is this one before a restart, dead. Its sessions are as after any restart (shown stopped until someone resumes
    them), not taken over: their leases and its row go. Returns how many leases went."""
    async with engine.begin() as connection:
        before = "SELECT id FROM instances WHERE address = :address AND id <> :me"
        values = {"address": address, "me": me}
        gone = await connection.execute(text(f"DELETE FROM session_leases WHERE instance IN ({before})"), values)
        await connection.execute(text(f"DELETE FROM instances WHERE id IN ({before})"), values)
        return gone.rowcount or 0


async def heartbeat(
    engine: AsyncEngine, me: str, ttl: float, draining: bool, agents: int, memory: int
) -> tuple[set[str], list[Instance]]:
    """Renew every lease this instance holds and say how it is: the sessions whose leases it still holds, and every
    instance heard of within ``ttl`` seconds (itself included), for placement."""
    async with engine.begin() as connection:
        await connection.execute(
            text(
                "UPDATE instances SET seen = now(), draining = :draining, agents = :agents, memory = :memory "
                "WHERE id = :me"
            ),
            {"me": me, "draining": draining, "agents": agents, "memory": memory},
        )
        renewed = await connection.execute(
            text(
                "UPDATE session_leases SET expires = now() + make_interval(secs => :ttl) "
                "WHERE instance = :me AND expires > now() RETURNING session_id"
            ),
            {"me": me, "ttl": ttl},
        )
        held = {row[0] for row in renewed}
        alive = await connection.execute(
            text(
                "SELECT id, address, draining, agents, memory, labels FROM instances "
                "WHERE seen > now() - make_interval(secs => :ttl) ORDER BY id"
            ),
            {"ttl": ttl},
        )
        instances = [
            Instance(
                row.id,
                row.address,
                row.draining,
                row.agents,
                row.memory,
                frozenset(filter(None, row.labels.split(","))),
            )
            for row in alive
        ]
    return held, instances


async def take(engine: AsyncEngine, session_id: str, me: str, ttl: float) -> Taken | Held | None:
    """Take the session's lease if nobody holds it or its holder's expired; else who holds it. None: no such session."""
    async with engine.begin() as connection:
        state = (
            await connection.execute(text("SELECT state FROM sessions WHERE id = :id"), {"id": session_id})
        ).first()
        if state is None:
            return None
        # Not waiting long on a lock: an instance cut off mid-write holds one until PostgreSQL ends its transaction.
        await connection.execute(text("SET LOCAL lock_timeout = '1s'"))
        lease = (
            await connection.execute(
                text(
                    "SELECT l.instance, l.expires <= now() AS expired, i.address FROM session_leases l "
                    "LEFT JOIN instances i ON i.id = l.instance WHERE l.session_id = :id FOR UPDATE OF l"
                ),
                {"id": session_id},
            )
        ).first()
        values = {"id": session_id, "me": me, "ttl": ttl}
        if lease is None:
            inserted = await connection.execute(
                text(
                    "INSERT INTO session_leases (session_id, instance, expires) "
                    "VALUES (:id, :me, now() + make_interval(secs => :ttl)) ON CONFLICT DO NOTHING RETURNING instance"
                ),
                values,
            )
            if inserted.first() is not None:
                return Taken(None, state[0])
            return None  # taken meanwhile: the caller asks again
        if lease.instance != me and not lease.expired:
            return Held(lease.instance, lease.address)
        await connection.execute(
            text(
                "UPDATE session_leases SET instance = :me, expires = now() + make_interval(secs => :ttl) "
                "WHERE session_id = :id"
            ),
            values,
        )
        return Taken(None if lease.instance == me else lease.address or lease.instance, state[0])


def claim_new(connection: Connection, session_ids: Collection[str], me: str, ttl: float) -> None:
    """The leases of sessions this instance just made, in the transaction that writes their rows (the journal
    writer's, sync): nobody else can know their ids yet, and what they record next is this instance's to write."""
    connection.execute(
        text(
            "INSERT INTO session_leases (session_id, instance, expires) "
            "VALUES (:id, :me, now() + make_interval(secs => :ttl))"
        ),
        [{"id": session_id, "me": me, "ttl": ttl} for session_id in session_ids],
    )


async def release(engine: AsyncEngine, me: str, session_ids: Iterable[str] | None = None) -> None:
    """Let go of some of this instance's leases; None: all of them, as it stops, expired rather than deleted, so that
    the sessions whose agents it stopped mid-turn are taken over (`orphans`)."""
    async with engine.begin() as connection:
        if session_ids is None:
            await connection.execute(text("UPDATE session_leases SET expires = now() WHERE instance = :me"), {"me": me})
            await connection.execute(text("DELETE FROM instances WHERE id = :me"), {"me": me})
            return
        for session_id in session_ids:
            await connection.execute(
                text("DELETE FROM session_leases WHERE instance = :me AND session_id = :id"),
                {"me": me, "id": session_id},
            )


async def orphans(engine: AsyncEngine, limit: int) -> list[str]:
    """Sessions whose holder's lease expired while their agent ran (their instance died or lost the database): the
    ones mid-turn first, then the most recently active."""
    async with engine.connect() as connection:
        rows = await connection.execute(
            text(
                "SELECT s.id FROM session_leases l JOIN sessions s ON s.id = l.session_id "
                "WHERE l.expires <= now() AND s.state = ANY(:live) "
                "ORDER BY s.state = ANY(:mid) DESC, s.last_activity DESC LIMIT :limit"
            ),
            {"limit": limit, "live": list(LIVE_STATES), "mid": list(MID_TURN)},
        )
        return [row[0] for row in rows]


async def running(engine: AsyncEngine) -> dict[str, int]:
    """Sessions whose agent runs, by the instance that holds them: the load placement compares (exact as of now: a
    session's lease is written with its row, before anyone is sent to it)."""
    async with engine.connect() as connection:
        found = await connection.execute(
            text(
                "SELECT l.instance, count(*) FROM session_leases l JOIN sessions s ON s.id = l.session_id "
                "WHERE l.expires > now() AND s.state = ANY(:live) GROUP BY l.instance"
            ),
            {"live": list(LIVE_STATES)},
        )
        return {instance: int(count) for instance, count in found}


async def owned_elsewhere(engine: AsyncEngine, me: str, owner: str) -> tuple[int, int]:
    """``owner``'s sessions that other instances run: how many are live (sleeping ones too) and how many have their
    agent running, for the per-person limits (`webclient.agents.limits`)."""
    async with engine.connect() as connection:
        found = await connection.execute(
            text(
                "SELECT count(*) FILTER (WHERE s.state = ANY(:live) OR s.state = 'sleeping'), "
                "count(*) FILTER (WHERE s.state = ANY(:live)) "
                "FROM sessions s JOIN session_leases l ON l.session_id = s.id "
                "WHERE s.owner = :owner AND l.instance <> :me AND l.expires > now()"
            ),
            {"owner": owner, "me": me, "live": list(LIVE_STATES)},
        )
        live, running = found.one()
    return int(live), int(running)


async def owners_elsewhere(engine: AsyncEngine, me: str, owners: Collection[str]) -> dict[str, tuple[int, int]]:
    """`owned_elsewhere` for each of ``owners`` at once (those with nothing elsewhere left out)."""
    if not owners:
        return {}
    async with engine.connect() as connection:
        found = await connection.execute(
            text(
                "SELECT s.owner, count(*) FILTER (WHERE s.state = ANY(:live) OR s.state = 'sleeping'), "
                "count(*) FILTER (WHERE s.state = ANY(:live)) "
                "FROM sessions s JOIN session_leases l ON l.session_id = s.id "
                "WHERE s.owner = ANY(:owners) AND l.instance <> :me AND l.expires > now() GROUP BY s.owner"
            ),
            {"owners": list(owners), "me": me, "live": list(LIVE_STATES)},
        )
        return {owner: (int(live), int(running)) for owner, live, running in found}


def fenced(connection: Connection, me: str, session_ids: Collection[str]) -> set[str]:
    """Of ``session_ids``, those whose lease this instance holds, locked until the transaction ends (a takeover waits
    for it): the journal writer's check, in its own transaction (sync: the writer's thread)."""
    if not session_ids:
        return set()
    rows = connection.execute(
        text(
            "SELECT session_id FROM session_leases WHERE instance = :me AND expires > now() "
            "AND session_id = ANY(:ids) FOR SHARE"
        ),
        {"me": me, "ids": list(session_ids)},
    )
    return {row[0] for row in rows}
