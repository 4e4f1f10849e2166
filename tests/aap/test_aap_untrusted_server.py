"""A remote (AAP) server is as untrusted as an agent: a giant event, an endless or silent stream, events of unknown
names or for another session, answers too big or not JSON. Through the real web server, with the misbehaving AAP
server (``tests/agents/aap_misbehaving.py``) in its own process: each is bounded and shown, and neither the server
nor another session waits for it."""

from __future__ import annotations

import asyncio
import contextlib
import html
import json
import re
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
import websockets
from websockets.asyncio.client import ClientConnection

from tests.support.aap_servers import aap_server
from tests.support.servers import AGENTS, Server, ServerFactory
from tests.support.urls import URLS, socket_at

pytestmark = pytest.mark.process  # each test starts the server as a process: its subject

MIB = 1024 * 1024


@contextlib.contextmanager
def rough(tmp_path: Path, **env: str) -> Iterator[str]:
    """The misbehaving AAP server's URL."""
    command = [sys.executable, str(AGENTS / "aap_misbehaving.py")]
    with aap_server(command, RECORD_FILE=str(tmp_path / "received.jsonl"), **env) as url:
        yield url


def web_server(start_server: ServerFactory, tmp_path: Path, url: str, **env: str) -> Server:
    """The web server offering the rough remote agent and the (ACP) demo agent, with ``env``'s limits."""
    workspace = tmp_path / "project"
    workspace.mkdir(exist_ok=True)
    config = tmp_path / "agents.toml"
    config.write_text(f'[agents.rough]\nurl = "{url}"\nworkspace = "{workspace}"\n')  # the demo is built in
    # Its own process: what these servers send is the subject (its memory, what it reads), and a flood would hold the
    # interpreter's lock that the test's own client needs.
    return start_server(None, WEBCLIENT_CONFIG=str(config), process=True, **env)


@contextlib.asynccontextmanager
async def page(server: Server, agent: str) -> AsyncIterator[tuple[ClientConnection, str]]:
    """A new session of ``agent``, its page's socket once the agent is ready, and the prompt nonce."""
    async with httpx.AsyncClient(base_url=server.url, headers=server.headers) as http:
        response = await http.post(URLS.for_("new_session"), data={"agent": agent})
    assert response.status_code == 303, response.text[:300]
    url = socket_at(server.url, response.headers["location"])
    async with websockets.connect(url, additional_headers=server.headers, max_size=None) as socket:
        found = re.search(r'id="prompt-nonce" value="([^"]+)"', str(await socket.recv()))
        assert found is not None
        await until(socket, 'data-agent-state="ready"')
        yield socket, found.group(1)


async def until(socket: ClientConnection, mark: str, seconds: float = 30) -> str:
    """The frames (HTML unescaped) up to the first that holds ``mark``, joined."""
    seen = []
    async with asyncio.timeout(seconds):
        while True:
            seen.append(html.unescape(str(await socket.recv())))
            if mark in seen[-1]:
                return "".join(seen)


async def prompt(socket: ClientConnection, nonce: str, text: str) -> None:
    await socket.send(json.dumps({"action": "prompt", "prompt": text, "nonce": f"{nonce}-{text}-{time.time()}"}))


async def turn(socket: ClientConnection, nonce: str, text: str, seconds: float = 60) -> str:
    """Send ``text`` and return every frame until the turn is over: the first idle frame once the prompt is shown
    (the two may come in one frame when the turn is quick)."""
    await prompt(socket, nonce, text)
    seen, shown = [], False
    async with asyncio.timeout(seconds):
        while True:
            seen.append(html.unescape(str(await socket.recv())))
            shown = shown or text in seen[-1]
            if shown and 'data-turn-state="idle"' in seen[-1]:
                return "".join(seen)


def said_ok(frames: str) -> bool:
    """Whether the agent's "ok" reached the page: whole, or (its frames split under load) as its streaming view:
    a compact record whose rest is the paragraph up to the text (``<p>ok``) and, in a field of its own, the tail
    and closing tag that the finished message's edit then takes away."""
    return re.search(r'<p>ok(\x1f?<span class="md-tail"></span>)?</p>', frames) is not None


