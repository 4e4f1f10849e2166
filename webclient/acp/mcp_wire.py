"""A session's MCP servers as ``session/new``, ``session/load`` and ``session/resume`` carry them (``mcpServers``).

Spec: https://agentclientprotocol.com/protocol/session-setup#mcp-servers — v1: a stdio server always (``name``,
``command``, ``args``, ``env`` as ``[{name, value}]``), ``http`` and ``sse`` (``type``, ``name``, ``url``, ``headers``
as ``[{name, value}]``) only when ``agentCapabilities.mcpCapabilities`` says ``http`` / ``sse`` is true. The v2 draft:
``type: "stdio"`` too, each kind only when ``capabilities.session.mcp`` holds it, and no SSE at all. Secret references
are filled in here, at the last moment; what the journal keeps of the request has no value of them (`redacted`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from webclient.acp.versions import Greeting
from webclient.acp.wire_values import items, mapping
from webclient.session.mcp_servers import McpServer, MissingSecret, resolved, shown_url

REDACTED = "***"
CARRY_SERVERS = ("session/new", "session/load", "session/resume", "session/fork")


def supported(greeting: Greeting) -> frozenset[str]:
    """The kinds of server the agent said it takes."""
    if greeting.version >= 2:
        mcp = mapping(mapping(greeting.capabilities.get("session")).get("mcp"))
        return frozenset(kind for kind in ("stdio", "http") if isinstance(mcp.get(kind), dict))
    said = mapping(greeting.capabilities.get("mcpCapabilities"))
    return frozenset({"stdio"} | {kind for kind in ("http", "sse") if said.get(kind) is True})


def _why_not(server: McpServer, greeting: Greeting) -> str:
    if greeting.version >= 2 and server.kind == "sse":
        return "ACP v2 has no SSE servers"
    if greeting.version >= 2:
        return f"the agent does not take {server.kind} servers (capabilities.session.mcp.{server.kind})"
    return f"the agent does not take {server.kind} servers (mcpCapabilities.{server.kind})"


def _pairs(pairs: Sequence[tuple[str, str]]) -> list[dict[str, str]]:
    return [{"name": name, "value": value} for name, value in pairs]


def wire_server(server: McpServer, version: int) -> dict[str, Any]:
    """One ``McpServer`` of the schema, its values as given (filled in)."""
    if server.kind == "stdio":
        stdio = {"name": server.name, "command": server.command, "args": list(server.args), "env": _pairs(server.env)}
        return {"type": "stdio", **stdio} if version >= 2 else stdio
    return {"type": server.kind, "name": server.name, "url": server.url, "headers": _pairs(server.headers)}


def offered(
    greeting: Greeting, servers: Sequence[McpServer], secrets: Mapping[str, str]
) -> tuple[list[dict[str, Any]], dict[str, str], set[str]]:
    """What ``mcpServers`` carries for an agent that greeted so, the servers left out (by name, why) and the secret
    values filled in (for `redacted`)."""
    kinds = supported(greeting)
    carried: list[dict[str, Any]] = []
    left_out: dict[str, str] = {}
    used: set[str] = set()
    for server in servers:
        if not server.defined:
            left_out[server.name] = "no longer defined (its catalogue entry, or your MCP servers, changed)"
            continue
        if server.kind not in kinds:
            left_out[server.name] = _why_not(server, greeting)
            continue
        try:
            filled, values = resolved(server, secrets)
        except MissingSecret as missing:
            left_out[server.name] = str(missing)
            continue
        carried.append(wire_server(filled, greeting.version))
        used |= values
    return carried, left_out, used


def redacted(message: Any, secrets: set[str]) -> str | None:
    """The line of a request that carried MCP servers as the journal and protocol log keep it: every variable's and
    header's value, and any secret filled into an argument or a URL, as ``***``; a URL without user, password, query
    or fragment; None for any other message."""
    if not isinstance(message, dict) or message.get("method") not in CARRY_SERVERS:
        return None
    params = mapping(message.get("params"))
    servers = items(params.get("mcpServers"))
    if not servers:
        return None
    kept = []
    for carried in servers:
        carried = dict(mapping(carried))
        for key in ("env", "headers"):
            if key in carried:
                carried[key] = [{"name": mapping(pair).get("name"), "value": REDACTED} for pair in items(carried[key])]
        if "args" in carried:
            carried["args"] = [_hide(arg, secrets) for arg in items(carried["args"])]
        if isinstance(url := carried.get("url"), str):
            carried["url"] = shown_url(_hide(url, secrets))
        kept.append(carried)
    return json.dumps({**message, "params": {**params, "mcpServers": kept}})


def _hide(arg: Any, secrets: set[str]) -> Any:
    if not isinstance(arg, str):
        return arg
    for secret in secrets:
        arg = arg.replace(secret, REDACTED)
    return arg
