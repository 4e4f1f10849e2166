"""Shares and the audit log are kept in the store, on both databases: after a restart a driver still drives, and
the log still says who did what."""

from __future__ import annotations

import asyncio
import signal
import time
from pathlib import Path

import httpx
import pytest

from tests.support.people import TEAM, as_person
from tests.support.restarts import stop, store_env, until
from tests.support.servers import Server, ServerFactory
from tests.support.team import new_session, page_socket, prompt
from tests.support.urls import URLS


def http(server: Server, name: str, admin: bool = False) -> httpx.Client:
    client = httpx.Client(
        base_url=server.url, headers={**as_person(name, ["admins"] if admin else []), "Origin": server.url}
    )
    server.clients.append(client)
    return client


async def bob_prompts(server: Server, session_id: str) -> None:
    async with page_socket(server, session_id, "bob") as (bob, nonce):
        await prompt(bob, "hello from bob", nonce)  # sent once the agent is ready
        await until(bob, 'data-role="agent-message"')


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)  # PostgreSQL: tests/store
def test_shares_and_the_audit_log_outlive_a_restart(
    start_server: ServerFactory, database_url: str, tmp_path: Path
) -> None:
    env = {**TEAM, **store_env(database_url, tmp_path)}
    first = start_server(**env)
    session_id = new_session(first, "alice", ["admins"])
    shared = http(first, "alice", admin=True).post(
        URLS.for_("add_share", session_id=session_id), data={"kind": "person", "grantee": "bob", "role": "drive"}
    )
    assert shared.status_code == 303
    asyncio.run(bob_prompts(first, session_id))
    time.sleep(0.3)
    stop(first, signal.SIGTERM)

    second = start_server(**env)
    assert 'id="composer"' in http(second, "bob").get(URLS.for_("session", session_id=session_id)).text
    exported = http(second, "alice", admin=True).get(
        URLS.for_("session_audit", session_id=session_id), params={"format": "csv"}
    )
    lines = exported.text.splitlines()
    assert lines[0] == "id,at,time,session,person,name,action,detail"
    assert [line.split(",")[4:7] for line in lines[1:]] == [["alice", "alice", "share"], ["bob", "bob", "prompt"]]
