"""A stdio MCP server runs as its agent's child, inside the agent's sandbox: the catalogue's servers' installations are
read there, a person's add nothing, and a real one (server-everything) answers an agent on the ACP TypeScript SDK."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

from tests.sandbox.attack import outside_tmp
from tests.session.test_acp_v2 import messages, turn
from tests.support.sessions import started
from tests.support.ts_agents import NODE_MODULES, TS_AGENTS, node
from tests.support.waiting import until as until_true
from webclient.acp.agent import AcpAgent
from webclient.agents.sandboxing import confine
from webclient.config import Settings
from webclient.session.agent_entry import AgentEntry
from webclient.session.agent_spec import AgentSpec
from webclient.session.core import Session
from webclient.session.mcp_servers import McpServer

EVERYTHING = NODE_MODULES / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
SANDBOX = {"WEBCLIENT_SANDBOX": "bwrap", "WEBCLIENT_SANDBOX_NETWORK": "off"}


def test_the_catalogues_stdio_servers_are_read_in_the_sandbox_and_a_persons_add_nothing(tmp_path: Path) -> None:
    tool = tmp_path / "opt" / "mcp-tool" / "bin" / "serve"
    tool.parent.mkdir(parents=True)
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    own = tmp_path / "elsewhere" / "own-server"
    entry = AgentEntry("agent", [sys.executable, "-m", "agent"], mcp_servers=(McpServer("tool", command=str(tool)),))
    spec = AgentSpec(entry, Path("/srv/work"))
    spec.mcp.servers = [McpServer("own", source="person", command=str(own))]
    readable = confine(spec, Settings.from_env(SANDBOX)).sandbox.readable
    assert tmp_path / "opt" / "mcp-tool" in readable
    assert not any(path == own.parent or own.parent.is_relative_to(path) for path in readable if path != Path("/"))


@pytest.mark.asyncio
async def test_an_agent_in_a_sandbox_starts_its_stdio_mcp_server_and_calls_its_tool() -> None:
    with outside_tmp() as base:
        workspace, home = base / "workspace", base / "data" / "homes" / "alice"
        workspace.mkdir()
        home.mkdir(parents=True)
        everything = McpServer("everything", command=node(), args=(str(EVERYTHING),))
        entry = AgentEntry(
            "agent",
            [node(), str(TS_AGENTS / "mcp_agent.mjs")],
            env={"TS_AGENT_LOG": str(workspace / "received.jsonl"), "HOME": str(home)},
            start_timeout=30,
            mcp_servers=(everything,),
        )
        settings = Settings.from_env({**SANDBOX, "WEBCLIENT_DATA_DIR": str(base / "data")})
        spec = confine(AgentSpec(entry, workspace), settings)
        spec.mcp.servers = [everything]
        assert spec.sandbox.confined
        session = Session(dataclasses.replace(spec), AcpAgent)
        async with started(session):
            await until_true(lambda: session.lifecycle.ready, timeout=30)
            await turn(session, "hello from the sandbox")
            said = messages(session.thread, "agent-message")
        assert said == ["everything answered: Echo: hello from the sandbox\n\n"]