def peak_rss_mib(server: Server) -> float:
    """The server process's peak resident memory so far (``VmHWM``), read from /proc."""
    status = Path(f"/proc/{server.process.pid}/status").read_text()
    found = re.search(r"^VmHWM:\s+(\d+) kB", status, re.M)
    assert found is not None
    return int(found.group(1)) / 1024


def read_mib(server: Server) -> float:
    """All the web server process has read so far (``rchar``: sockets and files alike), from /proc.

    What the client really took in, counted where it reads. The rough server cannot count it: once the client has
    gone, uvicorn's ``send`` drops each chunk without a word, so its generator runs on through the whole answer."""
    found = re.search(r"^rchar:\s+(\d+)$", Path(f"/proc/{server.process.pid}/io").read_text(), re.M)
    assert found is not None
    return int(found.group(1)) / MIB


async def answers(server: Server) -> bool:
    """Whether ``GET /`` is answered while a turn floods: a blocked event loop would not answer until the turn ended
    (how fast it answers is measured in bench/aap_flood.py, not here)."""
    async with httpx.AsyncClient(base_url=server.url, headers=server.headers, timeout=10) as http:
        return (await http.get("/")).status_code == 200


@pytest.mark.parametrize("word", ["giant-line", "giant-event"])
def test_a_giant_event_is_cut_at_the_bound_and_its_connection_dropped(
    start_server: ServerFactory, tmp_path: Path, word: str
) -> None:
    """One ``data:`` line of 100 MiB, or one event of 1,600 lines: reading stops at 8 MiB (the default bound), the
    person is told which setting, the server's memory stays put, and the session goes on."""
    with rough(tmp_path) as url:
        server = web_server(start_server, tmp_path, url)

        async def scenario() -> None:
            async with page(server, "rough") as (socket, nonce):
                before, read_before = peak_rss_mib(server), read_mib(server)
                frames = await turn(socket, nonce, word)
                assert "over 8 MiB" in frames and "WEBCLIENT_AAP_EVENT_MB" in frames, frames[-3000:]
                assert peak_rss_mib(server) - before < 60
                assert read_mib(server) - read_before < 50  # the connection was dropped: the rest was never read
                assert said_ok(await turn(socket, nonce, "hello"))  # the session goes on

        asyncio.run(scenario())


def test_a_stream_past_the_turn_size_is_stopped(start_server: ServerFactory, tmp_path: Path) -> None:
    with rough(tmp_path) as url:
        server = web_server(start_server, tmp_path, url, WEBCLIENT_AAP_TURN_MB="2")

        async def scenario() -> None:
            async with page(server, "rough") as (socket, nonce):
                frames = await turn(socket, nonce, "endless")
                assert "over 2 MiB" in frames and "WEBCLIENT_AAP_TURN_MB" in frames, frames[-3000:]

        asyncio.run(scenario())


def test_a_turn_past_its_time_is_stopped(start_server: ServerFactory, tmp_path: Path) -> None:
    with rough(tmp_path) as url:
        server = web_server(start_server, tmp_path, url, WEBCLIENT_AAP_TURN_MINUTES="0.05")

        async def scenario() -> None:
            async with page(server, "rough") as (socket, nonce):
                began = time.monotonic()
                frames = await turn(socket, nonce, "silent")
                assert "WEBCLIENT_AAP_TURN_MINUTES" in frames, frames[-3000:]
                assert time.monotonic() - began < 20

        asyncio.run(scenario())


def test_a_silent_stream_times_out_with_a_notice(start_server: ServerFactory, tmp_path: Path) -> None:
    with rough(tmp_path) as url:
        server = web_server(start_server, tmp_path, url, WEBCLIENT_AAP_IDLE_SECONDS="1")

        async def scenario() -> None:
            async with page(server, "rough") as (socket, nonce):
                frames = await turn(socket, nonce, "silent", seconds=20)
                assert "sent nothing for 1 s" in frames and "WEBCLIENT_AAP_IDLE_SECONDS" in frames, frames[-3000:]
                assert said_ok(await turn(socket, nonce, "hello"))

        asyncio.run(scenario())


