"""Probing a running server from outside: its sessions, its child processes, refusals counted; and what this process
holds open."""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.support.servers import Server, live_processes
from tests.support.urls import URLS

TALLY: dict[str, list[int]] = {}
"""Attempts and refusals per area, printed at the end of the module (``pytest -s``) for the closing note."""


def count(area: str, refused: bool) -> None:
    attempts = TALLY.setdefault(area, [0, 0])
    attempts[0] += 1
    attempts[1] += int(refused)


@pytest.fixture(scope="module", autouse=True)
def report_tally() -> Iterator[None]:
    yield
    for area, (attempts, refused) in sorted(TALLY.items()):
        print(f"\n{area}: {attempts} attempts, {refused} refused")


def port_of(server: Server) -> int:
    port = urlsplit(server.url).port
    assert port is not None
    return port


def children(pid: int) -> list[int]:
    """Live child processes of ``pid`` (the agents the server started), read from /proc."""
    return [child for child, parent, _ in live_processes() if parent == pid]


def session_ids(server: Server) -> list[str]:
    return re.findall(r'data-session-id="([^"]+)"', server.http().get("/").text)


def new_session(server: Server) -> str:
    response = server.http().post(URLS.for_("new_session"))
    assert response.status_code == 303, response.text
    session_id = response.headers["location"].rsplit("/", 1)[1]
    server.wait_received(lambda m: m.get("method") == "session/new")
    return session_id


def processes_with(mark: str) -> list[int]:
    """Live (not zombie) processes whose command line contains ``mark``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if mark.encode() in cmdline and state != "Z" and int(entry) != os.getpid():
            found.append(int(entry))
    return found


def descriptors_held(kept: Callable[[str], bool]) -> list[tuple[str, str]]:
    """This process's open descriptors (number, what it points at) whose target ``kept`` accepts. A leak test counts
    what it could leak, never every descriptor: a thread another test left (a server stopping, a database closing)
    may change those meanwhile."""
    held = []
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            target = os.readlink(f"/proc/self/fd/{fd}")
            if kept(target):
                held.append((fd, target))
    return sorted(held)
