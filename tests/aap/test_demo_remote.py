"""The built-in remote demo: its AAP server runs as the web server's subprocess, is offered in the catalogue, and
does not outlive the web server, stopped or killed."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import httpx
import pytest

from tests.support.servers import ServerFactory, live_processes

pytestmark = pytest.mark.process  # each test starts the server as a process: its subject


def demo_servers_of(server_pid: int) -> list[int]:
    found = []
    for pid, parent, _ in live_processes():
        if parent == server_pid:
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                continue
            if b"demo_aap" in cmdline:
                found.append(pid)
    return found


def alive(pid: int) -> bool:
    return any(found == pid for found, _, _ in live_processes())


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "kill-9"])
def test_the_remote_demo_server_is_offered_and_gone_with_the_web_server(
    start_server: ServerFactory, stop: signal.Signals
) -> None:
    server = start_server(process=True, agent=None, WEBCLIENT_DEMO_REMOTE="on")
    index = server.http().get("/").text
    assert 'data-agent="demo-remote"' in index and "The built-in remote demo agent (AAP, over HTTP)" in index
    [demo] = demo_servers_of(server.process.pid)
    server.process.send_signal(stop)
    server.process.wait(timeout=15)
    deadline = time.monotonic() + 5
    while alive(demo):
        assert time.monotonic() < deadline, "the remote demo's server outlived the web server"
        time.sleep(0.05)


def test_without_it_nothing_is_started(start_server: ServerFactory) -> None:
    server = start_server(process=True, agent=None)  # the tests' default: WEBCLIENT_DEMO_REMOTE=off
    assert 'data-agent="demo-remote"' not in server.http().get("/").text
    assert demo_servers_of(server.process.pid) == []
    assert httpx.get(server.url + "/").status_code in (200, 302, 303, 401)
