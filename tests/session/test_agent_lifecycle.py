"""The agent's life in a session (start, sign-in, time-outs, Retry), through the real ACP adapter and real
test agents: what the agent receives, what the session and its thread show."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.sessions import acp, agent_session, started
from tests.support.waiting import received, until
from webclient.viewmodel.entries import MessageEntry, Notice
from webclient.viewmodel.thread import Thread


def notices(thread: Thread) -> list[Notice]:
    return [entry for entry in thread if isinstance(entry, Notice)]


def replies(thread: Thread) -> list[str]:
    return [entry.text for entry in thread if isinstance(entry, MessageEntry) and entry.kind == "agent-message"]


@pytest.mark.asyncio
async def test_a_refused_sign_in_asks_again_and_an_accepted_one_opens_the_session(tmp_path: Path) -> None:
    session, record = agent_session(tmp_path, "faulty_agent.py", FAULT="auth")
    async with started(session):
        await until(lambda: session.lifecycle.agent_state == "auth-required")
        assert (
            session.lifecycle.auth_reason is not None and "Gemini API key is missing" in session.lifecycle.auth_reason
        )
        assert [m.id for m in session.lifecycle.auth_methods] == ["oauth", "api-key", "ok", "env", "term", "qr"]
        assert session.turns.turn_state == "auth-required" and session.lifecycle.start_step is None
        session.lifecycle.authenticate(
            "qr"
        )  # a type of the agent's own: the page shows its instructions, nothing is called
        assert session.lifecycle.agent_state == "auth-required"
        session.lifecycle.authenticate("api-key")
        assert session.lifecycle.agent_state == "signing-in" and session.lifecycle.authenticating is not None
        await until(
            lambda: session.lifecycle.agent_state == "auth-required" and session.lifecycle.authenticating is None
        )
        assert session.lifecycle.error is not None and session.lifecycle.error.startswith(
            "Signing in with “Use Gemini API key” failed"
        )
        assert "GEMINI_API_KEY is not set" in session.lifecycle.error
        session.lifecycle.authenticate("ok")
        await until(lambda: session.lifecycle.ready)
        assert session.lifecycle.agent_info["name"] == "faulty-agent"
    methods = [m["method"] for m in received(record) if "method" in m]
    assert methods == ["initialize", "session/new", "authenticate", "authenticate", "session/new"]
    assert [m["params"]["methodId"] for m in received(record) if m.get("method") == "authenticate"] == ["api-key", "ok"]


@pytest.mark.asyncio
async def test_stop_gives_up_a_sign_in_that_never_ends(tmp_path: Path) -> None:
    session, _ = agent_session(tmp_path, "faulty_agent.py", FAULT="auth")
    async with started(session):
        await until(lambda: session.lifecycle.agent_state == "auth-required")
        session.lifecycle.authenticate("oauth")  # the agent opened a browser on the server: no answer comes
        await until(lambda: session.lifecycle.authenticating is not None)
        session.cancel()
        assert (session.lifecycle.agent_state, session.lifecycle.error, session.lifecycle.authenticating) == (
            "auth-required",
            "Sign-in cancelled.",
            None,
        )
        session.lifecycle.authenticate("ok")
        await until(lambda: session.lifecycle.ready)


@pytest.mark.asyncio
async def test_a_start_that_times_out_names_the_step_the_stray_answer_and_the_stderr(tmp_path: Path) -> None:
    session, _ = agent_session(tmp_path, "faulty_agent.py", start_timeout=1, FAULT="wrong-id")
    async with started(session):
        await until(lambda: session.lifecycle.agent_state == "failed")
        expected = "The agent did not answer initialize within 1 s (1 answer came with an id we never sent)"
        assert session.lifecycle.error == expected
        notice = notices(session.thread)[-1]
        assert (notice.level, notice.title) == ("error", expected)
        assert "faulty agent: starting with faults ['wrong-id']" in notice.detail
        assert session.lifecycle.can_retry and session.turns.turn_state == "ended"


@pytest.mark.asyncio
async def test_retry_starts_a_fresh_agent_in_the_same_session_and_keeps_its_protocol_log(tmp_path: Path) -> None:
    once = tmp_path / "fault-once"
    session, record = agent_session(
        tmp_path, "faulty_agent.py", start_timeout=1, FAULT="no-session", FAULT_ONCE_FILE=str(once)
    )
    async with started(session):
        await until(lambda: session.lifecycle.agent_state == "failed")
        assert session.lifecycle.error == "The agent did not answer session/new within 1 s"
        session.lifecycle.retry()
        await until(lambda: session.lifecycle.ready)
        assert session.lifecycle.error is None
        assert [n.title for n in notices(session.thread)][-1] == "Restarting the agent"
        assert session.submit_prompt("say hello again", "n1")
        await until(lambda: replies(session.thread) == ["hello again"])
    methods = [m["method"] for m in received(record) if "method" in m]
    assert methods == ["initialize", "session/new", "initialize", "session/new", "session/prompt"]
    sent = [line.text for line in acp(session).protocol_log if line.direction == "out"]
    assert sum('"method":"initialize"' in text.replace(" ", "") for text in sent) == 2
