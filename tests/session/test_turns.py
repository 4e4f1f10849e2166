"""Turns through the real ACP adapter and real test agents: what the agent receives for a prompt, and what the
thread shows of it and of the agent's answer."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.acp_schema import validate
from tests.support.sessions import agent_session, started
from tests.support.waiting import received, until
from webclient.viewmodel.content import ImageBlock, ResourceLink
from webclient.viewmodel.entries import MessageEntry, Notice

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"


@pytest.mark.asyncio
async def test_a_prompt_with_an_upload_and_mentions_reaches_the_agent_as_acp_blocks(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("# notes\n")
    session, record = agent_session(tmp_path, "scripted_agent.py")
    async with started(session):
        await until(lambda: session.lifecycle.ready)
        upload = session.uploads.add("shot.png", "image/png", PNG, frozenset({"image"}))
        assert session.submit_prompt(" check this ", "n1", uploads=[upload.id], mentions=["notes.md", "../outside.md"])
        await until(lambda: session.turns.turn_state == "idle")
    prompt = next(m["params"] for m in received(record) if m.get("method") == "session/prompt")
    validate(prompt, "PromptRequest")
    assert [block["type"] for block in prompt["prompt"]] == ["text", "image", "resource_link"]
    assert prompt["prompt"][0] == {"type": "text", "text": "check this"}
    assert prompt["prompt"][2] == {"type": "resource_link", "uri": (tmp_path / "notes.md").as_uri(), "name": "notes.md"}
    shown = session.thread.entries[0]
    assert isinstance(shown, MessageEntry) and shown.kind == "user-message" and shown.text == "check this"
    assert [type(block) for block in shown.attachments] == [ImageBlock, ResourceLink]


@pytest.mark.asyncio
async def test_a_prompt_sent_while_the_agent_starts_waits_and_goes_once_it_is_ready(tmp_path: Path) -> None:
    session, record = agent_session(tmp_path, "scripted_agent.py")
    async with started(session):
        assert session.turns.turn_state == "running" and not session.lifecycle.ready
        assert session.submit_prompt("early", "n1")
        assert [item.text for item in session.turns.queue] == ["early"]
        await until(lambda: session.lifecycle.ready and session.turns.turn_state == "idle" and not session.turns.queue)
    assert [m["params"]["prompt"] for m in received(record) if m.get("method") == "session/prompt"] == [
        [{"type": "text", "text": "early"}]
    ]


@pytest.mark.asyncio
async def test_the_agents_error_for_a_prompt_shows_as_a_notice_and_the_turn_ends(tmp_path: Path) -> None:
    session, _ = agent_session(tmp_path, "faulty_agent.py")
    async with started(session):
        await until(lambda: session.lifecycle.ready)
        assert session.submit_prompt("fail", "n1")
        await until(lambda: session.turns.turn_state == "idle" and not session.turns.turn_running)
        notice = session.thread.entries[-1]
        assert isinstance(notice, Notice)
        assert (notice.level, notice.title) == ("error", "The agent reported an error")
        assert "OPENAI_API_KEY is not set" in notice.detail and notice.detail.endswith("(code -32603)")
