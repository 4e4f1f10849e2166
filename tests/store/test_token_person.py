"""Token mode's one person is no person of a team: sessions (and secrets) made in token mode, on a store that a
team's server opens next, are not those of whoever the proxy names ``local`` (token mode's id until migration 0004),
nor of anyone it names with the id token mode has now (refused); token mode again has them all. On both databases,
with a store of before the migration (what token mode wrote then) as well as one it writes now."""

from __future__ import annotations

import asyncio
import re
from datetime import UTC, datetime

import httpx
from alembic import command
from alembic.config import Config
from sqlalchemy import Connection
from sqlalchemy import table as sql_table
from sqlalchemy.sql import column

from tests.support.people import TEAM, as_person
from tests.support.probes import new_session
from tests.support.servers import Server, ServerFactory, stop_server
from tests.support.urls import URLS
from webclient.people.person import LOCAL
from webclient.store.database import MIGRATIONS, create_engine

HTML = {"Accept": "text/html"}
LEGACY_SESSION = "made-in-token-mode-before"


def _config(connection: Connection) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    return config


def _as_token_mode_left_it(connection: Connection) -> None:
    """The store at revision 0003, with a session, a person row and a secret of token mode's ``local``."""
    command.upgrade(_config(connection), "0003")
    now = datetime.now(UTC)
    rows = {
        "sessions": {
            "id": LEGACY_SESSION,
            "agent": "test",
            "agent_command": "agent",
            "workspace": "/tmp",
            "created": now,
            "last_activity": now,
            "state": "ended",
            "owner": "local",
        },
        "people": {"id": "local", "name": "you", "admin": True, "first_seen": now, "last_seen": now},
        "secrets": {"person_id": "local", "name": "OPENAI_API_KEY", "value": "x", "updated": now},
    }
    for name, row in rows.items():
        connection.execute(sql_table(name, *(column(key) for key in row)).insert().values(**row))


async def store_of_before(url: str) -> None:
    engine = create_engine(url)
    try:
        async with engine.begin() as connection:
            await connection.run_sync(_as_token_mode_left_it)
    finally:
        await engine.dispose()


def listed(http: httpx.Client) -> set[str]:
    return set(re.findall(r'data-session-id="([^"]+)"', http.get("/", headers=HTML).text))


def secret_names(http: httpx.Client) -> list[str]:
    return re.findall(r'<tr data-secret="([^"]+)"', http.get(URLS.for_("secrets"), headers=HTML).text)


def as_person_on(server: Server, name: str) -> httpx.Client:
    http = httpx.Client(base_url=server.url, headers={**as_person(name), "Origin": server.url})
    server.clients.append(http)
    return http


def test_sessions_of_token_mode_stay_the_operators_on_a_teams_store(
    start_server: ServerFactory, database_url: str
) -> None:
    asyncio.run(store_of_before(database_url))
    store = {"WEBCLIENT_DATABASE_URL": database_url}
    token_mode = start_server(**store)
    made_now = new_session(token_mode)
    assert listed(token_mode.http()) >= {LEGACY_SESSION, made_now}
    stop_server(token_mode)

    team = start_server(**TEAM, **store)
    local = as_person_on(team, "local")
    assert local.get("/", headers=HTML).status_code == 200
    assert listed(local) == set()
    for session_id in (LEGACY_SESSION, made_now):
        assert local.get(URLS.for_("session", session_id=session_id), headers=HTML).status_code == 404
    assert secret_names(local) == []
    operator = as_person_on(team, LOCAL.id)
    assert operator.get("/", headers=HTML).status_code == 403  # no proxy names token mode's person
    assert operator.get(URLS.for_("session", session_id=made_now), headers=HTML).status_code == 403
    stop_server(team)

    again = start_server(**store)
    assert listed(again.http()) >= {LEGACY_SESSION, made_now}
    assert again.http().get(URLS.for_("session", session_id=made_now), headers=HTML).status_code == 200
    assert secret_names(again.http()) == ["OPENAI_API_KEY"]


def _owners_down_and_up(connection: Connection) -> tuple[set[str], set[str]]:
    """The sessions' owners once the store is taken back to revision 0003, and again at the newest."""
    config = _config(connection)
    owners = sql_table("sessions", column("owner"))
    command.downgrade(config, "0003")
    down = {str(owner) for owner in connection.execute(owners.select()).scalars()}
    command.upgrade(config, "head")
    return down, {str(owner) for owner in connection.execute(owners.select()).scalars()}


async def migrated_down_and_up(url: str) -> tuple[set[str], set[str]]:
    engine = create_engine(url)
    try:
        async with engine.begin() as connection:
            await connection.run_sync(_as_token_mode_left_it)
            await connection.run_sync(lambda sync: command.upgrade(_config(sync), "head"))
            return await connection.run_sync(_owners_down_and_up)
    finally:
        await engine.dispose()


def test_the_migration_goes_back_and_forth(database_url: str) -> None:
    assert asyncio.run(migrated_down_and_up(database_url)) == ({"local"}, {LOCAL.id})