@pytest.mark.parametrize("word", ["endless", "silent"])
def test_a_turn_that_never_stops_blocks_nothing_and_stop_ends_it_at_once(
    start_server: ServerFactory, tmp_path: Path, word: str
) -> None:
    """While one session's server floods (or says nothing), another session's agent answers, the index answers
    before the turn ends, and Stop ends the turn."""
    with rough(tmp_path) as url:
        server = web_server(start_server, tmp_path, url)

        async def scenario() -> None:
            async with page(server, "rough") as (socket, nonce), page(server, "demo") as (other, other_nonce):
                await prompt(socket, nonce, word)
                await until(socket, word)
                await asyncio.sleep(1)
                assert await answers(server)
                assert "agent-message" in await turn(other, other_nonce, "help")
                assert await answers(server)
                await socket.send(json.dumps({"action": "cancel"}))
                await until(socket, 'data-turn-state="idle"', 10)

        asyncio.run(scenario())


def test_unknown_events_are_shown_once_and_ignored(start_server: ServerFactory, tmp_path: Path) -> None:
    with rough(tmp_path) as url:
        server = web_server(start_server, tmp_path, url)

        async def scenario() -> None:
            async with page(server, "rough") as (socket, nonce):
                session_id = socket.request.path.split("/")[2]  # type: ignore[union-attr]
                frames = await turn(socket, nonce, "unknown")
                assert said_ok(frames), frames[-3000:]
                for name in ("surprise", "outbox", "message"):
                    assert f"an event this client does not know: {name!r}" in frames, frames[-3000:]
                await turn(socket, nonce, "unknown")  # once a session: not again on the next turn
            async with httpx.AsyncClient(base_url=server.url, headers=server.headers) as http:
                shown = html.unescape((await http.get(URLS.for_("session", session_id=session_id))).text)
            assert shown.count("does not know: 'surprise'") == 1

        asyncio.run(scenario())


def test_events_for_another_session_or_turn_are_ignored_and_shown(start_server: ServerFactory, tmp_path: Path) -> None:
    with rough(tmp_path) as url:
        server = web_server(start_server, tmp_path, url)

        async def scenario() -> None:
            async with page(server, "rough") as (socket, nonce):
                frames = await turn(socket, nonce, "other-session")
                assert said_ok(frames), frames[-3000:]
                assert "LEAKED" not in frames and "c-other" not in frames
                assert "for another session ('someone-else')" in frames, frames[-3000:]
                assert "for another turn ('turn-0')" in frames

        asyncio.run(scenario())


def test_an_event_that_is_not_json_is_shown(start_server: ServerFactory, tmp_path: Path) -> None:
    with rough(tmp_path) as url:
        server = web_server(start_server, tmp_path, url)

        async def scenario() -> None:
            async with page(server, "rough") as (socket, nonce):
                frames = await turn(socket, nonce, "broken-json")
                assert said_ok(frames), frames[-3000:]
                assert "whose data is not JSON" in frames and "{not json" in frames, frames[-3000:]

        asyncio.run(scenario())


@pytest.mark.parametrize(
    ("answers", "said"),
    [
        ("giant-meta", "GET /meta: the AAP server's answer is over 8 MiB (WEBCLIENT_AAP_EVENT_MB)"),
        ("giant-create", "POST /sessions: the AAP server's answer is over 8 MiB (WEBCLIENT_AAP_EVENT_MB)"),
        ("broken-meta", "GET /meta: the AAP server's answer is not JSON"),
        ("gzip-meta", "GET /meta: the AAP server sent a compressed answer (gzip) not asked for"),
    ],
)
def test_plain_answers_too_big_or_not_json_are_refused_and_shown(
    start_server: ServerFactory, tmp_path: Path, answers: str, said: str
) -> None:
    with rough(tmp_path, ROUGH_ANSWERS=answers) as url:
        server = web_server(start_server, tmp_path, url)

        async def scenario() -> None:
            read_before = read_mib(server)
            async with httpx.AsyncClient(base_url=server.url, headers=server.headers) as http:
                response = await http.post(URLS.for_("new_session"), data={"agent": "rough"})
            before = peak_rss_mib(server)
            location = response.headers["location"]
            async with websockets.connect(
                socket_at(server.url, location), additional_headers=server.headers, max_size=None
            ) as socket:
                frames = await until(socket, said)
            assert "Traceback" not in frames
            assert peak_rss_mib(server) - before < 60
            assert read_mib(server) - read_before < 50  # the connection was dropped: the rest was never read

        asyncio.run(scenario())
