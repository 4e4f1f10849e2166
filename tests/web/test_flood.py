"""One session cannot stall the others: an agent that floods its session with tool calls, seen from raw web
sockets and the process table (the browser side is in test_flood_browser.py)."""

from __future__ import annotations

import asyncio
import json
import re
import secrets
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest
import websockets

from tests.support.servers import AGENTS, Server, ServerFactory
from tests.support.urls import URLS, socket_at

pytestmark = [pytest.mark.slow, pytest.mark.alone]  # floods: thousands of updates through the real server

FLOOD_AGENT = f"{sys.executable} {AGENTS / 'flood_agent.py'}"
READY = re.compile(r'<header id="session-status"[^>]*data-turn-state="idle"[^>]*data-agent-state="ready"')
WINDOW = 30
"""Entries a page gets at once (webclient.web.live.live_view.LiveView.WINDOW)."""


def new_session(server: Server) -> str:
    with server.http() as http:
        response = http.post(URLS.for_("new_session"))
    assert response.status_code == 303
    return str(response.headers["location"]).rsplit("/", 1)[1]


@asynccontextmanager
async def page_socket(server: Server, session_id: str) -> AsyncIterator[websockets.ClientConnection]:
    """A session page's web socket, once the agent is ready."""
    url = socket_at(server.url, session_id)
    async with websockets.connect(url, additional_headers=server.headers, max_size=None) as ws:
        async with asyncio.timeout(30):
            while not READY.search(str(await ws.recv())):
                pass
        yield ws


def prompt(text: str) -> str:
    return json.dumps({"action": "prompt", "prompt": text, "nonce": secrets.token_urlsafe(9)})


def turn_state(server: Server, session_id: str) -> str:
    with server.http() as http:
        html = http.get("/").text
    found = re.search(rf'data-session-id="{re.escape(session_id)}">.*?state-([\w-]+)', html, re.S)
    assert found is not None, html
    return found.group(1)


async def drain(ws: websockets.ClientConnection) -> None:
    """A page that reads every frame."""
    while True:
        await ws.recv()


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def test_a_flood_sends_windows_not_the_thread(start_server: ServerFactory) -> None:
    """20,000 tool calls to a page that reads everything: frames stay window-sized, and their sum stays far below
    what sending every card once would cost (each card is about 1 KB: 20 MB), let alone whole re-renders."""
    server = start_server(agent=FLOOD_AGENT, FLOOD_COUNT="20000")
    session_id = new_session(server)
    frames: list[int] = []

    async def scenario() -> None:
        async with page_socket(server, session_id) as ws:
            await ws.send(prompt("flood"))
            async with asyncio.timeout(90):
                while True:
                    frame = str(await ws.recv())
                    frames.append(len(frame.encode()))
                    if 'data-tool-call-id="flood-20000"' in frame:
                        break

    asyncio.run(scenario())
    assert max(frames) < 400_000, f"a frame of {max(frames):,} bytes: more than a window of cards"
    assert sum(frames) < 8_000_000, f"{sum(frames):,} bytes in {len(frames)} frames for one flood"


def test_another_session_answers_while_one_floods(start_server: ServerFactory) -> None:
    """A's thread is long (30,000 tool calls) and its agent floods again with A's page open and reading: B's
    prompt is still answered within seconds (it waited for whole re-renders of A's thread before)."""
    server = start_server(agent=FLOOD_AGENT, FLOOD_COUNT="30000")
    a, b = new_session(server), new_session(server)

    async def scenario() -> None:
        async with page_socket(server, b) as page_b:
            async with httpx.AsyncClient(base_url=server.url, headers=server.headers, timeout=60) as http:
                await http.post(URLS.for_("prompt", session_id=a), data={"prompt": "flood", "nonce": "first"})
                while await asyncio.to_thread(turn_state, server, a) != "idle":  # no page open: quick
                    await asyncio.sleep(0.2)
            url = socket_at(server.url, a)
            async with websockets.connect(url, additional_headers=server.headers, max_size=None) as page_a:
                reader = asyncio.create_task(drain(page_a))
                await page_a.send(prompt("flood 1000000"))
                await asyncio.sleep(1)
                await page_b.send(prompt("ping"))
                async with asyncio.timeout(5):
                    while "pong: ping" not in str(await page_b.recv()):
                        pass
                state = await asyncio.to_thread(turn_state, server, a)
                reader.cancel()
            assert state == "running", "the flood ended before B was asked"

    asyncio.run(scenario())


