"""Resume after a restart: the agent starts again and takes its session up with ``session/resume`` when it offers
it, else ``session/load`` (whose replay of the conversation is not shown twice), else a new session, said."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from pathlib import Path

import pytest

from tests.support.restarts import drive, session_page, stop, thread_html
from tests.support.servers import ServerFactory

AGENT = f"{sys.executable} {Path(__file__).resolve().parents[1] / 'agents' / 'resumable_agent.py'}"


@pytest.mark.parametrize("mode", ["resume", "load", "none"])
def test_resume_takes_the_agents_session_up_again_or_says_it_cannot(
    start_server: ServerFactory, tmp_path: Path, mode: str
) -> None:
    env = {
        "RESUME_MODE": mode,
        "SESSIONS_FILE": str(tmp_path / "agent-sessions.json"),
        "WEBCLIENT_DATA_DIR": str(tmp_path / "data"),
    }
    project = tmp_path / "project"  # the same folder for both servers: the one the session was in
    first = start_server(agent=AGENT, workspace=project, **env)
    session_id = asyncio.run(drive(first, ["first prompt"]))
    assert "I remember 0 earlier prompts. You said: first prompt" in session_page(first, session_id)
    stop(first, signal.SIGTERM)

    second = start_server(agent=AGENT, workspace=project, **env)
    asyncio.run(drive(second, ["second prompt"], session_id=session_id))
    page = session_page(second, session_id)
    thread = thread_html(page)
    sent = [message.get("method") for message in second.received()]
    if mode == "none":
        assert "session/new" in sent and "session/load" not in sent and "session/resume" not in sent
        assert "The agent starts a new session, without the earlier conversation" in thread
        assert "I remember 0 earlier prompts. You said: second prompt" in thread
    else:
        assert f"session/{mode}" in sent and "session/new" not in sent
        reattached = next(m for m in second.received() if m.get("method") == f"session/{mode}")
        assert reattached["params"]["sessionId"] == "agent-session-1"
        assert "The agent resumed its session" in thread
        if mode == "load":  # what it replayed is matched against what is shown
            assert "what it replayed matches the 1 prompt shown" in thread
        assert "I remember 1 earlier prompts. You said: second prompt" in thread
    # What was shown before the restart is shown once, whatever the agent replayed.
    assert thread.count("You said: first prompt") == 1
    assert 'data-turn-state="idle"' in page
    stop(second, signal.SIGTERM)

    # And the resumed session is itself rebuilt the same after another restart.
    third = start_server(agent=AGENT, workspace=project, **env)
    again = thread_html(session_page(third, session_id))
    assert again.count("You said: first prompt") == 1 and again.count("You said: second prompt") == 1
    assert json.loads((tmp_path / "agent-sessions.json").read_text())  # the agent kept its own record


def test_a_loaded_history_that_differs_from_the_page_is_said(start_server: ServerFactory, tmp_path: Path) -> None:
    agent_sessions = tmp_path / "agent-sessions.json"
    env = {"RESUME_MODE": "load", "SESSIONS_FILE": str(agent_sessions), "WEBCLIENT_DATA_DIR": str(tmp_path / "data")}
    project = tmp_path / "project"  # the same folder for both servers: the one the session was in
    first = start_server(agent=AGENT, workspace=project, **env)
    session_id = asyncio.run(drive(first, ["first prompt"]))
    stop(first, signal.SIGTERM)
    remembered = json.loads(agent_sessions.read_text())
    remembered["agent-session-1"]["turns"].append(["a prompt typed elsewhere", "ok"])
    agent_sessions.write_text(json.dumps(remembered))

    second = start_server(agent=AGENT, workspace=project, **env)
    asyncio.run(drive(second, ["second prompt"], session_id=session_id))
    thread = thread_html(session_page(second, session_id))
    assert "remembers it differently" in thread and "It replayed 2 prompts; this page shows 1." in thread
    assert "a prompt typed elsewhere" not in thread
