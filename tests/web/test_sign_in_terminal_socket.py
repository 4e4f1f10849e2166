"""The sign-in terminal's web socket on a real server: only the session's page drives it (the access guard's origin
check, and the key of the running terminal), keystrokes reach the pty and its output comes back, and nothing of
the sign-in outlives the server."""

from __future__ import annotations

import asyncio
import json
import re
import signal
import sys
import time
from pathlib import Path

import pytest
import websockets

from tests.support.probes import new_session, port_of
from tests.support.servers import AGENTS, Server, ServerFactory, live_processes, stop_server
from tests.support.urls import URLS, socket_at
from tests.web.test_access import signed_in_cookie, ws_handshake

AGENT = f"{sys.executable} {AGENTS / 'login_agent.py'}"
TERMINAL = re.compile(r'data-role="sign-in-terminal"[^>]*data-url="([^"]+)"')


def alive(pid: int) -> bool:
    return any(found == pid for found, _, _ in live_processes())


def runs(tokens: Path) -> list[dict[str, object]]:
    path = tokens / "runs.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


async def start_terminal_sign_in(server: Server, session_id: str) -> str:
    """Ask for the terminal sign-in on the page's socket, as its button does; the terminal's URL the page shows."""
    url = socket_at(server.url, session_id)
    async with websockets.connect(url, additional_headers=server.headers, max_size=None) as page:
        await page.send(json.dumps({"action": "authenticate", "method_id": "login"}))
        async with asyncio.timeout(20):
            while not (found := TERMINAL.search(str(await page.recv()))):
                pass
    return found.group(1).replace("&amp;", "&")


async def read_until(terminal: websockets.ClientConnection, text: bytes) -> bytes:
    seen = b""
    async with asyncio.timeout(10):
        while text not in seen:
            frame = await terminal.recv()
            seen += frame if isinstance(frame, bytes) else b""
    return seen


@pytest.mark.process
@pytest.mark.asyncio
async def test_only_the_sessions_page_drives_the_sign_in_terminal(start_server: ServerFactory, tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    server = start_server(process=True, agent=AGENT, LOGIN_TOKEN_DIR=str(tokens))
    session_id = new_session(server)
    path = await start_terminal_sign_in(server, session_id)
    assert re.fullmatch(re.escape(URLS.for_("sign_in_terminal", session_id=session_id)) + r"\?key=[\w-]+", path)
    port, cookie = port_of(server), {"Cookie": signed_in_cookie(server)}
    # A page of another origin, with the browser's cookie, or without it: refused before the route.
    for headers in (
        {**cookie, "Origin": "https://evil.example"},
        {**cookie, "Origin": f"http://127.0.0.1:{port + 1}"},
        {**cookie, "Origin": server.url, "Sec-Fetch-Site": "cross-site"},
        {**cookie},  # a browser that says neither where it comes from nor sends the page's token
        {"Origin": server.url},  # not signed in
    ):
        status, _ = ws_handshake(server, path, headers)
        assert status == 403, headers
    status, _ = ws_handshake(server, path, {**cookie, "Origin": server.url})
    assert status == 101  # the page's own origin, signed in: it is only the key that may refuse it now
    # The page's origin, signed in, with a wrong key or none: closed at once by the route (1008).
    ws_base = server.url.replace("http", "ws")
    origin = {**server.headers, "Origin": server.url}
    for wrong in (path.split("?")[0], path.split("?")[0] + "?key=nope"):
        async with websockets.connect(ws_base + wrong, additional_headers=origin) as terminal:
            with pytest.raises(websockets.ConnectionClosed) as closed:
                await terminal.recv()
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008
    # The page itself: output comes, keystrokes go.
    async with websockets.connect(ws_base + path, additional_headers=origin, max_size=None) as terminal:
        await read_until(terminal, b"Enter the code: ")
        await terminal.send(json.dumps({"type": "resize", "columns": 90, "rows": 30}))
        await terminal.send(json.dumps({"type": "input", "data": "4242\r"}))
        await read_until(terminal, b"Signed in.")
        async with asyncio.timeout(10):
            while not isinstance(message := await terminal.recv(), str):
                pass
        assert json.loads(message) == {"type": "exit", "how": "exit code 0"}
    (run,) = runs(tokens)
    assert run["argv"] == ["--login"]
    deadline = time.monotonic() + 20
    while [m.get("method") for m in server.received()].count("session/new") < 2:
        assert time.monotonic() < deadline, "the agent was not started again"
        await asyncio.sleep(0.05)
    assert "authenticate" not in [m.get("method") for m in server.received()]


@pytest.mark.process
@pytest.mark.asyncio
@pytest.mark.parametrize("stop", ["SIGTERM", "SIGKILL"])
async def test_the_sign_in_terminal_does_not_outlive_the_server(
    start_server: ServerFactory, tmp_path: Path, stop: str
) -> None:
    tokens = tmp_path / "tokens"
    server = start_server(process=True, agent=AGENT, LOGIN_TOKEN_DIR=str(tokens))
    session_id = new_session(server)
    await start_terminal_sign_in(server, session_id)
    deadline = time.monotonic() + 10
    while not runs(tokens):
        assert time.monotonic() < deadline
        await asyncio.sleep(0.05)
    (run,) = runs(tokens)
    pids = [int(str(run["pid"])), int(str(run["sleeper"]))]
    assert all(alive(pid) for pid in pids)
    if stop == "SIGTERM":
        stop_server(server)
    else:  # the watchdog (webclient.workspace.reaper) stops what the server owned
        server.process.send_signal(signal.SIGKILL)
        server.process.wait()
    deadline = time.monotonic() + 10
    while any(alive(pid) for pid in pids):
        assert time.monotonic() < deadline, f"still running after the server stopped: {pids}"
        await asyncio.sleep(0.05)


@pytest.mark.parametrize("host", ["127.0.0.1", "0.0.0.0"])
def test_an_agent_method_says_whether_its_browser_can_be_the_users(
    start_server: ServerFactory, tmp_path: Path, host: str
) -> None:
    """A server on loopback: the browser the agent opens is the user's own. Anywhere else: it says plainly that a
    remote user will not see it, and names the terminal method instead."""
    server = start_server(agent=AGENT, LOGIN_TOKEN_DIR=str(tmp_path / "tokens"), WEBCLIENT_HOST=host)
    session_id = new_session(server)
    deadline = time.monotonic() + 20
    while 'data-agent-state="auth-required"' not in (
        page := server.http().get(URLS.for_("session", session_id=session_id)).text
    ):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    said = re.search(r'data-role="browser-sign-in">(.*?)</p>', page, re.S)
    assert said is not None
    text = " ".join(re.sub(r"<[^>]+>", "", said.group(1)).split())
    if host == "127.0.0.1":
        assert "listens on this machine only" in text and "will not see" not in text
    else:
        assert "You will not see that page unless you are at that machine" in text
        assert "Use “Log in in a terminal” instead: it runs in a terminal on this page." in text