def test_an_ended_session_lets_go_of_its_memory(start_server: ServerFactory) -> None:
    """After "End", a big session's memory goes back (the server's RSS drops near where it was), and only the
    newest ``WEBCLIENT_MAX_ENDED_SESSIONS`` ended sessions stay: older ones answer 404 (without a store to rebuild
    them from: see tests/store for a forgotten session taken up again from the store)."""
    server = start_server(
        agent=FLOOD_AGENT, FLOOD_COUNT="20000", WEBCLIENT_MAX_ENDED_SESSIONS="1", WEBCLIENT_STORE="off", process=True
    )
    first = new_session(server)

    async def flood(session_id: str) -> None:
        async with page_socket(server, session_id) as ws:
            await ws.send(prompt("flood"))
            async with asyncio.timeout(90):
                while "flood-20000" not in str(await ws.recv()):
                    pass

    # A first flooded session, ended: what a server that has done some work looks like.
    asyncio.run(flood(first))
    with server.http() as http:
        assert http.post(URLS.for_("end_session", session_id=first)).status_code == 303
    baseline = rss_kib(server.process.pid)
    big = new_session(server)
    asyncio.run(flood(big))
    peak = rss_kib(server.process.pid)
    assert peak - baseline > 15_000, f"the flood should have cost memory: {baseline} -> {peak} KiB"
    with httpx.Client(base_url=server.url, headers=server.headers, timeout=30) as http:
        assert http.post(URLS.for_("end_session", session_id=big)).status_code == 303
        assert (
            http.get(URLS.for_("session", session_id=first)).status_code == 404
        )  # the older ended session is forgotten
        assert http.get(URLS.for_("session", session_id=big)).status_code == 200  # the newest one is still shown
        last = new_session(server)
        assert http.post(URLS.for_("end_session", session_id=last)).status_code == 303
        assert http.get(URLS.for_("session", session_id=big)).status_code == 404
        assert first not in http.get("/").text and big not in http.get("/").text
    deadline = time.monotonic() + 20  # the server collects a forgotten session a second after the request
    while (after := rss_kib(server.process.pid)) - baseline >= (peak - baseline) / 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert after - baseline < (peak - baseline) / 2, f"RSS {baseline} -> {peak} -> {after} KiB after ending it"


def test_a_session_page_holds_the_newest_window(start_server: ServerFactory) -> None:
    """A 20,000-call session's page renders the newest entries and a "Show earlier" sentinel, not the thread."""
    server = start_server(agent=FLOOD_AGENT, FLOOD_COUNT="20000")
    session_id = new_session(server)

    async def flood() -> None:
        async with page_socket(server, session_id) as ws:
            await ws.send(prompt("flood"))
            async with asyncio.timeout(90):
                while "flood-20000" not in str(await ws.recv()):
                    pass

    asyncio.run(flood())
    with server.http() as http:
        started = time.monotonic()
        html = http.get(URLS.for_("session", session_id=session_id)).text
        took = time.monotonic() - started
    assert html.count('data-role="tool-call"') == WINDOW
    assert 'data-tool-call-id="flood-20000"' in html and 'data-tool-call-id="flood-19970"' not in html
    assert 'data-action="show-earlier"' in html
    assert took < 5, f"the page took {took:.1f} s"
