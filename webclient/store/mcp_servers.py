"""People's own MCP servers (`webclient.session.mcp_servers`), in the store's ``mcp_servers`` table.

A definition (command, arguments, variables, URL, headers) may hold a value a person typed rather than a
``${secret:NAME}`` reference, so it is encrypted with the server's key as secrets are (`webclient.store.secrets`);
the page shows names, kinds, commands and URLs, never a variable's or header's value.
"""

from __future__ import annotations

import functools
import json
import logging
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import delete, insert, select, update

from webclient.session.mcp_servers import MAX_SERVERS, McpRefused, McpServer, server
from webclient.store.database import Database
from webclient.store.schema import mcp_servers

if TYPE_CHECKING:
    from cryptography.fernet import Fernet

log = logging.getLogger(__name__)


class PersonMcpServers:
    """Every person's MCP servers, their definitions encrypted with ``key`` (the secrets' Fernet key)."""

    def __init__(self, engine: Database, key: bytes) -> None:
        self.engine = engine
        self.key = key

    @functools.cached_property
    def _fernet(self) -> Fernet:
        from cryptography.fernet import Fernet  # at the first use: see webclient.store.secrets

        return Fernet(self.key)

    async def servers(self, person_id: str) -> list[McpServer]:
        """The person's servers by name; one the key cannot open (the key changed) is left out."""
        query = select(mcp_servers).where(mcp_servers.c.person_id == person_id).order_by(mcp_servers.c.name)
        async with self.engine.connect() as connection:
            rows = list(await connection.execute(query))
        if not rows:
            return []
        from cryptography.fernet import InvalidToken

        found: list[McpServer] = []
        for row in rows:
            try:
                kept = json.loads(self._fernet.decrypt(row.definition.encode()))
                found.append(server(row.name, row.kind, source="person", default=row.is_default, **kept))
            except (InvalidToken, ValueError, TypeError):  # its name only: never a value
                log.warning(
                    "the MCP server %s of %s cannot be read with this server's key: left out", row.name, person_id
                )
        return found

    async def put(self, person_id: str, definition: McpServer, replacing: str | None = None) -> None:
        """Keep ``definition`` as the person's (in place of ``replacing``, or of one of its name).

        Raises:
            McpRefused: one too many, or a name another of theirs has.
        """
        sealed = self._fernet.encrypt(json.dumps(_definition(definition)).encode()).decode()
        values = {"kind": definition.kind, "is_default": definition.default, "definition": sealed}
        now = datetime.now(UTC)
        mine = mcp_servers.c.person_id == person_id
        async with self.engine.begin() as connection:
            names = set((await connection.execute(select(mcp_servers.c.name).where(mine))).scalars())
            if replacing is not None and replacing != definition.name and definition.name in names:
                raise McpRefused(f"name: you have a server called {definition.name} already")
            old = replacing if replacing in names else definition.name if definition.name in names else None
            if old is None and len(names) >= MAX_SERVERS:
                raise McpRefused(f"you have {MAX_SERVERS} servers, as many as a person may: delete one first")
            if old is not None:
                where = mine & (mcp_servers.c.name == old)
                await connection.execute(
                    update(mcp_servers).where(where).values(name=definition.name, updated=now, **values)
                )
            else:
                row = {"person_id": person_id, "name": definition.name, "updated": now, **values}
                await connection.execute(insert(mcp_servers).values(**row))

    async def delete(self, person_id: str, name: str) -> bool:
        mine = (mcp_servers.c.person_id == person_id) & (mcp_servers.c.name == name)
        async with self.engine.begin() as connection:
            return bool((await connection.execute(delete(mcp_servers).where(mine))).rowcount)


def _definition(definition: McpServer) -> dict[str, Any]:
    """What is encrypted: everything but its name, kind and whether it is ticked by default (columns of their own)."""
    return {
        "command": definition.command,
        "args": list(definition.args),
        "env": dict(definition.env),
        "url": definition.url,
        "headers": dict(definition.headers),
    }


__all__ = ["McpRefused", "PersonMcpServers"]
