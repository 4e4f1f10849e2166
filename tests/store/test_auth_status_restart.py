"""What the agent said of its sign-in (``auth/status``, ``auth/status_update``) is rebuilt from the journal after a
restart, through the same code as live: the header says it again."""

from __future__ import annotations

import asyncio
import re
import signal
import sys
from pathlib import Path

import pytest

from tests.support.restarts import journalled, ready_page, session_page, stop, until
from tests.support.servers import ServerFactory

pytestmark = pytest.mark.process  # each test starts the server as a process: its subject

AGENT = f"{sys.executable} {Path(__file__).resolve().parents[1] / 'agents' / 'login_agent.py'}"
STATUS = re.compile(r'<span class="auth-status[^"]*" data-role="auth-status" data-state="(\w+)"')


def test_the_sign_in_state_is_shown_again_after_a_restart(start_server: ServerFactory, tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    tokens.mkdir()
    (tokens / "token").write_text("signed-in")  # signed in before: the session opens at once
    env = {"WEBCLIENT_DATA_DIR": str(tmp_path / "data"), "LOGIN_TOKEN_DIR": str(tokens)}
    first = start_server(process=True, agent=AGENT, workspace=tmp_path / "project", **env)

    async def open_session() -> str:
        async with ready_page(first) as (socket, _, session_id):
            await until(socket, 'data-agent-state="ready"')
        return session_id

    session_id = asyncio.run(open_session())
    page = session_page(first, session_id)
    assert STATUS.findall(page) == ["authenticated"] and "&lt;b&gt;Test&lt;/b&gt; account" in page
    journalled(tmp_path / "data", "Test</b> account")  # what the agent said is stored (in batches) before the kill
    stop(first, signal.SIGKILL)

    second = start_server(process=True, agent=AGENT, workspace=tmp_path / "project", **env)
    page = session_page(second, session_id)
    assert 'data-agent-state="stopped"' in page
    assert STATUS.findall(page) == ["authenticated"] and "&lt;b&gt;Test&lt;/b&gt; account" in page
