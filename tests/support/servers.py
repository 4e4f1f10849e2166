"""The real server as tests run it: started on a free port with a test agent, signed in, stopped, and its processes."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from tests.support.acp_schema import journal_problems

ROOT = Path(__file__).resolve().parents[2]


AGENTS = ROOT / "tests" / "agents"


SCRIPTED_AGENT = f"{sys.executable} {AGENTS / 'scripted_agent.py'}"


CHROMIUM = "/usr/bin/chromium"


CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Server:
    """A running ``webclient`` process."""

    url: str
    process: subprocess.Popen[bytes]
    record_file: Path
    workspace: Path
    token: str
    clients: list[httpx.Client] = field(default_factory=list)
    data_dir: Path | None = None
    """Where the server keeps its store (deleted when it is stopped)."""
    store_dir: Path | None = None
    """Where its SQLite store is, this folder or one the test gave, whose journal is checked when it stops."""
    uds: Path | None = None
    """The unix socket it listens on instead of its port (``WEBCLIENT_UDS``)."""

    @property
    def headers(self) -> dict[str, str]:
        """What a script sends to be let in (the sign-in token, as ``Authorization: token ...``)."""
        return {"Authorization": f"token {self.token}"}

    def http(self) -> httpx.Client:
        """An HTTP client signed in the way scripts are (the token in a header); closed with the server."""
        transport = httpx.HTTPTransport(uds=str(self.uds)) if self.uds is not None else None
        client = httpx.Client(base_url=self.url, headers=self.headers, transport=transport)
        self.clients.append(client)
        return client

    def sign_in_url(self, url: str = "/") -> str:
        """``url`` (a path of this server, or a whole URL) with the sign-in token, as the server prints it at start:
        opening it in a browser signs that browser in and lands on ``url``."""
        url = url if url.startswith("http") else self.url + url
        return f"{url}{'&' if '?' in url else '?'}token={self.token}"

    def received(self) -> list[dict[str, Any]]:
        """Every JSON-RPC message the (scripted) agent received, in order."""
        if not self.record_file.exists():
            return []
        return [json.loads(line) for line in self.record_file.read_text().splitlines() if line.strip()]

    def prompts_received(self) -> list[str]:
        """The text of every prompt the (scripted) agent received, in order."""
        return [
            block["text"]
            for message in self.received()
            if message.get("method") == "session/prompt"
            for block in message["params"]["prompt"]
            if block.get("type") == "text"
        ]

    def wait_received(self, predicate: Callable[[dict[str, Any]], bool], timeout: float = 10) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for message in self.received():
                if predicate(message):
                    return message
            time.sleep(0.05)
        raise AssertionError(f"the agent never received the expected message; it got: {self.received()}")


ServerFactory = Callable[..., Server]


def live_processes() -> Iterator[tuple[int, int, int]]:
    """(pid, parent pid, process group) of every live process, read from /proc (independently of the code under test).

    Zombies are left out on purpose: orphans are reaped by PID 1, which in some containers never happens.
    """
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as stat:
                    fields = stat.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            if fields[0] not in (b"Z", b"X"):
                yield int(entry), int(fields[1]), int(fields[2])


def live_members(pgid: int) -> list[int]:
    """Pids of live processes in process group ``pgid``."""
    return [pid for pid, _, group in live_processes() if group == pgid]


def launch_server(
    port: int, token: str, record: Path, workspace: Path, options: list[str], env: dict[str, str], output: int
) -> Server:
    """Start ``python -m webclient --port PORT OPTIONS`` and wait until it answers HTTP; stopped if it never does.

    ``output`` is where its stdout and stderr go (``subprocess.PIPE`` puts them in the error of an early exit).
    """
    # Each server keeps its store in a folder of its own, never in the user's data folder (nor under the test's
    # workspace, whose path may be longer than SQLite opens).
    data = tempfile.mkdtemp(prefix="webclient-data-")
    full_env = {
        **os.environ,
        "RECORD_FILE": str(record),
        "WEBCLIENT_TOKEN": token,
        "WEBCLIENT_DATA_DIR": data,
        "WEBCLIENT_DEMO_REMOTE": "off",  # its server only where a test asks for it
        **env,
    }
    full_env.pop("WEBCLIENT_AGENT", None)
    args = [sys.executable, "-m", "webclient", "--port", str(port), *options]
    process = subprocess.Popen(args, cwd=ROOT, env=full_env, stdout=output, stderr=subprocess.STDOUT)
    store_dir = None if "WEBCLIENT_DATABASE_URL" in env else Path(full_env["WEBCLIENT_DATA_DIR"])
    uds = Path(env["WEBCLIENT_UDS"]) if env.get("WEBCLIENT_UDS") else None
    server = Server(
        f"http://127.0.0.1:{port}", process, record, workspace, token, data_dir=Path(data), store_dir=store_dir, uds=uds
    )
    deadline = time.monotonic() + 20
    while True:
        if process.poll() is not None:
            said = process.stdout.read().decode() if process.stdout else ""
            raise RuntimeError(f"the server exited early ({process.returncode}):\n{said}")
        try:
            if uds is not None:
                with socket.socket(socket.AF_UNIX) as probe:
                    probe.connect(str(uds))  # refused until uvicorn listens (the server binds it earlier)
                return server
            httpx.get(server.url + "/", timeout=1)  # any answer (a sign-in page too) means it is up
            return server
        except (httpx.TransportError, OSError):
            if time.monotonic() > deadline:
                stop_server(server)
                raise
            time.sleep(0.1)


def stop_server(server: Server) -> None:
    """SIGTERM the server (SIGKILL after 10 s) and close what the test held of it."""
    for client in server.clients:
        client.close()
    server.process.terminate()
    try:
        server.process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.process.kill()
        server.process.wait()
    if server.process.stdout:
        server.process.stdout.close()
    problems = journal_problems(server.store_dir) if server.store_dir is not None else []
    if server.data_dir is not None:
        shutil.rmtree(server.data_dir, ignore_errors=True)
    assert not problems, "the client sent what the ACP schema does not allow:\n" + "\n".join(problems)
