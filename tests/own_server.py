"""A ``python -m webclient`` a test starts itself: on a port it chooses (to start it again after a stop, as after a
server restart) or with a workspace of its own. Like the ``start_server`` fixture, but the test stops it."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from tests.conftest import ROOT, Server, free_port


def launch(workspace: Path, agent: str, port: int | None = None, token: str | None = None, **env: str) -> Server:
    """Start a server and wait until it answers; the output goes to a file beside the workspace."""
    port = port or free_port()
    token = token or secrets.token_urlsafe(16)
    record = workspace.parent / f"received-{port}-{secrets.token_hex(4)}.jsonl"
    full_env = {**os.environ, "RECORD_FILE": str(record), "WEBCLIENT_TOKEN": token, **env}
    full_env.pop("WEBCLIENT_AGENT", None)
    args = [sys.executable, "-m", "webclient", "--port", str(port), "--agent", agent, "--workspace", str(workspace)]
    process = subprocess.Popen(args, cwd=ROOT, env=full_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    server = Server(f"http://127.0.0.1:{port}", process, record, workspace, token)
    deadline = time.monotonic() + 20
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited early ({process.returncode})")
        try:
            httpx.get(server.url + "/", timeout=1)
            return server
        except httpx.TransportError:
            if time.monotonic() > deadline:
                stop(server)
                raise
            time.sleep(0.1)


def stop(server: Server) -> None:
    server.process.terminate()
    try:
        server.process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.process.kill()
        server.process.wait()


@contextmanager
def own_server(workspace: Path, agent: str, **env: str) -> Iterator[Server]:
    server = launch(workspace, agent, **env)
    try:
        yield server
    finally:
        stop(server)
