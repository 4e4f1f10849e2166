"""``mcpServers`` as each version of ACP carries them: the schema's shapes, the kinds the agent takes, the rest left
out with why, secrets filled in and kept out of what is recorded."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.support.acp_schema import validate
from webclient.acp.mcp_wire import offered, redacted
from webclient.acp.versions import DIALECTS, Greeting
from webclient.session.mcp_servers import McpServer, from_public

STDIO = McpServer("files", command="/bin/files", args=("--key=${secret:KEY}",), env=(("TOKEN", "${secret:KEY}"),))
HTTP = McpServer("web", "http", url="https://mcp.example.com/mcp", headers=(("Authorization", "Bearer ${secret:KEY}"),))
SSE = McpServer("events", "sse", url="http://127.0.0.1:3001/sse")
SECRETS = {"KEY": "k3y"}


def v1(mcp: dict[str, Any] | None = None) -> Greeting:
    capabilities = {"mcpCapabilities": mcp} if mcp is not None else {}
    return DIALECTS[1].greeting({"protocolVersion": 1, "agentCapabilities": capabilities})


def v2(mcp: dict[str, Any] | None) -> Greeting:
    session = {"mcp": mcp} if mcp is not None else {}
    return DIALECTS[2].greeting({"protocolVersion": 2, "capabilities": {"session": session}})


def test_v1_sends_stdio_always_and_http_or_sse_when_the_agent_takes_them() -> None:
    carried, left_out, used = offered(v1(), [STDIO, HTTP, SSE], SECRETS)
    assert carried == [
        {"name": "files", "command": "/bin/files", "args": ["--key=k3y"], "env": [{"name": "TOKEN", "value": "k3y"}]}
    ]
    assert left_out == {
        "web": "the agent does not take http servers (mcpCapabilities.http)",
        "events": "the agent does not take sse servers (mcpCapabilities.sse)",
    }
    assert used == {"k3y"}
    carried, left_out, _ = offered(v1({"http": True, "sse": True}), [STDIO, HTTP, SSE], SECRETS)
    assert left_out == {}
    assert carried[1:] == [
        {
            "type": "http",
            "name": "web",
            "url": "https://mcp.example.com/mcp",
            "headers": [{"name": "Authorization", "value": "Bearer k3y"}],
        },
        {"type": "sse", "name": "events", "url": "http://127.0.0.1:3001/sse", "headers": []},
    ]
    for server in carried:
        validate(server, "McpServer", 1)


def test_v2_types_stdio_takes_what_session_mcp_holds_and_has_no_sse() -> None:
    carried, left_out, _ = offered(v2({"stdio": {}, "http": {}}), [STDIO, HTTP, SSE], SECRETS)
    assert [server["type"] for server in carried] == ["stdio", "http"]
    assert left_out == {"events": "ACP v2 has no SSE servers"}
    for server in carried:
        validate(server, "McpServer", 2)
    carried, left_out, _ = offered(v2(None), [STDIO], SECRETS)
    assert carried == [] and left_out == {
        "files": "the agent does not take stdio servers (capabilities.session.mcp.stdio)"
    }


def test_a_missing_secret_or_a_server_no_longer_defined_is_left_out() -> None:
    stale = from_public(STDIO.public())
    carried, left_out, _ = offered(v1({"http": True}), [STDIO, HTTP, stale], {})
    assert carried == []
    assert left_out["web"] == "the secret KEY is not set"
    assert left_out["files"].startswith("no longer defined")


@pytest.mark.parametrize("method", ["session/new", "session/load", "session/resume"])
def test_what_is_recorded_holds_no_value(method: str) -> None:
    carried, _, used = offered(v1({"http": True}), [STDIO, HTTP], SECRETS)
    message = {"jsonrpc": "2.0", "id": 3, "method": method, "params": {"cwd": "/w", "mcpServers": carried}}
    kept = redacted(message, used)
    assert kept is not None and "k3y" not in kept
    servers = json.loads(kept)["params"]["mcpServers"]
    assert servers[0]["env"] == [{"name": "TOKEN", "value": "***"}] and servers[0]["args"] == ["--key=***"]
    assert servers[1]["headers"] == [{"name": "Authorization", "value": "***"}]
    assert redacted({"method": "session/prompt", "params": {}}, used) is None


def test_the_journal_keeps_names_kinds_commands_and_urls_only() -> None:
    secret_url = McpServer("web", "http", url="https://user:pw@mcp.example.com:8443/mcp?key=abc#x")
    assert secret_url.public() == {
        "name": "web",
        "kind": "http",
        "source": "agent",
        "url": "https://mcp.example.com:8443/mcp",
        "headers": [],
    }
    assert "k3y" not in json.dumps([STDIO.public(), HTTP.public()])
    assert STDIO.where == "/bin/files …"


def test_a_secret_in_a_url_is_filled_in_and_the_recorded_url_holds_no_secret_credentials_or_query() -> None:
    keyed = McpServer("keyed", "http", url="https://mcp.example.com/${secret:KEY}/mcp?token=${secret:KEY}")
    literal = McpServer("literal", "http", url="https://user:pw@mcp.example.com/mcp?key=abc#x")
    carried, left_out, used = offered(v1({"http": True}), [keyed, literal], SECRETS)
    assert left_out == {}
    assert [server["url"] for server in carried] == [
        "https://mcp.example.com/k3y/mcp?token=k3y",
        "https://user:pw@mcp.example.com/mcp?key=abc#x",
    ]
    message = {"jsonrpc": "2.0", "id": 3, "method": "session/new", "params": {"cwd": "/w", "mcpServers": carried}}
    kept = redacted(message, used)
    assert kept is not None
    assert [server["url"] for server in json.loads(kept)["params"]["mcpServers"]] == [
        "https://mcp.example.com/***/mcp",
        "https://mcp.example.com/mcp",
    ]
