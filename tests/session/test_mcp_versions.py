"""The MCP servers a session gives an agent on the official ACP TypeScript SDK, in each version: v1 takes stdio
servers always, v2 only what ``capabilities.session.mcp`` holds; the rest is said, on the thread and in the list."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.session.test_acp_v2 import notices
from tests.support.sessions import started
from tests.support.ts_agents import got, ts_session
from tests.support.waiting import until
from webclient.session.mcp_servers import McpServer

FILES = McpServer("files", command="/usr/bin/files", args=("--fast",))
WEB = McpServer("web", "http", url="http://127.0.0.1:9/mcp")


@pytest.mark.asyncio
@pytest.mark.parametrize("version", [1, 2])
async def test_each_version_carries_what_the_agent_takes(tmp_path: Path, version: int) -> None:
    session, record = ts_session(tmp_path, "dual_agent.mjs", version)
    session.spec.mcp.servers = [FILES, WEB]
    async with started(session):
        await until(lambda: session.lifecycle.ready, timeout=30)
    new = next(m for m in got(record) if m["method"] == "session/new")
    said = [n for n in notices(session.thread) if n[1] == "Some MCP servers were not given to the agent"]
    if version == 1:
        assert new["params"]["mcpServers"] == [
            {"name": "files", "command": "/usr/bin/files", "args": ["--fast"], "env": []}
        ]
        assert session.spec.mcp.left_out == {"web": "the agent does not take http servers (mcpCapabilities.http)"}
    else:  # the SDK's v2 agent advertises no session.mcp: not even stdio
        assert new["params"]["mcpServers"] == []
        assert set(session.spec.mcp.left_out) == {"files", "web"}
        assert "capabilities.session.mcp.stdio" in session.spec.mcp.left_out["files"]
    assert len(said) == 1 and said[0][0] == "warning"
