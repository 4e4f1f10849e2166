"""``session/list``: the agent's own sessions, every page of them (https://agentclientprotocol.com/protocol/session-setup#listing-sessions)."""

from __future__ import annotations

from typing import Any

from webclient.acp.connection import AgentConnection
from webclient.session.agent import AgentSession

MAX_LISTED = 1000
"""Of an agent's own sessions, at most this many are listed."""


async def list_all(connection: AgentConnection) -> list[AgentSession]:
    """Every page of ``session/list`` (up to `MAX_LISTED` sessions); raises what the connection raises."""
    cursor: str | None = None
    listed: list[AgentSession] = []
    while len(listed) < MAX_LISTED:
        result = await connection.list_sessions(cursor)
        infos = result.get("sessions")
        listed += filter(None, map(agent_session, infos if isinstance(infos, list) else []))
        next_cursor = result.get("nextCursor")
        if not isinstance(next_cursor, str) or not next_cursor:
            break
        cursor = next_cursor
    return listed[:MAX_LISTED]


def agent_session(info: Any) -> AgentSession | None:
    """A ``SessionInfo``; None when it lacks its id or folder."""
    if not isinstance(info, dict) or not isinstance(info.get("sessionId"), str) or not isinstance(info.get("cwd"), str):
        return None
    title, updated = info.get("title"), info.get("updatedAt")
    return AgentSession(
        id=info["sessionId"],
        cwd=info["cwd"],
        title=title if isinstance(title, str) else None,
        updated=updated if isinstance(updated, str) else None,
    )
