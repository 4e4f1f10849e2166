"""Agents of others in a sandbox: an agent on the official ACP TypeScript SDK (``tests/agents/ts``) and
claude-agent-acp from npm start with ``node`` and their ``node_modules`` read-only (found from the script's path,
through the symlink a checkout may have), answer, and keep to their workspace."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
from pathlib import Path

import pytest

from tests.sandbox.attack import outside_tmp
from tests.session.test_acp_v2 import messages, turn
from tests.support.restarts import ready_page, until
from tests.support.servers import ServerFactory
from tests.support.sessions import started
from tests.support.ts_agents import CLAUDE_AGENT_ACP, TS_AGENTS, node
from tests.support.waiting import until as until_true
from webclient.acp.agent import AcpAgent
from webclient.agents.sandboxing import confine
from webclient.config import Settings
from webclient.session.agent_entry import AgentEntry
from webclient.session.agent_spec import AgentSpec
from webclient.session.core import Session


@pytest.mark.asyncio
async def test_an_agent_on_the_typescript_sdk_runs_in_a_sandbox() -> None:
    with outside_tmp() as base:
        workspace, home = base / "workspace", base / "data" / "homes" / "alice"
        workspace.mkdir()
        home.mkdir(parents=True)
        env = {"TS_AGENT_LOG": str(workspace / "received.jsonl"), "TS_AGENT_STATE": str(workspace / "state.json")}
        spec = AgentSpec(
            AgentEntry("agent", [node(), str(TS_AGENTS / "dual_agent.mjs")], env={**env, "HOME": str(home)}), workspace
        )
        settings = Settings.from_env({"WEBCLIENT_SANDBOX": "bwrap", "WEBCLIENT_DATA_DIR": str(base / "data")})
        spec = confine(dataclasses.replace(spec, entry=dataclasses.replace(spec.entry, start_timeout=30)), settings)
        modules = Path(os.path.realpath(TS_AGENTS / "node_modules"))  # a folder, or a link to one elsewhere
        assert spec.sandbox.confined and any(modules.is_relative_to(path) for path in spec.sandbox.readable)
        session = Session(spec, AcpAgent)
        async with started(session):
            await until_true(lambda: session.lifecycle.ready, timeout=30)
            await turn(session, "hello")
            assert messages(session.thread, "agent-message") == ["Hello from ACP v1"]
        assert (workspace / "received.jsonl").exists()  # it wrote in its workspace


@pytest.mark.slow
def test_claude_agent_acp_starts_in_a_sandbox_and_asks_for_a_sign_in(start_server: ServerFactory) -> None:
    with outside_tmp() as base:
        server = start_server(
            agent=f"env IS_SANDBOX=1 {node()} {CLAUDE_AGENT_ACP}",
            workspace=base / "workspace",
            WEBCLIENT_DATA_DIR=str(base / "data"),
            WEBCLIENT_SANDBOX="bwrap",
        )

        async def prompt() -> None:
            async with ready_page(server) as (socket, nonce, _):
                await until(socket, 'data-agent-state="ready"', seconds=60)
                await socket.send(json.dumps({"action": "prompt", "prompt": "hi", "nonce": f"{nonce}-1"}))
                await until(socket, 'data-agent-state="auth-required"', seconds=60)

        asyncio.run(prompt())
