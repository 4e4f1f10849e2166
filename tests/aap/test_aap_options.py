"""A remote agent's options in the session's settings: a text option reaches the agent with the next turn, and a
secret one too, while the page, the journal and the protocol log never hold it."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.aap_servers import demo_aap_server
from tests.support.restarts import ready_page, session_page, until
from tests.support.servers import Server, ServerFactory

SECRET = "k-secret-9f3"


@pytest.fixture(scope="module")
def remote() -> Iterator[str]:
    with demo_aap_server() as url:
        yield url


async def set_options_and_greet(server: Server) -> str:
    async with ready_page(server) as (socket, nonce, session_id):
        await until(socket, 'data-agent-state="ready"')
        page = await asyncio.to_thread(session_page, server, session_id)
        assert 'data-control="option:language"' in page and 'value="English"' in page
        assert 'type="password"' in page and 'placeholder="not set"' in page
        for option, value in (("option:language", "French"), ("option:apiKey", SECRET)):
            await socket.send(json.dumps({"action": "set_setting", "setting_id": option, "value": value}))
        await until(socket, 'placeholder="set: type to replace"')
        await socket.send(json.dumps({"action": "prompt", "prompt": "hello", "nonce": nonce}))
        async with asyncio.timeout(30):  # the answer streams a few words a frame: read whole from the page
            while "I was asked to answer in French." not in await asyncio.to_thread(session_page, server, session_id):
                await asyncio.sleep(0.1)
    return session_id


def test_text_and_secret_options(remote: str, start_server: ServerFactory, tmp_path: Path) -> None:
    data = tmp_path / "data"
    server = start_server(agent=remote, WEBCLIENT_DATA_DIR=str(data))
    session_id = asyncio.run(set_options_and_greet(server))
    page = session_page(server, session_id)
    assert 'value="French"' in page and SECRET not in page
    assert "I was asked to answer in French." in page
    journal = sqlite3.connect(data / "webclient.sqlite3").execute("SELECT body FROM journal").fetchall()
    assert journal and not any(SECRET in body for (body,) in journal)
    assert any('"apiKey": "***"' in body for (body,) in journal)  # sent, and shown hidden in the journal
    remote_id = next(json.loads(body)["sessionId"] for (body,) in journal if '"answer": "POST /sessions"' in body)
    info = httpx.get(f"{remote}/sessions/{remote_id}").json()
    assert info["agent"]["options"]["apiKey"] == "***" and info["agent"]["options"]["language"] == "French"
