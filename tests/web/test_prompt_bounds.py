"""No one person's prompts fill the server: a prompt's text is bounded (``WEBCLIENT_MAX_PROMPT_MB``), the queue in
number and bytes (``WEBCLIENT_MAX_QUEUED_PROMPTS``, ``WEBCLIENT_MAX_QUEUE_MB``), and the page's socket in message
size; a refusal says which limit, to the person (a notice on the page) and to a script (413 and the sentence).

Through the real server process and its page socket; what reached the agent is read from the scripted agent's record.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import httpx
import pytest
import websockets
from websockets.asyncio.client import ClientConnection

from tests.support.live import AppFactory, LiveSocket
from tests.support.restarts import ready_page, until
from tests.support.servers import Server, ServerFactory
from tests.support.urls import URLS, socket_at

MIB = 1024 * 1024


def rss_mib(server: Server) -> float:
    """The server process's resident memory, read from /proc."""
    found = re.search(r"VmRSS:\s+(\d+) kB", Path(f"/proc/{server.process.pid}/status").read_text())
    assert found is not None
    return int(found.group(1)) / 1024


def prompts_received(server: Server) -> list[str]:
    return [text[:40] for text in server.prompts_received()]


async def send(socket: ClientConnection, text: str, nonce: str) -> None:
    await socket.send(json.dumps({"action": "prompt", "prompt": text, "nonce": nonce}))


async def queued(socket: ClientConnection, count: int) -> str:
    """The frame where the page shows ``count`` queued prompts."""
    async with asyncio.timeout(20):
        while True:
            frame = str(await socket.recv())
            if 'id="prompt-queue"' in frame and frame.count('class="queued-form"') == count:
                return frame


def test_a_prompt_over_the_bound_is_refused_with_a_message_and_never_reaches_the_agent(start_app: AppFactory) -> None:
    app = start_app()
    too_long = "x" * (MIB + 1)  # the default bound: 1 MiB
    session = app.new_session()
    with app.live(session) as page:
        page.until('data-agent-state="ready"')
        page.prompt(too_long)
        notice = page.until("WEBCLIENT_MAX_PROMPT_MB")
        assert "Not sent" in notice and "1,048,577 bytes" in notice
        page.prompt("hello")
        page.until('data-turn-state="idle"')
    script = app.client.post(f"{session}/prompt", data={"prompt": too_long, "nonce": "script-1"})
    assert script.status_code == 413 and "WEBCLIENT_MAX_PROMPT_MB" in script.text
    assert [text[:40] for text in app.prompts_received()] == ["hello"]


def queued_in(page: LiveSocket, count: int) -> str:
    """The frame where the page shows ``count`` queued prompts."""
    while True:
        frame = page.frame(20)
        if 'id="prompt-queue"' in frame and frame.count('class="queued-form"') == count:
            return frame


def test_the_queue_refuses_past_its_count_and_its_bytes(start_app: AppFactory) -> None:
    app = start_app(WEBCLIENT_MAX_QUEUED_PROMPTS="3", WEBCLIENT_MAX_QUEUE_MB="0.5")
    with app.live(app.new_session()) as page:
        page.until('data-agent-state="ready"')
        page.prompt("slow")  # keeps the agent busy: what follows is queued
        page.until('data-turn-state="running"')
        page.prompt("first")
        queued_in(page, 1)
        page.prompt("big " + "y" * 400_000)
        queued_in(page, 2)
        page.prompt("bigger " + "z" * 200_000)  # 600 KB in all: over 0.5 MiB
        notice = page.until("WEBCLIENT_MAX_QUEUE_MB")
        assert "Not sent" in notice and "The queue would hold" in notice
        page.prompt("third")
        frame = queued_in(page, 3)
        assert "bigger" not in frame
        page.prompt("fourth")
        notice = page.until("WEBCLIENT_MAX_QUEUED_PROMPTS=3")
        assert "3 prompts are queued" in notice
        # An edit that would grow the queue past its bytes is refused too.
        item = re.search(r'name="item_id" value="([^"]+)"', frame)
        assert item is not None
        page.send("queue_edit", item_id=item.group(1), text="w" * 300_000)
        page.until("Not changed")
        page.send("cancel")
        page.until('data-turn-state="idle"')
    assert [text[:40] for text in app.prompts_received()] == ["slow"]


@pytest.mark.process
def test_thirty_prompts_of_8_mib_do_not_grow_the_server(start_server: ServerFactory) -> None:
    """The issue's measure: 30 prompts of 8 MiB queued behind a turn took the server from 101 to 990 MiB."""
    server = start_server(process=True)
    prompt = "p" * (8 * MIB)

    async def scenario() -> None:
        async with ready_page(server) as (socket, nonce, session_id):
            await until(socket, 'data-agent-state="ready"')
            await send(socket, "slow", nonce + "-turn")
            await until(socket, 'data-turn-state="running"')
        before = rss_mib(server)
        url = socket_at(server.url, session_id)
        for number in range(30):
            async with websockets.connect(url, additional_headers=server.headers, max_size=None) as socket:
                await socket.recv()
                try:
                    await send(socket, prompt, f"{nonce}-{number}")
                    await until(socket, "WEBCLIENT_MAX_PROMPT_MB", seconds=10)
                except websockets.ConnectionClosed as closed:  # over the socket's own message size
                    assert closed.rcvd is not None and closed.rcvd.code == 1009
        assert rss_mib(server) - before < 100
        async with httpx.AsyncClient(base_url=server.url, headers=server.headers) as http:
            page = (await http.get(URLS.for_("session", session_id=session_id))).text
        assert "pppppppp" not in page and 'data-role="queued"' not in page
        async with ready_page(server, session_id) as (socket, _, _):
            await socket.send(json.dumps({"action": "cancel"}))
            await until(socket, 'data-turn-state="idle"')

    asyncio.run(scenario())
    assert prompts_received(server) == ["slow"]


@pytest.mark.parametrize("name", ["WEBCLIENT_MAX_PROMPT_MB", "WEBCLIENT_MAX_QUEUED_PROMPTS", "WEBCLIENT_MAX_QUEUE_MB"])
def test_the_bounds_are_settings(name: str) -> None:
    from webclient.config import Settings

    with pytest.raises(ValueError, match=name):
        Settings.from_env({name: "-1"})
    assert Settings.from_env({name: "0"})  # 0: no limit
