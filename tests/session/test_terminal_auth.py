"""A ``terminal`` sign-in, in-process through the real ACP adapter on a real agent (tests/agents/login_agent.py): the
client advertises ``auth.terminal``, runs the agent's own command with the method's args and env on a pty, never
sends ``authenticate`` for it, and starts the agent again when the command ends well."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.acp_schema import validate
from tests.support.servers import AGENTS, live_processes
from tests.support.waiting import received, until
from webclient.acp.agent import AcpAgent
from webclient.session.agent_entry import AgentEntry
from webclient.session.agent_spec import AgentSpec
from webclient.session.core import Session


def login_session(tmp_path: Path, **env: str) -> tuple[Session, Path, Path]:
    """A session on the login agent (started with an extra argument of its own), its record and token folder."""
    record, tokens = tmp_path / "received.jsonl", tmp_path / "tokens"
    workspace = tmp_path / "work"
    workspace.mkdir()
    spec = AgentSpec(
        AgentEntry(
            "agent",
            [sys.executable, str(AGENTS / "login_agent.py"), "--agent-flag"],
            env={"RECORD_FILE": str(record), "LOGIN_TOKEN_DIR": str(tokens), **env},
            start_timeout=20,
        ),
        workspace,
    )
    return Session(spec, AcpAgent), record, tokens


def runs(tokens: Path) -> list[dict[str, Any]]:
    path = tokens / "runs.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def alive(pid: int) -> bool:
    return any(found == pid for found, _, _ in live_processes())


async def type_into(session: Session, text: str) -> None:
    """What a person types at the prompt, once the command asks."""

    def asking() -> bool:
        terminal = session.lifecycle.auth_terminal
        return terminal is not None and terminal.running and b"Enter the code: " in terminal.pty.output

    await until(asking)
    terminal = session.lifecycle.auth_terminal
    assert terminal is not None
    terminal.pty.write(text.encode())


@pytest.mark.asyncio
@pytest.mark.parametrize("id_key", ["id", "methodId"])
async def test_a_terminal_sign_in_runs_the_agents_command_and_the_agent_starts_again(
    tmp_path: Path, id_key: str
) -> None:
    session, record, tokens = login_session(tmp_path, LOGIN_METHOD_ID_KEY=id_key)
    session.start()
    try:
        await until(lambda: session.lifecycle.agent_state == "auth-required")
        (hello,) = [m for m in received(record) if m.get("method") == "initialize"]
        assert hello["params"]["clientCapabilities"]["auth"] == {"terminal": True}
        validate(hello["params"], "InitializeRequest")
        (status_request,) = [m for m in received(record) if m.get("method") == "auth/status"]
        assert status_request["params"] == {}  # the agent advertised agentCapabilities.auth.status
        methods = {m.id: m for m in session.lifecycle.auth_methods}
        assert [(m.id, m.type) for m in session.lifecycle.auth_methods] == [
            ("login", "terminal"),
            ("browser", "agent"),
            ("key", "env_var"),  # kept, as instructions
        ]
        assert methods["login"].in_terminal and not methods["login"].button
        assert session.agent.auth_status is not None and session.agent.auth_status.state == "unauthenticated"

        session.lifecycle.authenticate("login")
        await type_into(session, "4242\r")
        await until(lambda: session.lifecycle.agent_state == "ready", timeout=20)

        (run,) = runs(tokens)
        assert run["argv"] == ["--agent-flag", "--login"]  # the agent's own argv, the method's args appended
        assert run["login_via"] == "terminal"  # the method's env added
        assert run["cwd"] == str(session.spec.cwd)
        assert run["tty"] is True and run["controlling_tty"] is True
        assert session.lifecycle.auth_terminal is None  # closed once it ended well
        sent = [m.get("method") for m in received(record) if "method" in m]
        assert "authenticate" not in sent
        assert sent.count("initialize") == 2 and sent.count("session/new") == 2  # the agent started again
        status = session.agent.auth_status
        assert status is not None and status.state == "authenticated"
        assert [a.label for a in status.accounts] == ["<b>Test</b> account"]
        assert not alive(run["sleeper"])  # what the login left in its group went with it
    finally:
        await session.close()


@pytest.mark.asyncio
async def test_a_failed_terminal_sign_in_says_how_it_ended_and_can_be_tried_again(tmp_path: Path) -> None:
    session, record, tokens = login_session(tmp_path)
    session.start()
    try:
        await until(lambda: session.lifecycle.agent_state == "auth-required")
        session.lifecycle.authenticate("login")
        await type_into(session, "1111\r")
        await until(lambda: session.lifecycle.agent_state == "auth-required" and session.lifecycle.error is not None)
        assert session.lifecycle.error is not None and "exit code 3" in session.lifecycle.error
        terminal = session.lifecycle.auth_terminal
        assert terminal is not None and not terminal.running and b"Wrong code." in terminal.pty.output
        session.lifecycle.authenticate("login")  # again: a fresh terminal replaces the ended one
        await until(lambda: session.lifecycle.auth_terminal is not terminal)
        await type_into(session, "4242\r")
        await until(lambda: session.lifecycle.agent_state == "ready", timeout=20)
        assert len(runs(tokens)) == 2
        assert "authenticate" not in [m.get("method") for m in received(record)]
    finally:
        await session.close()


@pytest.mark.asyncio
async def test_the_sign_in_terminal_is_stopped_with_its_process_group_when_the_session_ends(tmp_path: Path) -> None:
    session, _, tokens = login_session(tmp_path)
    session.start()
    await until(lambda: session.lifecycle.agent_state == "auth-required")
    session.lifecycle.authenticate("login")
    await until(lambda: len(runs(tokens)) == 1)
    (run,) = runs(tokens)
    assert alive(run["pid"]) and alive(run["sleeper"])
    await session.close()
    assert not alive(run["pid"]) and not alive(run["sleeper"])
    assert session.lifecycle.auth_terminal is None


@pytest.mark.asyncio
async def test_closing_the_sign_in_terminal_stops_it_and_asks_for_a_sign_in_again(tmp_path: Path) -> None:
    session, _, tokens = login_session(tmp_path)
    session.start()
    try:
        await until(lambda: session.lifecycle.agent_state == "auth-required")
        session.lifecycle.authenticate("login")
        await until(lambda: len(runs(tokens)) == 1)
        session.lifecycle.dismiss_terminal()
        await until(lambda: session.lifecycle.auth_terminal is None)
        (run,) = runs(tokens)
        await until(lambda: not alive(run["pid"]) and not alive(run["sleeper"]))
        assert session.lifecycle.agent_state == "auth-required"
    finally:
        await session.close()
