"""Nothing outlives the server: SIGTERM, Ctrl+C pressed again and ``kill -9``, against agents that will not leave.

Each test starts the real server with two stubborn agents (`tests/agents/terminal_agent.py`: they ignore stdin
EOF and SIGTERM, and each has a child of its own): one holds a command started through ``terminal/create`` in a
turn that never ends (and the command a process that left its group), the other is asked to sign in and never
answers, while a page's WebSocket waits on it. Then the server is stopped, and the process table (read from
/proc, not by the code under test) must hold nothing of theirs.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from websockets.sync.client import connect

from tests.support.probes import processes_with
from tests.support.servers import AGENTS, Server, ServerFactory, live_members
from tests.support.urls import URLS, socket_at

# Each test starts a server, stubborn agents and commands, then kills the server.
pytestmark = [pytest.mark.slow, pytest.mark.alone]


def _stat(pid: int) -> list[bytes] | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()
    except OSError:
        return None


def _until(condition: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out after {timeout}s: {what}"
        time.sleep(0.05)


def _watchdogs(server_pid: int) -> list[int]:
    """The server's children running ``webclient.workspace.reaper``."""
    found = []
    for entry in os.listdir("/proc"):
        fields = _stat(int(entry)) if entry.isdigit() else None
        if fields is not None and int(fields[1]) == server_pid and fields[0] != b"Z":
            try:
                if b"webclient.workspace.reaper" in Path(f"/proc/{entry}/cmdline").read_bytes():
                    found.append(int(entry))
            except OSError:
                continue
    return found


@contextmanager
def stubborn_server(start_server: ServerFactory, tmp_path: Path) -> Iterator[tuple[Server, set[int]]]:
    """A server whose agents and commands will not leave on their own; yields it and their process groups
    while a page's WebSocket waits on a sign-in that never ends."""
    mark = f"mark-{uuid.uuid4().hex}"
    agent = f"{sys.executable} {AGENTS / 'terminal_agent.py'} {mark}"
    server = start_server(agent=agent, STUBBORN="1", ROLE_FILE=str(tmp_path / "first-agent"), process=True)
    with server.http() as http:
        working = http.post(URLS.for_("new_session")).headers["location"]
        server.wait_received(lambda m: m.get("method") == "session/new")
        deadline = time.monotonic() + 10
        while not any(m.get("method") == "session/prompt" for m in server.received()):
            assert time.monotonic() < deadline, "the prompt never reached the agent"
            http.post(f"{working}/prompt", data={"prompt": f"hold {mark}", "nonce": uuid.uuid4().hex})
            time.sleep(0.1)
        signing_in = http.post(URLS.for_("new_session")).headers["location"]
    with connect(socket_at(server.url, signing_in), additional_headers=server.headers) as socket:
        frame = ""
        while 'data-agent-state="auth-required"' not in frame:
            frame = str(socket.recv(timeout=10))
        socket.send(json.dumps({"action": "authenticate", "method_id": "never"}))
        server.wait_received(lambda m: m.get("method") == "authenticate")
        # Two agents, their two children, the held command and its stray, each with the mark in its command line
        # (as has the server's, which runs the agent command).
        ours = lambda: [pid for pid in processes_with(mark) if pid != server.process.pid]  # noqa: E731
        _until(lambda: len(ours()) >= 6, 10, "the agents and the command to start")
        groups = {int(fields[2]) for pid in ours() if (fields := _stat(pid)) is not None}
        assert len(groups) == 4, groups  # the two agents' groups, the command's, and the one its stray made
        assert all(live_members(group) for group in groups)
        assert len(_watchdogs(server.process.pid)) == 1
        yield server, groups


def _survivors(groups: set[int]) -> list[int]:
    return [pid for group in groups for pid in live_members(group)]


def test_sigterm_stops_the_server_within_10_seconds_and_leaves_nothing(
    start_server: ServerFactory, tmp_path: Path
) -> None:
    with stubborn_server(start_server, tmp_path) as (server, groups):
        watchdog = _watchdogs(server.process.pid)
        started = time.monotonic()
        server.process.send_signal(signal.SIGTERM)
        server.process.wait(timeout=15)
        took = time.monotonic() - started
        print(f"SIGTERM: the server stopped in {took:.1f}s")
        assert took < 10
        _until(lambda: not _survivors(groups), 1, f"left behind: {_survivors(groups)}")
        _until(lambda: _stat(watchdog[0]) is None or _stat(watchdog[0])[0] == b"Z", 3, "the watchdog to exit")


def test_after_kill_9_of_the_server_nothing_of_its_agents_and_commands_survives(
    start_server: ServerFactory, tmp_path: Path
) -> None:
    with stubborn_server(start_server, tmp_path) as (server, groups):
        watchdog = _watchdogs(server.process.pid)
        server.process.kill()
        server.process.wait(timeout=5)
        killed = time.monotonic()
        _until(lambda: not _survivors(groups), 5, f"left behind: {_survivors(groups)}")
        print(f"kill -9: nothing of the agents and commands left after {time.monotonic() - killed:.2f}s")
        _until(lambda: _stat(watchdog[0]) is None or _stat(watchdog[0])[0] == b"Z", 5, "the watchdog to exit")


def test_ctrl_c_pressed_again_while_the_server_stops_leaves_nothing(
    start_server: ServerFactory, tmp_path: Path
) -> None:
    """The first Ctrl+C starts a graceful stop, the second skips uvicorn's wait (and the app's own stop, which
    asyncio then runs while it cancels what is left), the third interrupts even that: the server exits at once."""
    with stubborn_server(start_server, tmp_path) as (server, groups):
        for _ in range(3):
            server.process.send_signal(signal.SIGINT)
            time.sleep(0.5)
        server.process.wait(timeout=10)
        _until(lambda: not _survivors(groups), 5, f"left behind: {_survivors(groups)}")
