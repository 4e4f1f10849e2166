"""New session's pick of MCP servers: for each ACP agent, its catalogue entry's and the person's own, those ticked by
default ticked; what the form sent, as the servers the new session gets (`webclient.session.mcp_servers.pick`)."""

from __future__ import annotations

from collections.abc import Iterable

from starlette.datastructures import FormData
from starlette.requests import Request

from webclient.agents.catalogue import UnknownAgent
from webclient.session.agent_entry import AgentEntry
from webclient.session.mcp_servers import MAX_SERVERS, McpServer, pick
from webclient.web.context import manager
from webclient.web.pages.mcp_page import person_mcp_servers


async def offered_by_agent(request: Request, entries: Iterable[AgentEntry]) -> dict[str, list[McpServer]]:
    """By agent name, the servers New session offers it; an AAP agent none (AAP has no place for them)."""
    acp = [entry for entry in entries if entry.protocol == "acp"]
    mine = await person_mcp_servers(request) if acp else []
    offered = {entry.name: [*entry.mcp_servers, *mine] for entry in acp}
    return {name: servers for name, servers in offered.items() if servers}


async def picked(request: Request, form: FormData, agent: str | None) -> list[McpServer] | None:
    """The servers the form ticked for ``agent``; those ticked by default when the form offered no pick (a script's
    post); None for an agent the catalogue does not have."""
    try:
        entry = manager(request).catalogue.get(agent)
    except UnknownAgent:
        return None  # `start` refuses it, saying so
    if entry.protocol != "acp":
        return []
    mine = await person_mcp_servers(request)
    if form.get("mcp_pick") != "1":
        return pick([*entry.mcp_servers, *mine], None)
    prefix = f"{entry.name}/"
    ticked = [value for value in form.getlist("mcp")[: 4 * MAX_SERVERS] if isinstance(value, str)]
    return pick([*entry.mcp_servers, *mine], [value[len(prefix) :] for value in ticked if value.startswith(prefix)])
