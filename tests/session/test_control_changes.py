"""Changes of mode, model and settings through the real ACP adapter and a real test agent: what the agent
receives, what the controls show, and the notice when the agent refuses."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.sessions import agent_session, started
from tests.support.waiting import received, until
from webclient.viewmodel.entries import Notice


@pytest.mark.asyncio
async def test_a_refused_mode_shows_a_notice_and_the_mode_stays(tmp_path: Path) -> None:
    session, record = agent_session(tmp_path, "faulty_agent.py", FAULT="models")
    async with started(session):
        await until(lambda: session.lifecycle.ready)
        assert session.controls.current_mode == "default"
        session.set_mode("default")  # already the mode: nothing to ask
        session.set_mode("no-such-mode")
        session.set_mode("yolo")
        await until(lambda: isinstance(session.thread.last, Notice))
        notice = session.thread.last
        assert isinstance(notice, Notice) and notice.title == "The agent did not change the mode"
        assert "untrusted folder" in notice.detail and notice.detail.endswith("(code -32603)")
        assert session.controls.current_mode == "default"
    asked = [m["params"] for m in received(record) if m.get("method") == "session/set_mode"]
    assert asked == [{"sessionId": "faulty-1", "modeId": "yolo"}]


@pytest.mark.asyncio
async def test_an_accepted_model_shows_and_a_refused_one_leaves_a_notice(tmp_path: Path) -> None:
    session, record = agent_session(tmp_path, "faulty_agent.py", FAULT="models")
    async with started(session):
        await until(lambda: session.lifecycle.ready)
        session.set_model("gemini-2.5-flash")
        await until(lambda: session.controls.current_model == "gemini-2.5-flash")
        session.set_model("refuse-me")
        await until(lambda: isinstance(session.thread.last, Notice))
        notice = session.thread.last
        assert isinstance(notice, Notice) and notice.title == "The agent did not change the model"
        assert "Model refuse-me is not available" in notice.detail
        assert session.controls.current_model == "gemini-2.5-flash"
    asked = [m["params"]["modelId"] for m in received(record) if m.get("method") == "session/set_model"]
    assert asked == ["gemini-2.5-flash", "refuse-me"]


@pytest.mark.asyncio
async def test_a_refused_setting_shows_a_notice_named_after_the_setting(tmp_path: Path) -> None:
    session, record = agent_session(tmp_path, "faulty_agent.py", FAULT="settings")
    async with started(session):
        await until(lambda: session.lifecycle.ready)
        session.set_setting("effort", "no-such-choice")
        session.set_setting("effort", "high")
        await until(lambda: isinstance(session.thread.last, Notice))
        notice = session.thread.last
        assert isinstance(notice, Notice) and notice.title == "The agent did not change “Effort”"
        assert "effort is locked by policy" in notice.detail
    asked = [m["params"] for m in received(record) if m.get("method") == "session/set_config_option"]
    assert asked == [{"sessionId": "faulty-1", "configId": "effort", "value": "high"}]
