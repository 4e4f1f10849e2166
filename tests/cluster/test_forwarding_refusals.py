"""What an instance forwards proves nothing it did not itself believe (two instances on one PostgreSQL, trusted-header
sign-in behind nginx, real processes): a person named by hand to the instance that does not run a session is nobody
on the one that does, and a forged instance token is no proof."""

from __future__ import annotations

import asyncio

import asyncpg
import httpx
import pytest

from tests.support.cluster import KEY
from tests.support.nginx import POOL, TEAM, behind_proxy, proxy_in_front
from tests.support.people import PROXY_SECRET, SECRET_FILE, naming
from tests.support.postgres import Cluster
from tests.support.servers import ServerFactory, free_port
from tests.support.urls import at

HTML = {"Accept": "text/html,application/xhtml+xml"}


async def owner_of(database: str, session_id: str) -> str:
    connection = await asyncpg.connect(database)
    try:
        return str(
            await connection.fetchval(
                "SELECT i.address FROM session_leases l JOIN instances i ON i.id = l.instance WHERE l.session_id = $1",
                session_id,
            )
        )
    finally:
        await connection.close()


@pytest.mark.process
def test_a_person_named_by_hand_to_the_instance_that_forwards_is_nobody_on_the_one_that_runs_the_session(
    start_server: ServerFactory, postgresql: Cluster
) -> None:
    database = postgresql.new_database()
    service = {
        "WEBCLIENT_DATABASE_URL": database,
        "WEBCLIENT_SECRET_KEY": KEY,
        **behind_proxy(free_port(), secret_file=SECRET_FILE),
    }
    first = start_server(process=True, **service)
    second = start_server(process=True, **service)
    instances = [server.url.removeprefix("http://") for server in (first, second)]
    with proxy_in_front(POOL, TEAM, secret=PROXY_SECRET, balanced=instances) as proxy:
        made = httpx.post(at(proxy.url, "new_session"), auth=proxy.auth("alice"), headers={"Origin": proxy.url})
        assert made.status_code == 303, proxy.log()
        session_path = made.headers["location"]
        session_id = session_path.rsplit("/", 1)[1]
        owner = asyncio.run(owner_of(database, session_id))
        other = second if owner == first.url else first
        assert owner in (first.url, second.url)
        # Through the proxy, as Alice, whichever instance nginx picks: hers.
        for _ in range(2):
            page = httpx.get(proxy.url + session_path, auth=proxy.auth("alice"), headers=HTML)
            assert page.status_code == 200, page.text[:300]
        # Straight to the instance that does not run it, naming Alice (and an admin) by hand: forwarded, but without
        # the name, which only the proxy may give: the owner sees nobody.
        forged = httpx.get(other.url + session_path, headers={**naming("alice", ["admins"]), **HTML})
        assert forged.status_code in (401, 403), forged.text[:300]
        assert "Signed in as" not in forged.text
        # A made-up instance token, sent straight to the owner, proves nothing either.
        guessed = {**naming("alice", ["admins"]), "X-Webclient-Instance": "0" * 64, **HTML}
        assert httpx.get(owner + session_path, headers=guessed).status_code in (401, 403)
