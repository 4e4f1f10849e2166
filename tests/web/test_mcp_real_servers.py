"""Real MCP servers from the npm registry (``@modelcontextprotocol/server-everything``: stdio, and streamable HTTP on
loopback) given to an agent on the official ACP TypeScript SDK (``tests/agents/ts/mcp_agent.mjs``), which calls their
``echo`` tool: the catalogue's stdio server and a person's HTTP one (in a sandbox: tests/sandbox/test_mcp_sandbox).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

from tests.support.restarts import drive, session_page, thread_html
from tests.support.servers import Server, ServerFactory, free_port
from tests.support.ts_agents import NODE_MODULES, TS_AGENTS, node
from tests.support.urls import URLS

EVERYTHING = NODE_MODULES / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"


def config(tmp_path: Path, **entry: str) -> Path:
    fields = "".join(f"{key} = {value}\n" for key, value in entry.items())
    path = tmp_path / "agents.toml"
    path.write_text(
        f"""
[agents.ts-mcp]
command = "{node()}"
args = ["{TS_AGENTS / "mcp_agent.mjs"}"]
env = {{ TS_AGENT_LOG = "{tmp_path / "received.jsonl"}" }}
start_timeout = 60
{fields}
[agents.ts-mcp.mcp_servers.everything]
command = "{node()}"
args = ["{EVERYTHING}"]
"""
    )
    return path


@contextlib.contextmanager
def everything_over_http() -> Iterator[str]:
    """server-everything serving streamable HTTP on a free loopback port: its ``/mcp`` URL."""
    port = free_port()
    process = subprocess.Popen(
        [node(), str(EVERYTHING), "streamableHttp"],
        env={**os.environ, "PORT": str(port)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
                break
            assert process.poll() is None and time.monotonic() < deadline, "server-everything did not listen"
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=10)


def add_server(server: Server, **fields: str) -> None:
    http = server.http()
    csrf = re.search(r'name="csrf" value="([^"]+)"', http.get(URLS.for_("mcp_servers")).text)
    assert csrf is not None
    saved = http.post(URLS.for_("save_mcp_server"), data={"csrf": csrf.group(1), "default": "yes", **fields})
    assert saved.status_code == 303, saved.text[:300]


def test_the_agent_calls_the_tools_of_a_stdio_and_an_http_server(start_server: ServerFactory, tmp_path: Path) -> None:
    with everything_over_http() as url:
        server = start_server(None, WEBCLIENT_CONFIG=str(config(tmp_path)), WEBCLIENT_DATA_DIR=str(tmp_path / "d"))
        add_server(server, name="remote", kind="http", url=url, headers="X-Test: on")
        session_id = asyncio.run(drive(server, ["hello over MCP"]))
        thread = thread_html(session_page(server, session_id))
    assert "everything answered: Echo: hello over MCP" in thread
    assert "remote answered: Echo: hello over MCP" in thread
