"""A session that spoke ACP v2 reopens after a restart exactly as it was: its turns ended with idle ``state_update``s,
not with the prompts' answers, and the journal's protocol lines rebuild it through the same code."""

from __future__ import annotations

import asyncio
import re
import signal
from pathlib import Path

import pytest

from tests.support.restarts import drive, session_page, stop, store_env, thread_html
from tests.support.servers import ServerFactory
from tests.support.ts_agents import TS_AGENTS, node


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)  # PostgreSQL: tests/store
def test_a_v2_session_reopens_after_a_restart_exactly_as_it_was(
    start_server: ServerFactory, database_url: str, tmp_path: Path
) -> None:
    env = {
        **store_env(database_url, tmp_path),
        "WEBCLIENT_ACP_PROTOCOL": "2",
        "TS_AGENT_STATE": str(tmp_path / "agent-state.json"),
    }
    agent = f"{node()} {TS_AGENTS / 'dual_agent.mjs'}"
    first = start_server(agent=agent, workspace=tmp_path / "workspace", **env)
    session_id = asyncio.run(drive(first, ["hello", "tools", "permission", "plan", "error", "background"]))
    before = thread_html(session_page(first, session_id))
    expected = ("Permission answer: yes", "The agent reported an error", "The model is overloaded", "Watch the build")
    for shown in expected:
        assert shown in before, shown
    assert before.count("Still running in the background") == 1
    assert before.count(">hello<") == 1  # the agent's echo of the prompt is not shown
    stop(first, signal.SIGTERM)

    second = start_server(agent=agent, workspace=tmp_path / "workspace", **env)
    after = session_page(second, session_id)
    # Its agent not started again, the page offers no Stop on the background tool call that advertised cancel.
    assert 'data-action="stop-tool-call"' in before
    assert thread_html(after) == re.sub(r'<button type="button" class="entity-stop".*?</button>', "", before)
    assert 'data-turn-state="ended"' in after

    # Resume: v2 has no session/load; session/resume with replayFrom replays it, compared with what the page shows.
    asyncio.run(drive(second, ["plan"], session_id=session_id))
    resumed = thread_html(session_page(second, session_id))
    assert "With session/resume: what it replayed matches the 6 prompts shown." in resumed
    assert resumed.count(">hello<") == 1


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)  # PostgreSQL: tests/store
def test_a_v1_agent_asked_v2_reopens_after_a_restart_as_it_was(
    start_server: ServerFactory, database_url: str, tmp_path: Path
) -> None:
    env = {**store_env(database_url, tmp_path), "WEBCLIENT_ACP_PROTOCOL": "2"}
    agent = f"{node()} {TS_AGENTS / 'v1_only_agent.mjs'}"
    first = start_server(agent=agent, workspace=tmp_path / "workspace", **env)
    session_id = asyncio.run(drive(first, ["hello", "again"]))
    before = thread_html(session_page(first, session_id))
    assert before.count("Hello from ACP v1") == 2
    stop(first, signal.SIGTERM)
    second = start_server(agent=agent, workspace=tmp_path / "workspace", **env)
    assert thread_html(session_page(second, session_id)) == before
