"""A person adds an MCP server (server-everything, from the npm registry) on their settings page, starts a session that
picks it, sees it in the header, and the agent (on the official ACP TypeScript SDK) calls its tool; after the server
restarts the header still lists it, and Resume gives it to the agent again: in a real Chromium."""

from __future__ import annotations

import secrets
import signal
import subprocess
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.support.browser import send_prompt, until_connected
from tests.support.restarts import journalled
from tests.support.servers import Server, free_port, launch_server, stop_server
from tests.support.ts_agents import NODE_MODULES, TS_AGENTS, node
from tests.support.urls import URLS

EVERYTHING = NODE_MODULES / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"


def test_a_persons_mcp_server_is_picked_listed_called_and_still_there_after_a_restart(
    page: Page, tmp_path: Path
) -> None:
    config = tmp_path / "agents.toml"
    log = tmp_path / "received-by-agent.jsonl"
    config.write_text(
        f'[agents.ts-mcp]\ncommand = "{node()}"\nargs = ["{TS_AGENTS / "mcp_agent.mjs"}"]\n'
        f'env = {{ TS_AGENT_LOG = "{log}" }}\nstart_timeout = 60\n'
    )
    port, token = free_port(), secrets.token_urlsafe(16)
    env = {"WEBCLIENT_CONFIG": str(config), "WEBCLIENT_DATA_DIR": str(tmp_path / "data")}

    def start() -> Server:
        return launch_server(port, token, tmp_path / "received.jsonl", tmp_path, [], env, subprocess.DEVNULL)

    server = start()
    try:
        page.goto(server.sign_in_url(URLS.for_("mcp_servers")))
        form = page.locator('[data-role="mcp-form"]')
        form.locator('input[name="name"]').fill("everything")
        form.locator('input[name="command"]').fill(node())
        form.locator('textarea[name="args"]').fill(str(EVERYTHING))
        form.locator('textarea[name="env"]').fill("GREETING=hello")
        form.locator('[data-action="save-mcp-server"]').click()
        expect(page.locator('[data-role="saved"]')).to_have_text("Saved everything.")
        expect(page.locator('tr[data-mcp-server="everything"]')).to_contain_text("env: GREETING")

        page.goto(server.url + URLS.for_("index"))
        picked = page.locator('[data-role="mcp-pick"][data-agent="ts-mcp"] input[data-mcp-server="person:everything"]')
        expect(picked).to_be_checked()
        page.click('[data-action="new-session"][data-agent="ts-mcp"]')
        expect(page.locator("#session")).to_have_attribute("data-turn-state", "idle", timeout=60_000)
        listed = page.locator('header [data-role="mcp-servers"] [data-mcp-server="everything"]')
        expect(listed).to_contain_text("everything stdio")
        send_prompt(page, "hello from the browser")
        answer = page.locator('[data-role="agent-message"]').last
        expect(answer).to_contain_text("everything answered: Echo: hello from the browser", timeout=60_000)
        journalled(tmp_path / "data", "everything answered")

        server.process.send_signal(signal.SIGTERM)
        server.process.wait(timeout=30)
        stop_server(server)
        server = start()
        page.reload()
        expect(listed).to_contain_text("everything stdio")
        expect(listed).not_to_have_attribute("data-left-out", "")
        until_connected(page)
        page.click('[data-action="resume"]')
        expect(page.locator("#session")).to_have_attribute("data-turn-state", "idle", timeout=60_000)
        send_prompt(page, "and again")
        answer = page.locator('[data-role="agent-message"]').last
        expect(answer).to_contain_text("everything answered: Echo: and again", timeout=60_000)
    finally:
        stop_server(server)
