"""What the sandbox tests share: folders outside /tmp, the targets a hostile agent is handed, and its report counted.

Workspaces and the data folder live under ``~/.cache`` (never /tmp: the sandbox's private /tmp must not be what
hides them), removed afterwards.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import socket
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support.restarts import until
from tests.support.servers import AGENTS, Server, free_port
from tests.support.team import page_socket, prompt, ready
from webclient.agents.homes import home_of

HOSTILE = f"{sys.executable} {AGENTS / 'hostile_agent.py'}"
REPORT = "sandbox-report.json"


@contextlib.contextmanager
def outside_tmp() -> Iterator[Path]:
    """A fresh folder under ``~/.cache``, removed afterwards."""
    base = Path.home() / ".cache" / "webclient-sandbox-tests" / secrets.token_hex(6)
    base.mkdir(parents=True)
    try:
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)
        with contextlib.suppress(OSError):  # the last one out removes the folder of them all
            base.parent.rmdir()


@contextlib.contextmanager
def server_home_file() -> Iterator[Path]:
    """A file in the server's own home (not its .cache), removed afterwards."""
    path = Path.home() / f".webclient-sandbox-canary-{secrets.token_hex(4)}"
    path.write_text("the server's own\n")
    try:
        yield path
    finally:
        path.unlink(missing_ok=True)


def outside_address() -> str | None:
    """This machine's address on its own network (not loopback): from a sandbox without network, elsewhere."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("10.255.255.255", 1))  # no packet is sent: the kernel only picks the route
        except OSError:
            return None
        address = str(probe.getsockname()[0])
    return None if address.startswith("127.") else address


@dataclass
class Listeners:
    """Sockets the host listens on, for a sandbox without network to fail to reach: TCP on every address, an
    abstract unix socket."""

    tcp_port: int = field(default_factory=free_port)
    abstract: str = field(default_factory=lambda: f"webclient-sandbox-{secrets.token_hex(4)}")
    _sockets: list[socket.socket] = field(default_factory=list)

    def __enter__(self) -> Listeners:
        tcp = socket.socket()
        tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        tcp.bind(("0.0.0.0", self.tcp_port))
        tcp.listen(16)
        unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        unix.bind("\0" + self.abstract)
        unix.listen(16)
        self._sockets += [tcp, unix]
        return self

    def __exit__(self, *_: object) -> None:
        for sock in self._sockets:
            sock.close()


def agent_pid(home: Path, timeout: float = 20) -> int:
    """The host's pid of the hostile agent running with ``home`` as its HOME (read from /proc, as root may)."""
    deadline = time.monotonic() + timeout
    wanted = f"HOME={home}".encode()
    while time.monotonic() < deadline:
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
                environ = Path(f"/proc/{entry}/environ").read_bytes()
            except OSError:
                continue
            if b"hostile_agent.py" in cmdline and b"bwrap" not in cmdline and wanted in environ.split(b"\0"):
                return int(entry)
        time.sleep(0.1)
    raise AssertionError(f"no hostile agent runs with HOME={home}")


def targets(
    server: Server,
    other_workspace: Path,
    data: Path,
    other_person: str,
    home_file: Path,
    canary: str,
    listeners: Listeners,
    tcp: list[tuple[str, int, str]],
    network: bool = False,
    reach: list[tuple[str, int, str]] | None = None,
    unreadable: list[tuple[Path, str]] | None = None,
) -> dict[str, Any]:
    """What the hostile agent is to try, as ``sandbox_attacks.py`` reads it: with the ``network`` on, ``reach`` is
    what it must reach, and this machine's own address (which a network of its own reaches as it reaches any
    other host) is no target."""
    other_home = home_of(data, other_person)
    (other_home / "secret.txt").write_text("another person's\n")
    (other_workspace / "secret.txt").write_text("another session's\n")
    tcp = [*tcp, ("127.0.0.1", listeners.tcp_port, "a port the host listens on")]
    address = None if network else outside_address()
    if address is not None:
        tcp.append((address, listeners.tcp_port, "an outside address"))
    return {
        "other_workspace": str(other_workspace),
        "other_file": str(other_workspace / "secret.txt"),
        "data": str(data),
        "store": str(data / "webclient.sqlite3"),
        "key": str(data / "secret.key"),
        "other_home": str(other_home),
        "other_home_file": str(other_home / "secret.txt"),
        "server_home_file": str(home_file),
        "canary": canary,
        "server_pid": server.process.pid,
        "other_agent_pid": agent_pid(other_home),
        "tcp": [[host, port, what] for host, port, what in tcp],
        "unix": [],
        "abstract": listeners.abstract,
        "reach": [[host, port, what] for host, port, what in reach or []],
        "unreadable": [[str(path), what] for path, what in unreadable or []],
    }


async def attack(server: Server, session_id: str, person: str, aim: dict[str, Any], workspace: Path) -> dict[str, Any]:
    """Prompt the hostile agent of ``session_id`` to attack ``aim``; its report (from its own workspace)."""
    async with page_socket(server, session_id, person) as (socket_, nonce):
        await ready(socket_)
        await prompt(socket_, "attack " + json.dumps(aim), nonce)
        await until(socket_, "reported", 90)
    found: dict[str, Any] = json.loads((workspace / REPORT).read_text())
    return found


def counted(found: dict[str, Any]) -> tuple[int, list[str], list[str]]:
    """Attempts made (by the agent and its terminal command), those that escaped, legitimate actions that failed."""
    attempts, escapes, failed = 0, [], []
    for where in ("agent", "terminal"):
        part = found[where]
        assert "attempts" in part, f"the {where} did not report: {part}"
        for result in part["attempts"]:
            attempts += 1
            if result["worked"]:
                escapes.append(f"{where}: {result['what']}: {result['said']}")
        failed += [f"{where}: {r['what']}: {r['said']}" for r in part["legitimate"] if not r["worked"]]
    return attempts, escapes, failed
