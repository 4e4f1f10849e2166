"""Restarting a server on the same store, and what a test compares across: a session driven over its socket, its
page and its thread."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import html
import json
import re
import signal
import sqlite3
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import websockets
from websockets.asyncio.client import ClientConnection

from tests.support.servers import Server, free_port, stop_server
from tests.support.urls import URLS, socket_at

PERMISSION_ASKED = "data-option-id"


def store_env(database_url: str, tmp_path: Path) -> dict[str, str]:
    """The same store for every server of a test: a data folder that outlives them, or the PostgreSQL database."""
    if database_url.startswith("sqlite"):
        return {"WEBCLIENT_DATA_DIR": str(tmp_path / "data")}
    # One instance restarted where it listened (the same port: `start_server` takes WEBCLIENT_PORT), not another
    # instance taking its sessions over, which tests/cluster is about.
    return {"WEBCLIENT_DATABASE_URL": database_url, "WEBCLIENT_PORT": str(free_port())}


def created(response: httpx.Response) -> str:
    """The page a POST that makes something sent the browser to; what the server said when it refused instead."""
    assert response.status_code == 303, f"{response.request.url} answered {response.status_code}: {response.text[:500]}"
    return response.headers["location"]


def thread_html(page: str) -> str:
    """The session page's thread: the ``<section id="thread">`` element, whole."""
    start = page.index('<section id="thread"')
    depth, at = 0, start
    for tag in re.finditer(r"<(/?)section\b", page[start:]):
        depth += -1 if tag.group(1) else 1
        if depth == 0:
            at = start + tag.end()
            break
    return page[start : page.index(">", at) + 1]


def session_page(server: Server, session_id: str) -> str:
    with httpx.Client(base_url=server.url, headers=server.headers, timeout=30) as http:
        response = http.get(URLS.for_("session", session_id=session_id))
    assert response.status_code == 200, response.text[:500]
    return response.text


@contextlib.asynccontextmanager
async def ready_page(server: Server, session_id: str | None = None) -> AsyncIterator[tuple[ClientConnection, str, str]]:
    """The page socket of a new session (or of ``session_id``), once its first frame came: the socket, the prompt
    nonce and the session's id. The agent may still be starting: see `until`."""
    if session_id is None:
        async with httpx.AsyncClient(base_url=server.url, headers=server.headers) as http:
            session_id = created(await http.post(URLS.for_("new_session"))).rsplit("/", 1)[1]
    url = socket_at(server.url, session_id)
    async with websockets.connect(url, additional_headers=server.headers, max_size=None) as socket:
        nonce = re.search(r'id="prompt-nonce" value="([^"]+)"', str(await socket.recv()))
        assert nonce is not None
        yield socket, nonce.group(1), session_id


async def until(socket: ClientConnection, mark: str, seconds: float = 30) -> str:
    """The first frame (HTML unescaped) that holds ``mark``."""
    async with asyncio.timeout(seconds):
        while mark not in (frame := html.unescape(str(await socket.recv()))):
            pass
    return frame


async def drive(
    server: Server,
    prompts: list[str],
    *,
    leave_asking: bool = False,
    answer_last: bool = False,
    session_id: str | None = None,
    resume: bool = True,
    then_queue: tuple[str, ...] | list[str] = (),
) -> str:
    """A new session (or ``session_id``, resumed) that runs ``prompts`` one after the other over its page's socket,
    allowing every question; ``leave_asking``: return at the last prompt's question, unanswered (``answer_last``:
    answered, without waiting for what follows), after sending ``then_queue`` (queued behind the turn);
    ``resume``: ask a stored session to resume first. Returns the session's id."""
    if session_id is None:
        async with httpx.AsyncClient(base_url=server.url, headers=server.headers) as http:
            location = created(await http.post(URLS.for_("new_session")))
    else:
        location = URLS.for_("session", session_id=session_id)
    connect = functools.partial(websockets.connect, additional_headers=server.headers, max_size=None)
    async with connect(socket_at(server.url, location)) as socket:
        frame = str(await socket.recv())
        nonce = re.search(r'id="prompt-nonce" value="([^"]+)"', frame)
        assert nonce is not None
        if session_id is not None and resume:
            await socket.send(json.dumps({"action": "resume"}))
        async with asyncio.timeout(30):
            while 'data-agent-state="ready"' not in frame:
                frame = str(await socket.recv())
        for number, text in enumerate(prompts):
            await socket.send(json.dumps({"action": "prompt", "prompt": text, "nonce": f"{nonce.group(1)}-{number}"}))
            last = number == len(prompts) - 1
            async with asyncio.timeout(60):
                while True:
                    frame = html.unescape(str(await socket.recv()))
                    if PERMISSION_ASKED in frame and 'data-state="pending"' in frame:
                        if last and leave_asking and not answer_last:
                            await queue(socket, then_queue, nonce.group(1))
                            return location.rsplit("/", 1)[1]
                        asked = re.search(r'"option_id": "([^"]+)", "request_id": "([^"]+)"', frame)
                        assert asked is not None
                        answer = {"action": "permission", "request_id": asked.group(2), "option_id": asked.group(1)}
                        await socket.send(json.dumps(answer))
                        if last and leave_asking:
                            return location.rsplit("/", 1)[1]
                    if 'data-turn-state="idle"' in frame:
                        break
    return location.rsplit("/", 1)[1]


async def queue(socket: websockets.ClientConnection, prompts: tuple[str, ...] | list[str], nonce: str) -> None:
    """Send prompts while a turn runs (they are queued), and wait until the page shows them queued."""
    for number, text in enumerate(prompts):
        await socket.send(json.dumps({"action": "prompt", "prompt": text, "nonce": f"{nonce}-queued-{number}"}))
        async with asyncio.timeout(10):
            while f">{text}</textarea>" not in html.unescape(str(await socket.recv())):
                pass


async def send_resume(server: Server, session_id: str) -> None:
    """Press Resume on a session's page (over its socket), and give the server a moment to act on it."""
    url = socket_at(server.url, session_id)
    async with websockets.connect(url, additional_headers=server.headers) as socket:
        await socket.recv()
        await socket.send(json.dumps({"action": "resume"}))
        await asyncio.sleep(0.5)


def stop(server: Server, how: signal.Signals) -> None:
    """Stop the server: TERM (a clean stop) or KILL (as if it died); then let go of what the test holds of it.

    A server in the test's process stops as TERM would have it (uvicorn's handler does the same); one that dies must
    be a process of its own."""
    if server.process is None:
        assert how == signal.SIGTERM, "only a server of its own dies of SIGKILL: start_server(process=True)"
    else:
        server.process.send_signal(how)
        server.process.wait(timeout=30)
    stop_server(server)


def journalled(data: Path, mark: str, seconds: float = 20) -> None:
    """Wait until the SQLite store in ``data`` has a journal record holding ``mark`` (written in batches)."""
    deadline = time.monotonic() + seconds
    while True:
        with contextlib.suppress(sqlite3.OperationalError):
            with contextlib.closing(sqlite3.connect(data / "webclient.sqlite3")) as db:
                if db.execute("SELECT count(*) FROM journal WHERE body LIKE ?", (f"%{mark}%",)).fetchone()[0]:
                    return
        assert time.monotonic() < deadline, f"the journal never held {mark}"
        time.sleep(0.05)
