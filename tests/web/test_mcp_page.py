"""A person's own MCP servers: added, edited (a value left blank stays, none is ever shown again), deleted, each
person's their own, bounded; ticked on New session, and given to the session's agent as ticked."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from tests.support.people import TEAM, person_client
from tests.support.servers import Server, ServerFactory, migrated_store
from tests.support.urls import URLS
from webclient.session.mcp_servers import MAX_SERVERS

PAGE = URLS.for_("mcp_servers")
DELETE = URLS.for_("delete_mcp_server")
AGENT = Path(__file__).resolve().parents[1] / "agents" / "mcp_echo_agent.py"
CONFIG = f"""
[agents.mcp]
command = "{sys.executable}"
args = ["{AGENT}"]
env = {{ MCP_KINDS = "http" }}
[agents.mcp.mcp_servers.shared]
command = "/usr/bin/shared-mcp"
"""


def listed(text: str) -> dict[str, str]:
    """The servers on the page, by name: their row's text."""
    page = BeautifulSoup(text, "html.parser")
    return {str(row["data-mcp-server"]): row.get_text(" ", strip=True) for row in page.select("tr[data-mcp-server]")}


@pytest.fixture
def server(start_server: ServerFactory, tmp_path: Path) -> Server:
    config = tmp_path / "agents.toml"
    config.write_text(CONFIG)
    data = migrated_store(tmp_path / "data")  # a store already migrated: these tests are not of migrating
    return start_server(None, WEBCLIENT_CONFIG=str(config), WEBCLIENT_DATA_DIR=str(data), **TEAM)


STDIO = {"name": "tools", "kind": "stdio", "command": "/usr/bin/tools", "args": "--fast\n--dir=/tmp", "default": "yes"}


def test_a_person_adds_edits_and_deletes_their_servers_and_no_value_is_shown_again(server: Server) -> None:
    alice, bob = person_client(server, "alice"), person_client(server, "bob")
    assert "No MCP servers yet" in alice.get(PAGE).text
    saved = alice.post(PAGE, data={**STDIO, "env": "API_KEY=value-one\nMODE=${secret:MODE}"})
    assert saved.status_code == 303, saved.text[:300]
    page = alice.get(saved.headers["location"]).text
    assert "Saved tools" in page and "value-one" not in page
    assert listed(page)["tools"].startswith("tools stdio /usr/bin/tools --fast --dir=/tmp env: API_KEY, MODE yes")
    web = {"name": "web", "kind": "http", "url": "https://mcp.example.com/mcp", "headers": "Authorization: Bearer t0k"}
    assert alice.post(PAGE, data=web).status_code == 303
    assert list(listed(alice.get(PAGE).text)) == ["tools", "web"]
    assert listed(bob.get(PAGE).text) == {}  # alice's are hers

    edit = alice.get(PAGE, params={"edit": "tools"}).text
    assert "value-one" not in edit and "API_KEY=" in edit and 'name="replacing" value="tools"' in edit
    renamed = {**STDIO, "name": "tools2", "replacing": "tools", "env": "API_KEY=\nMODE=", "default": ""}
    assert alice.post(PAGE, data=renamed).status_code == 303  # blank values: kept as they were
    rows = listed(alice.get(PAGE).text)
    assert list(rows) == ["tools2", "web"] and rows["tools2"].endswith("no Edit Delete")

    assert bob.post(DELETE, data={"name": "web"}).status_code == 303  # not his: nothing happens
    assert "web" in listed(alice.get(PAGE).text)
    assert alice.post(DELETE, data={"name": "web"}).status_code == 303
    assert list(listed(alice.get(PAGE).text)) == ["tools2"]


