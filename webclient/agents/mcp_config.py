"""An agent's MCP servers in the config file: ``[agents.NAME.mcp_servers.SERVER]`` tables, each a stdio server
(``command``, ``args``, ``env``) or an HTTP one (``type = "http"`` or ``"sse"``, ``url``, ``headers``), checked and
bounded by `webclient.session.mcp_servers.server`."""

from __future__ import annotations

from typing import Any, Protocol

from webclient.session.mcp_servers import MAX_SERVERS, McpRefused, McpServer, server

FIELDS = {"type", "command", "args", "env", "url", "headers"}


class FieldErrors(Protocol):
    """Where an error names the file and the agent (`webclient.agents.config_file`)."""

    def error(self, key: str, problem: str) -> ValueError: ...


def read_servers(table: object, fields: FieldErrors, protocol: str) -> tuple[McpServer, ...]:
    """The ``mcp_servers`` tables of one agent's entry.

    Raises:
        CatalogueError (through ``fields.error``): naming the server and its field.
    """
    if table is None:
        return ()
    if protocol != "acp":
        raise fields.error("mcp_servers", "only an ACP agent is given MCP servers (AAP has no place for them)")
    if not isinstance(table, dict) or not all(isinstance(value, dict) for value in table.values()):
        raise fields.error("mcp_servers", "must be tables, [agents.NAME.mcp_servers.SERVER]")
    if len(table) > MAX_SERVERS:
        raise fields.error("mcp_servers", f"at most {MAX_SERVERS} servers")
    return tuple(_server(str(name), definition, fields) for name, definition in table.items())


def _server(name: str, definition: dict[str, Any], fields: FieldErrors) -> McpServer:
    key = f"mcp_servers.{name}"
    unknown = sorted(set(definition) - FIELDS)
    if unknown:
        raise fields.error(key, f"unknown field {unknown[0]!r} (known: {', '.join(sorted(FIELDS))})")
    kind = definition.get("type", "stdio")
    texts = {k: definition.get(k, "") for k in ("command", "url")}
    args = definition.get("args", [])
    tables = {k: definition.get(k, {}) for k in ("env", "headers")}
    if not isinstance(kind, str) or not all(isinstance(v, str) for v in texts.values()):
        raise fields.error(key, "type, command and url must be strings")
    if not isinstance(args, list) or not all(isinstance(arg, str) for arg in args):
        raise fields.error(key, "args must be a list of strings")
    for label, pairs in tables.items():
        if not isinstance(pairs, dict) or not all(isinstance(v, str) for v in pairs.values()):
            raise fields.error(key, f'{label} must be a table of strings, e.g. {label} = {{ NAME = "..." }}')
    try:
        return server(name, kind, source="agent", args=args, **texts, **tables)
    except McpRefused as refused:
        raise fields.error(key, str(refused)) from None
