"""People's MCP servers in the store (SQLite and PostgreSQL): kept encrypted, each person's their own, replaced and
renamed in place, bounded, and one the key cannot open left out."""

from __future__ import annotations

import base64
import os

import pytest
from sqlalchemy import select

from webclient.session.mcp_servers import MAX_SERVERS, McpRefused, McpServer
from webclient.store.mcp_servers import PersonMcpServers
from webclient.store.schema import mcp_servers
from webclient.store.store import Store

KEY = base64.urlsafe_b64encode(os.urandom(32))
TOOLS = McpServer("tools", source="person", command="/usr/bin/tools", args=("--fast",), env=(("KEY", "v4lue"),))
WEB = McpServer("web", "http", "person", url="https://mcp.example.com/mcp", headers=(("X-Key", "h3ader"),))


@pytest.mark.asyncio
async def test_a_persons_servers_are_kept_encrypted_and_theirs_alone(store: Store) -> None:
    kept = PersonMcpServers(store.engine, KEY)
    await kept.put("alice", TOOLS)
    await kept.put("alice", WEB)
    assert await kept.servers("alice") == [TOOLS, WEB]
    assert await kept.servers("bob") == []
    async with store.engine.connect() as connection:
        stored = " ".join(row.definition for row in await connection.execute(select(mcp_servers)))
    assert "v4lue" not in stored and "h3ader" not in stored and "/usr/bin/tools" not in stored
    assert not await kept.delete("bob", "tools")
    assert await kept.delete("alice", "tools")
    assert await kept.servers("alice") == [WEB]
    assert await PersonMcpServers(store.engine, base64.urlsafe_b64encode(os.urandom(32))).servers("alice") == []


@pytest.mark.asyncio
async def test_an_edit_replaces_or_renames_and_a_person_keeps_at_most_so_many(store: Store) -> None:
    kept = PersonMcpServers(store.engine, KEY)
    await kept.put("alice", TOOLS)
    renamed = McpServer("tools2", source="person", command="/usr/bin/other", default=False)
    await kept.put("alice", renamed, replacing="tools")
    assert await kept.servers("alice") == [renamed]
    await kept.put("alice", WEB)
    with pytest.raises(McpRefused, match="you have a server called web already"):
        await kept.put("alice", McpServer("web", source="person", command="x"), replacing="tools2")
    for n in range(MAX_SERVERS - 2):
        await kept.put("alice", McpServer(f"s{n}", source="person", command="x"))
    with pytest.raises(McpRefused, match="as many as a person may"):
        await kept.put("alice", McpServer("one-more", source="person", command="x"))
    await kept.put("alice", McpServer("s0", source="person", command="y"))  # a replacement is no more
    assert len(await kept.servers("alice")) == MAX_SERVERS
