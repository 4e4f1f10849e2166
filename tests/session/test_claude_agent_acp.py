"""claude-agent-acp 0.101.0 (npm, ``tests/agents/ts``), started without a key (an empty HOME, no ANTHROPIC_API_KEY) in
both ACP versions: it initializes in the version asked, opens a session (it checks the account at the first prompt),
and that prompt ends with its ``Authentication required`` (an error answer in v1, an idle ``state_update`` with the
``error`` stop reason in v2), which the page turns into the sign-in it offers: its terminal methods (the client
advertises ``auth.terminal``). What the page shows, and what the protocol log holds."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import httpx
import pytest

from tests.support import waiting
from tests.support.restarts import ready_page, session_page, thread_html, until
from tests.support.servers import ServerFactory
from tests.support.sessions import started
from tests.support.ts_agents import CLAUDE_AGENT_ACP, node
from tests.support.urls import URLS
from webclient.acp.agent import AcpAgent
from webclient.session.agent_entry import AgentEntry
from webclient.session.agent_spec import AgentSpec
from webclient.session.core import Session

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("version", ["1", "2"])
def test_claude_agent_acp_without_a_key_starts_and_asks_for_a_sign_in(
    start_server: ServerFactory, tmp_path: Path, version: str
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    unset = "-u ANTHROPIC_API_KEY -u CLAUDE_CODE_OAUTH_TOKEN -u ANTHROPIC_AUTH_TOKEN -u CLAUDE_CONFIG_DIR"
    # IS_SANDBOX: run as root (CI containers), Claude Code refuses its default permission mode otherwise.
    server = start_server(
        agent=f"env {unset} IS_SANDBOX=1 HOME={home} {node()} {CLAUDE_AGENT_ACP}",
        workspace=tmp_path / "workspace",
        WEBCLIENT_ACP_PROTOCOL=version,
    )

    async def prompt() -> str:
        async with ready_page(server) as (socket, nonce, session_id):
            await until(socket, 'data-agent-state="ready"', seconds=60)
            await socket.send(json.dumps({"action": "prompt", "prompt": "hi", "nonce": f"{nonce}-1"}))
            await until(socket, 'data-agent-state="auth-required"', seconds=60)
            return session_id

    session_id = asyncio.run(prompt())
    page = session_page(server, session_id)
    assert "Claude Agent" in page
    shown = thread_html(page)
    assert "The agent asks you to sign in" in shown and "Authentication required" in shown
    assert "The agent reported an error" not in shown
    # Its own sign-in, offered to run in the page's terminal: claude-agent-acp's own command with the method's args.
    assert re.search(r'data-terminal-sign-in="[^"]+"', page), page[page.find('class="auth"') :][:2000]
    assert "auth login" in page
    assert shown.count(">hi<") == 1  # v2: the agent's user_message echo is not shown again
    with httpx.Client(base_url=server.url, headers=server.headers, timeout=30) as http:
        log = http.get(URLS.for_("protocol_log", session_id=session_id)).text
    assert re.search(rf"&#34;protocolVersion&#34;: ?{version}|\"protocolVersion\": ?{version}", log)
    if version == "2":
        assert "state_update" in log and "auth/login" not in log


@pytest.mark.asyncio
async def test_claude_agent_acp_pinned_to_v2_refuses_a_v1_client_and_the_start_says_what_to_set(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    spec = AgentSpec(
        AgentEntry(
            "agent",
            ["env", "-u", "ANTHROPIC_API_KEY", f"HOME={home}", node(), str(CLAUDE_AGENT_ACP)],
            env={"CLAUDE_AGENT_ACP_PROTOCOL": "v2", "IS_SANDBOX": "1"},
            start_timeout=60,
            acp_protocol=1,
        ),
        tmp_path,
    )
    session = Session(spec, AcpAgent)
    async with started(session):
        await waiting.until(lambda: session.lifecycle.agent_state == "failed", timeout=60)
    assert session.lifecycle.error is not None
    assert session.lifecycle.error.startswith("The agent speaks only ACP version 2; this client asked for version 1.")