@pytest.mark.parametrize(
    ("form", "why"),
    [
        ({"name": "bad name", "kind": "stdio", "command": "x"}, "name: letters, digits"),
        ({"name": "s", "kind": "ws", "command": "x"}, "type: &#39;ws&#39; is not one of"),
        ({"name": "s", "kind": "stdio"}, "command: missing"),
        ({"name": "s", "kind": "http", "url": "javascript:alert(1)"}, "url: missing or not an http(s)"),
        ({"name": "s", "kind": "stdio", "command": "x", "env": "NO_EQUALS"}, "each line is NAME=value"),
        ({"name": "s", "kind": "stdio", "command": "x", "env": "EMPTY="}, "EMPTY has no value"),
        ({"name": "s", "kind": "stdio", "command": "x", "args": "a\n" * 65}, "args: at most 64"),
        ({"name": "s", "kind": "stdio", "command": "x" * 5000}, "at most 4,000 characters"),
    ],
)
def test_a_server_that_cannot_be_used_is_refused_saying_why(server: Server, form: dict[str, str], why: str) -> None:
    alice = person_client(server, "alice")
    refused = alice.post(PAGE, data={**form, "headers": "", "env": form.get("env", "") + "\nSECRET=never-back"})
    assert refused.status_code == 400 and why in refused.text
    assert "never-back" not in refused.text  # a refused form sends no value back
    assert listed(alice.get(PAGE).text) == {}


def test_a_person_keeps_at_most_so_many_servers(server: Server) -> None:
    alice = person_client(server, "alice")
    for n in range(MAX_SERVERS):
        assert alice.post(PAGE, data={"name": f"s{n}", "kind": "stdio", "command": "x"}).status_code == 303
    refused = alice.post(PAGE, data={"name": "one-more", "kind": "stdio", "command": "x"})
    assert refused.status_code == 400 and "as many as a person may" in refused.text
    assert alice.post(PAGE, data={"name": "s0", "kind": "stdio", "command": "y"}).status_code == 303  # replaced


def test_new_session_ticks_the_defaults_and_the_agent_gets_what_was_ticked(server: Server) -> None:
    alice = person_client(server, "alice")
    alice.post(PAGE, data={"name": "mine", "kind": "stdio", "command": "/usr/bin/mine", "default": "yes"})
    alice.post(PAGE, data={"name": "spare", "kind": "http", "url": "http://127.0.0.1:9/mcp"})
    index = BeautifulSoup(alice.get(URLS.for_("index")).text, "html.parser")
    boxes = {str(box["value"]): box.has_attr("checked") for box in index.select("[data-role=mcp-pick] input")}
    assert boxes == {
        "mcp/agent:shared": True,
        "mcp/person:mine": True,
        "mcp/person:spare": False,
        "demo/person:mine": True,  # the demo is an ACP agent too
        "demo/person:spare": False,
    }
    csrf = re.search(r'name="csrf" value="([^"]+)"', str(index))
    form = {"agent": "mcp", "mcp_pick": "1", "mcp": ["mcp/person:spare", "mcp/agent:shared"]}
    created = alice.post(URLS.for_("new_session"), data={**form, "csrf": csrf.group(1) if csrf else ""})
    assert created.status_code == 303, created.text[:300]
    new = server.wait_received(lambda m: m.get("method") == "session/new")
    assert [s["name"] for s in new["params"]["mcpServers"]] == ["shared", "spare"]
    page = BeautifulSoup(alice.get(created.headers["location"]).text, "html.parser")
    shown = [str(tag["data-mcp-server"]) for tag in page.select("header [data-role=mcp-servers] [data-mcp-server]")]
    assert shown == ["shared", "spare"]


def test_a_server_of_yours_named_like_the_agents_own_is_offered_to_it_disabled_saying_why(server: Server) -> None:
    alice = person_client(server, "alice")
    alice.post(PAGE, data={"name": "shared", "kind": "stdio", "command": "/usr/bin/mine", "default": "yes"})
    index = BeautifulSoup(alice.get(URLS.for_("index")).text, "html.parser")
    boxes = {str(box["value"]): box for box in index.select("[data-role=mcp-pick] input")}
    clash = boxes["mcp/person:shared"]
    assert clash.has_attr("disabled") and not clash.has_attr("checked")
    label = clash.find_parent("label")
    assert label is not None and "named like this agent's own" in label.get_text(" ", strip=True)
    assert boxes["mcp/agent:shared"].has_attr("checked") and not boxes["mcp/agent:shared"].has_attr("disabled")
    assert boxes["demo/person:shared"].has_attr("checked") and not boxes["demo/person:shared"].has_attr("disabled")
