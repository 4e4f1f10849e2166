"""``SIGTERM`` drains the server (a rolling deploy): from that moment ``/readyz`` fails and no session starts, the turn
under way runs to its end (within ``WEBCLIENT_DRAIN_SECONDS``) and is kept, then the server stops as it always did;
past the deadline the turn is cut and shows as interrupted after the restart; a second ``SIGTERM`` stops it at once.
The process is the subject (its signals, its exit), so each server is a process of its own."""

from __future__ import annotations

import asyncio
import html
import json
import signal
import subprocess
import time
from pathlib import Path

import httpx
import pytest
from websockets.asyncio.client import ClientConnection

from tests.support.restarts import ready_page, session_page, store_env, until
from tests.support.servers import Server, ServerFactory
from tests.support.urls import URLS

INTERRUPTED = "The server restarted during this turn"


async def prompt(socket: ClientConnection, nonce: str, text: str) -> None:
    """Send ``text`` once the agent is ready, and return once its turn runs."""
    await until(socket, 'data-agent-state="ready"')
    await socket.send(json.dumps({"action": "prompt", "prompt": text, "nonce": f"{nonce}-0"}))
    await until(socket, 'data-turn-state="running"')


def draining(server: Server) -> None:
    """Wait until the server says it drains (the signal is handled on its loop's next turn)."""
    deadline = time.monotonic() + 10
    while (answer := httpx.get(server.url + "/readyz", timeout=5)).text != "draining":
        assert answer.status_code == 200 and time.monotonic() < deadline, answer.text
        time.sleep(0.05)
    assert answer.status_code == 503


def exit_code(server: Server, seconds: float) -> int:
    assert server.process is not None
    try:
        return server.process.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"the server did not stop within {seconds} s") from None


@pytest.mark.process
def test_sigterm_lets_the_running_turn_finish_and_starts_no_session(
    start_server: ServerFactory, tmp_path: Path
) -> None:
    env = store_env("sqlite", tmp_path)
    server = start_server(process=True, WEBCLIENT_DRAIN_SECONDS="60", **env)
    assert httpx.get(server.url + "/readyz").text == "ok"

    async def drained() -> str:
        async with ready_page(server) as (socket, nonce, session_id):
            await prompt(socket, nonce, "run 8")  # a turn of 2.4 s: eight lines, 0.3 s apart
            assert server.process is not None
            server.process.send_signal(signal.SIGTERM)
            await asyncio.to_thread(draining, server)
            await until(socket, "The server is restarting")  # the open page says so at once
            async with httpx.AsyncClient(base_url=server.url, headers=server.headers) as http:
                refused = await http.post(URLS.for_("new_session"))
                assert refused.status_code == 503 and "The server is restarting" in html.unescape(refused.text)
                page = await http.get(URLS.for_("session", session_id=session_id))
                assert page.status_code == 200 and 'data-role="restarting"' in page.text  # pages keep working
            await until(socket, '"lines": 8')  # the turn's answer, on the page that asked
            return session_id

    session_id = asyncio.run(drained())
    assert exit_code(server, 30) == 0

    again = start_server(**env)
    page = html.unescape(session_page(again, session_id))
    assert '"lines": 8' in page and INTERRUPTED not in page  # kept, whole
    assert 'data-turn-state="ended"' in page  # stopped, as any stop leaves it: the next start takes it up


@pytest.mark.process
def test_past_the_deadline_the_turn_is_cut_and_shows_interrupted(start_server: ServerFactory, tmp_path: Path) -> None:
    env = store_env("sqlite", tmp_path)
    server = start_server(process=True, WEBCLIENT_DRAIN_SECONDS="1", **env)

    async def cut() -> str:
        async with ready_page(server) as (socket, nonce, session_id):
            await prompt(socket, nonce, "slow")  # 30 s of chunks
            assert server.process is not None
            server.process.send_signal(signal.SIGTERM)
            await asyncio.to_thread(draining, server)
            return session_id

    session_id = asyncio.run(cut())
    assert exit_code(server, 20) == 0  # the deadline, then the stop's own few seconds: well before the turn's end

    again = start_server(**env)
    assert INTERRUPTED in session_page(again, session_id)


@pytest.mark.process
def test_a_second_sigterm_stops_at_once(start_server: ServerFactory) -> None:
    server = start_server(process=True, WEBCLIENT_DRAIN_SECONDS="60")

    async def twice() -> None:
        async with ready_page(server) as (socket, nonce, _):
            await prompt(socket, nonce, "slow")  # 30 s of chunks
            assert server.process is not None
            server.process.send_signal(signal.SIGTERM)
            await asyncio.to_thread(draining, server)
            server.process.send_signal(signal.SIGTERM)

    asyncio.run(twice())
    exit_code(server, 20)  # neither the turn's 30 s nor the drain's 60
