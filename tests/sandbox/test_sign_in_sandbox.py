"""The sign-in terminal in a sandbox: the agent's own login program (``tests/agents/login_agent.py``) runs on its pty
inside bwrap (a process namespace of its own), with the pty as its controlling terminal, and the agent starts again
once it ended well."""

from __future__ import annotations

import dataclasses

import pytest

from tests.sandbox.attack import outside_tmp
from tests.session.test_terminal_auth import login_session, runs, type_into
from tests.support.waiting import until
from webclient.acp.agent import AcpAgent
from webclient.agents.sandboxing import confine
from webclient.config import Settings
from webclient.session.core import Session


@pytest.mark.asyncio
async def test_a_terminal_sign_in_runs_inside_the_agents_sandbox() -> None:
    with outside_tmp() as base:
        plain, _, _ = login_session(base)
        settings = Settings.from_env({"WEBCLIENT_SANDBOX": "bwrap", "WEBCLIENT_DATA_DIR": str(base / "data")})
        home = base / "home"
        home.mkdir()
        # What it records goes to its workspace, the one folder (with its home) it may write.
        env = {**(plain.spec.env or {}), "HOME": str(home), "LOGIN_TOKEN_DIR": str(plain.spec.cwd / "tokens")}
        env["RECORD_FILE"] = str(plain.spec.cwd / "received.jsonl")
        spec = confine(dataclasses.replace(plain.spec, owner_env=env), settings)
        assert spec.sandbox.confined
        session = Session(spec, AcpAgent)
        tokens = plain.spec.cwd / "tokens"
        session.start()
        try:
            await until(lambda: session.lifecycle.agent_state == "auth-required")
            session.lifecycle.authenticate("login")
            await type_into(session, "4242\r")
            await until(lambda: session.lifecycle.agent_state == "ready", timeout=20)
            (run,) = runs(tokens)
            assert run["tty"] is True and run["controlling_tty"] is True
            assert run["argv"] == ["--agent-flag", "--login"] and run["cwd"] == str(spec.cwd)
            assert run["pid"] < 10  # in a process namespace of its own: bwrap's init, the terminal's taker, it
        finally:
            await session.close()
