"""A key for the agent's sign-in given over the page's socket (``sign_in_with_key``), on a team's server: it is
kept as the session owner's secret, since the agent runs with the owner's secrets, so only the owner may give
one. Bob, who drives Alice's session, is told so, and the agent gets nothing; Alice's key is kept as hers."""

from __future__ import annotations

import asyncio
import json
import sys
import time

from tests.people.test_revoke_sockets import ADMINS, share_with_bob
from tests.support.people import TEAM, person_client
from tests.support.restarts import until
from tests.support.servers import AGENTS, Server, ServerFactory
from tests.support.team import new_session, page_socket
from tests.support.urls import URLS

AGENT = f"{sys.executable} {AGENTS / 'login_agent.py'}"
KEY = {"action": "sign_in_with_key", "method_id": "openai-api-key", "var:LOGIN_OPENAI_KEY": "sk-from-the-page"}


def methods(server: Server) -> list[str]:
    return [m["method"] for m in server.received() if m.get("method") in ("initialize", "authenticate")]


async def give_key(server: Server, session_id: str, name: str, groups: list[str], said: str) -> None:
    async with page_socket(server, session_id, name, groups) as (page, _):
        await page.send(json.dumps(KEY))
        await until(page, said)


def test_only_the_sessions_owner_gives_its_agent_a_key(start_server: ServerFactory) -> None:
    server = start_server(agent=AGENT, LOGIN_KEYS="1", **TEAM)
    session_id = new_session(server, "alice", ADMINS)
    share_with_bob(server, session_id, "drive")
    deadline = time.monotonic() + 20
    while (
        "auth-required"
        not in person_client(server, "alice", ADMINS).get(URLS.for_("session", session_id=session_id)).text
    ):
        assert time.monotonic() < deadline, "the agent never asked for a sign-in"
        time.sleep(0.1)

    asyncio.run(give_key(server, session_id, "bob", [], "Only the session's owner can give its agent a key"))
    time.sleep(1)
    assert methods(server) == ["initialize"]  # not started again, not signed in
    assert "LOGIN_OPENAI_KEY" not in person_client(server, "bob").get(URLS.for_("secrets")).text
    assert "LOGIN_OPENAI_KEY" not in person_client(server, "alice", ADMINS).get(URLS.for_("secrets")).text

    asyncio.run(give_key(server, session_id, "alice", ADMINS, 'data-agent-state="ready"'))
    assert methods(server) == ["initialize", "initialize", "authenticate"]
    assert "LOGIN_OPENAI_KEY" in person_client(server, "alice", ADMINS).get(URLS.for_("secrets")).text
    assert "LOGIN_OPENAI_KEY" not in person_client(server, "bob").get(URLS.for_("secrets")).text
