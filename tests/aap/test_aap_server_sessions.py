"""The sessions an AAP server already has (``GET /sessions``) are listed on the agent's page and continued here, in
the same conversation on the server."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator

import pytest

from tests.support.aap_servers import demo_aap_server
from tests.support.restarts import drive, session_page, thread_html
from tests.support.servers import ServerFactory
from tests.support.urls import URLS
from webclient.aap.client import AapClient


@pytest.fixture(scope="module")
def remote() -> Iterator[str]:
    with demo_aap_server() as url:
        yield url


async def a_session_made_elsewhere(url: str) -> str:
    client = AapClient(url)
    try:
        session_id = await client.create_session({"name": "demo"})
        async for _ in client.turn(session_id, {"stream": "none", "messages": [{"role": "user", "content": "hi"}]}):
            pass
        return session_id
    finally:
        await client.close()


def test_a_session_of_the_server_is_continued_here(remote: str, start_server: ServerFactory) -> None:
    elsewhere = asyncio.run(a_session_made_elsewhere(remote))
    server = start_server(agent=remote)
    with server.http() as http:
        listing = http.get(URLS.for_("agent_sessions", agent="agent"))
        assert f'data-agent-session-id="{elsewhere}"' in listing.text
        form = {"csrf": re.search(r'name="csrf" value="([^"]+)"', listing.text).group(1)}  # type: ignore[union-attr]
        created = http.post(
            URLS.for_("new_session"),
            data={**form, "agent": "agent", "continue": elsewhere, "workspace": str(server.workspace)},
        )
        assert created.status_code == 303
        session_id = created.headers["location"].rsplit("/", 1)[1]
    asyncio.run(drive(server, ["hello again"], session_id=session_id, resume=False))
    thread = thread_html(session_page(server, session_id))
    assert "taken up again" in session_page(server, session_id)
    assert "Hello from a" in thread
    assert asyncio.run(user_messages(remote, elsewhere)) == ["hi", "hello again"]  # one conversation, there


async def user_messages(url: str, session_id: str) -> list[str]:
    client = AapClient(url)
    try:
        return [m["content"] for m in await client.history(session_id, "full") if m["role"] == "user"]
    finally:
        await client.close()
