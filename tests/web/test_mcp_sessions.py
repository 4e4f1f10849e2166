"""A session's MCP servers on the wire: the catalogue's (and the person's) as ``session/new`` and ``session/resume``
carry them, secrets filled in; HTTP and SSE only when the agent takes them, those left out said on the thread and in
the header; nothing of a value on record; the same list and servers after a restart."""

from __future__ import annotations

import asyncio
import re
import signal
import sys
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup

from tests.support.restarts import drive, session_page, stop, thread_html
from tests.support.servers import Server, ServerFactory
from tests.support.urls import URLS

AGENT = Path(__file__).resolve().parents[1] / "agents" / "mcp_echo_agent.py"
SECRET = "s3cr3t-token-value"
CONFIG = """
[agents.mcp]
command = "{python}"
args = ["{agent}"]
env = {{ MCP_KINDS = "http" }}

[agents.mcp.mcp_servers.files]
command = "/usr/bin/env"
args = ["--token=${{secret:TOKEN}}", "--plain"]
env = {{ API_KEY = "${{secret:TOKEN}}", PLAIN = "plain-env-value" }}

[agents.mcp.mcp_servers.web]
type = "http"
url = "http://127.0.0.1:9/mcp?key=query-value"
headers = {{ Authorization = "Bearer ${{secret:TOKEN}}" }}

[agents.mcp.mcp_servers.old]
type = "sse"
url = "http://127.0.0.1:9/sse"
"""
EXPECTED = [
    {
        "name": "files",
        "command": "/usr/bin/env",
        "args": [f"--token={SECRET}", "--plain"],
        "env": [{"name": "API_KEY", "value": SECRET}, {"name": "PLAIN", "value": "plain-env-value"}],
    },
    {
        "type": "http",
        "name": "web",
        "url": "http://127.0.0.1:9/mcp?key=query-value",
        "headers": [{"name": "Authorization", "value": f"Bearer {SECRET}"}],
    },
]


def csrf_of(page: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', page)
    assert found is not None
    return found.group(1)


def keep_secret(server: Server, name: str, value: str) -> None:
    http = server.http()
    csrf = csrf_of(http.get(URLS.for_("secrets")).text)
    response = http.post(URLS.for_("save_secret"), data={"csrf": csrf, "name": name, "value": value})
    assert response.status_code == 303, response.text[:300]


def carried(server: Server, method: str) -> list[dict[str, Any]]:
    sent = [m for m in server.received() if m.get("method") == method]
    assert sent, f"no {method} was sent"
    servers: list[dict[str, Any]] = sent[-1]["params"]["mcpServers"]
    return servers


def header_servers(page: str) -> dict[str, tuple[str, str | None]]:
    header = BeautifulSoup(page, "html.parser").select_one("header.session-header")
    assert header is not None
    return {
        str(tag["data-mcp-server"]): (str(tag["data-kind"]), tag.get("data-left-out"))  # type: ignore[misc]
        for tag in header.select("[data-role=mcp-servers] [data-mcp-server]")
    }


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "agents.toml"
    path.write_text(CONFIG.format(python=sys.executable, agent=AGENT))
    return path


def test_the_catalogues_servers_go_to_the_agent_with_secrets_filled_in_and_come_back_after_a_restart(
    start_server: ServerFactory, tmp_path: Path, config: Path
) -> None:
    data = tmp_path / "data"
    env = {"WEBCLIENT_CONFIG": str(config), "WEBCLIENT_DATA_DIR": str(data)}
    first = start_server(None, tmp_path / "project", **env)
    keep_secret(first, "TOKEN", SECRET)
    session_id = asyncio.run(drive(first, ["which servers?"]))
    assert carried(first, "session/new") == EXPECTED
    page = session_page(first, session_id)
    assert header_servers(page) == {
        "files": ("stdio", None),
        "web": ("http", None),
        "old": ("sse", "the agent does not take sse servers (mcpCapabilities.sse)"),
    }
    thread = thread_html(page)
    assert "MCP servers: files (stdio), web (http)" in thread
    assert "Some MCP servers were not given to the agent" in thread and "old: the agent does not take sse" in thread
    assert SECRET not in page and "plain-env-value" not in page and "query-value" not in page
    log = first.http().get(URLS.for_("protocol_log", session_id=session_id)).text  # the lines as recorded
    assert '"mcpServers"' in log.replace("&#34;", '"') and SECRET not in log and "plain-env-value" not in log
    stop(first, signal.SIGTERM)
    for path in data.rglob("*"):  # the store: its journal, protocol log and audit log hold no value of them
        if path.is_file() and path.name != "secret.key":
            held = path.read_bytes()
            assert SECRET.encode() not in held and b"plain-env-value" not in held, path

    second = start_server(None, tmp_path / "project", **env)
    rebuilt = session_page(second, session_id)
    assert header_servers(rebuilt) == header_servers(page)
    asyncio.run(drive(second, ["and now?"], session_id=session_id))
    assert carried(second, "session/resume") == EXPECTED  # the secrets filled in again
    again = session_page(second, session_id)
    assert header_servers(again) == header_servers(page)
    assert thread_html(again).count("MCP servers: files (stdio), web (http)") == 2


def test_a_missing_secret_leaves_its_server_out_and_says_which(
    start_server: ServerFactory, tmp_path: Path, config: Path
) -> None:
    server = start_server(None, tmp_path / "project", WEBCLIENT_CONFIG=str(config))
    session_id = asyncio.run(drive(server, ["which servers?"]))
    assert carried(server, "session/new") == []
    shown = header_servers(session_page(server, session_id))
    assert shown["files"] == ("stdio", "the secret TOKEN is not set")
    assert shown["web"] == ("http", "the secret TOKEN is not set")
