"""A ``python -m webclient`` a test starts itself: on a port it chooses (to start it again after a stop, as after a
server restart) or with a workspace of its own. Like the ``start_server`` fixture, but the test stops it."""

from __future__ import annotations

import secrets
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.support.servers import Server, free_port, launch_server, stop_server


def launch(
    workspace: Path, agent: str, port: int | None = None, token: str | None = None, process: bool = False, **env: str
) -> Server:
    """Start a server and wait until it answers (its output is not kept); in the test's process unless ``process``
    (`tests.support.servers.InThread`)."""
    port = port or free_port()
    record = workspace.parent / f"received-{port}-{secrets.token_hex(4)}.jsonl"
    options = ["--agent", agent, "--workspace", str(workspace)]
    token = token or secrets.token_urlsafe(16)
    return launch_server(port, token, record, workspace, options, env, subprocess.DEVNULL, in_thread=not process)


stop = stop_server


@contextmanager
def own_server(workspace: Path, agent: str, **env: str) -> Iterator[Server]:
    server = launch(workspace, agent, **env)
    try:
        yield server
    finally:
        stop(server)
