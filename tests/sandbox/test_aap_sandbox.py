"""A remote agent's (AAP) ``run_command`` runs in the session's sandbox too: the demo AAP server asks for ``ls`` in the
workspace, which runs inside bwrap and lists what the workspace holds."""

from __future__ import annotations

import asyncio
import logging

import pytest

from tests.aap.test_aap_session import cards, said
from tests.sandbox.attack import outside_tmp
from tests.support.aap_servers import demo_aap_server
from tests.support.sessions import started
from tests.support.waiting import until
from webclient.aap.agent import AapAgent
from webclient.agents.sandboxing import confine
from webclient.config import Settings
from webclient.session.agent_entry import AgentEntry
from webclient.session.agent_spec import AgentSpec
from webclient.session.core import Session


@pytest.mark.asyncio
async def test_a_remote_agents_command_runs_in_the_sandbox(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="webclient.workspace.terminal_process")
    with demo_aap_server() as url, outside_tmp() as base:
        workspace = base / "workspace"
        workspace.mkdir()
        (workspace / "README.md").write_text("# Sample project\n")
        settings = Settings.from_env({"WEBCLIENT_SANDBOX": "bwrap", "WEBCLIENT_DATA_DIR": str(base / "data")})
        session = Session(confine(AgentSpec(AgentEntry("agent", [], url=url), workspace), settings), AapAgent)
        assert session.terminals is not None and session.terminals.sandbox.confined
        async with started(session):
            await until(lambda: session.lifecycle.ready)
            assert session.submit_prompt("change", "n1")
            await until(lambda: len(session.thread.pending_permissions) == 2, timeout=30)
            write, run = session.thread.pending_permissions
            session.answers.permission(run.request_id, "allow")
            await asyncio.sleep(0.5)
            session.answers.permission(write.request_id, "allow")
            await until(lambda: session.turns.turn_state == "idle" and "came back" in said(session), timeout=30)
            assert cards(session)["run_command"].status == "completed"
            assert "`run_command`: exit code 0 NOTES.md README.md" in said(session)
        assert "(sandbox bwrap (network on)): ls" in caplog.text
