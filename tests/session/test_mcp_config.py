"""An agent's MCP servers in the config file: ``[agents.NAME.mcp_servers.SERVER]``, checked and bounded, every
mistake naming the file, the agent and the server."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.session.test_catalogue import catalogue
from webclient.agents.catalogue import CatalogueError
from webclient.session.mcp_servers import MAX_ITEMS, MAX_SERVERS, McpServer


def test_stdio_http_and_sse_servers_are_read_in_order(tmp_path: Path) -> None:
    entry = catalogue(
        tmp_path,
        """
[agents.a]
command = "agent"
[agents.a.mcp_servers.everything]
command = "/usr/bin/npx"
args = ["server-everything", "--key=${secret:KEY}"]
env = { DEBUG = "1" }
[agents.a.mcp_servers.web]
type = "http"
url = "https://mcp.example.com/mcp"
headers = { Authorization = "Bearer ${secret:TOKEN}" }
[agents.a.mcp_servers.events]
type = "sse"
url = "http://127.0.0.1:3001/sse"
""",
    ).get("a")
    assert entry.mcp_servers == (
        McpServer(
            "everything",
            command="/usr/bin/npx",
            args=("server-everything", "--key=${secret:KEY}"),
            env=(("DEBUG", "1"),),
        ),
        McpServer(
            "web",
            "http",
            url="https://mcp.example.com/mcp",
            headers=(("Authorization", "Bearer ${secret:TOKEN}"),),
        ),
        McpServer("events", "sse", url="http://127.0.0.1:3001/sse"),
    )
    assert [s.key for s in entry.mcp_servers] == ["agent:everything", "agent:web", "agent:events"]
    assert entry.mcp_servers[0].public() == {
        "name": "everything",
        "kind": "stdio",
        "source": "agent",
        "command": "/usr/bin/npx",
        "env": ["DEBUG"],
    }


def test_an_agent_without_servers_has_none(tmp_path: Path) -> None:
    assert catalogue(tmp_path, '[agents.a]\ncommand = "x"\n').get("a").mcp_servers == ()


MANY_SERVERS = "".join(f'[agents.a.mcp_servers.s{n}]\ncommand = "x"\n' for n in range(MAX_SERVERS + 1))
MANY_ARGS = ", ".join('"x"' for _ in range(MAX_ITEMS + 1))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("mcp_servers = 1\n", "field mcp_servers: must be tables"),
        ("[agents.a.mcp_servers.s]\n", "field mcp_servers.s: command: missing"),
        ('[agents.a.mcp_servers.s]\ncommand = "x"\nport = 1\n', "field mcp_servers.s: unknown field 'port'"),
        ('[agents.a.mcp_servers.s]\ntype = "ws"\nurl = "http://x"\n', "mcp_servers.s: type: 'ws' is not one of"),
        ('[agents.a.mcp_servers.s]\ntype = "http"\n', "mcp_servers.s: url: missing or not an http(s):// URL"),
        ('[agents.a.mcp_servers.s]\ntype = "http"\nurl = "file:///etc"\n', "url: missing or not an http(s)"),
        ('[agents.a.mcp_servers.s]\ntype = "sse"\nurl = "http://x"\ncommand = "y"\n', "are for stdio servers"),
        ('[agents.a.mcp_servers.s]\ncommand = "x"\nurl = "http://x"\n', 'are for type = "http" or "sse"'),
        ('[agents.a.mcp_servers.s]\ncommand = "x"\nargs = "y"\n', "mcp_servers.s: args must be a list of strings"),
        ('[agents.a.mcp_servers.s]\ncommand = "x"\nenv = { K = 1 }\n', "env must be a table of strings"),
        ('[agents.a.mcp_servers.s]\ncommand = "x"\nenv = { "A-B" = "1" }\n', "env: 'A-B' is not a variable"),
        ('[agents.a.mcp_servers.s]\ntype = "http"\nurl = "http://x"\nheaders = { "a b" = "1" }\n', "headers: 'a b'"),
        ('[agents.a.mcp_servers."bad name"]\ncommand = "x"\n', "mcp_servers.bad name: name: letters, digits"),
        (f'[agents.a.mcp_servers.s]\ncommand = "x"\nargs = [{MANY_ARGS}]\n', f"args: at most {MAX_ITEMS}"),
        (f'[agents.a.mcp_servers.s]\ncommand = "{"x" * 4001}"\n', "at most 4,000 characters"),
        (MANY_SERVERS, f"field mcp_servers: at most {MAX_SERVERS} servers"),
    ],
)
def test_every_mistake_names_the_agent_and_the_server(tmp_path: Path, text: str, message: str) -> None:
    head = '[agents.a]\ncommand = "agent"\n'
    if text.startswith("mcp_servers ="):
        head, text = '[agents.a]\ncommand = "agent"\n' + text, ""
    with pytest.raises(CatalogueError) as refused:
        catalogue(tmp_path, head + text)
    assert str(refused.value).startswith(f"{tmp_path / 'agents.toml'}: agent 'a': field mcp_servers")
    assert message in str(refused.value)


def test_a_remote_agent_has_no_mcp_servers(tmp_path: Path) -> None:
    text = '[agents.r]\nurl = "http://127.0.0.1:9"\n[agents.r.mcp_servers.s]\ncommand = "x"\n'
    with pytest.raises(CatalogueError, match="field mcp_servers: only an ACP agent is given MCP servers"):
        catalogue(tmp_path, text)
