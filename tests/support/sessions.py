"""Sessions driven in-process through the real ACP adapter, on a real test agent (``tests/agents``)."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import AsyncIterator
from pathlib import Path

from tests.support.servers import AGENTS
from webclient.acp.agent import AcpAgent
from webclient.session.agent_entry import AgentEntry
from webclient.session.agent_spec import AgentSpec
from webclient.session.core import Session


def agent_session(tmp_path: Path, agent: str, start_timeout: float = 120.0, **env: str) -> tuple[Session, Path]:
    """A session on ``tests/agents/<agent>`` in ``tmp_path``, and the file where the agent records what it got."""
    record = tmp_path / "received.jsonl"
    spec = AgentSpec(
        AgentEntry(
            "agent",
            [sys.executable, str(AGENTS / agent)],
            env={"RECORD_FILE": str(record), **env},
            start_timeout=start_timeout,
        ),
        tmp_path,
    )
    return Session(spec, AcpAgent), record


@contextlib.asynccontextmanager
async def started(session: Session) -> AsyncIterator[Session]:
    """The session with its agent starting; closed afterwards."""
    session.start()
    try:
        yield session
    finally:
        await session.close()


def acp(session: Session) -> AcpAgent:
    """The session's ACP adapter (its protocol log, its stderr)."""
    assert isinstance(session.agent, AcpAgent)
    return session.agent
