"""The agents written with the official ACP TypeScript SDK (``tests/agents/ts``, installed by ``make test``), and
claude-agent-acp from the npm registry, as sessions drive them in-process."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.support.servers import AGENTS
from tests.support.waiting import records
from webclient.acp.agent import AcpAgent
from webclient.session.agent_entry import AgentEntry
from webclient.session.agent_spec import AgentSpec
from webclient.session.core import Session

TS_AGENTS = AGENTS / "ts"
NODE_MODULES = TS_AGENTS / "node_modules"
CLAUDE_AGENT_ACP = NODE_MODULES / "@agentclientprotocol" / "claude-agent-acp" / "dist" / "index.js"


def node() -> str:
    """The node program; the test fails (never skips) when the agents are not installed: ``make test`` does it."""
    program = shutil.which("node")
    if program is None or not (NODE_MODULES / "@agentclientprotocol" / "sdk").is_dir():
        pytest.fail("The TypeScript test agents are not installed: run `make ts-agents` (make test does)")
    return program


def ts_session(tmp_path: Path, agent: str, acp_protocol: int, **env: str) -> tuple[Session, Path]:
    """A session on ``tests/agents/ts/<agent>`` asking ACP ``acp_protocol``, and the file where the agent records
    every message it got."""
    record = tmp_path / "received.jsonl"
    state = tmp_path / "agent-state.json"
    workspace = tmp_path / "workspace"
    workspace.mkdir(exist_ok=True)
    spec = AgentSpec(
        AgentEntry(
            "agent",
            [node(), str(TS_AGENTS / agent)],
            env={"TS_AGENT_LOG": str(record), "TS_AGENT_STATE": str(state), **env},
            start_timeout=30,
            acp_protocol=acp_protocol,
        ),
        workspace,
    )
    return Session(spec, AcpAgent), record


def got(record: Path) -> list[dict[str, Any]]:
    """What the agent received: ``{version, method, params}`` per message."""
    return records(record)
