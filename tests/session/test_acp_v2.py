"""ACP v2 end to end at the connection level, against agents written with the official TypeScript SDK 2.4.0
(``tests/agents/ts``): the version negotiated, the v2 requests, the prompt lifecycle. What the agent received is in
its record; what the user sees is in the thread."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

import pytest

from tests.support.acp_schema_v2 import validate_traffic
from tests.support.sessions import acp, started
from tests.support.ts_agents import got, ts_session
from tests.support.waiting import until
from webclient.acp.v2_turn import BACKGROUND
from webclient.session.core import Session
from webclient.viewmodel.entries import MessageEntry, Notice, ToolCall
from webclient.viewmodel.thread import Thread


def notices(thread: Thread) -> list[tuple[str, str, str]]:
    return [(entry.level, entry.title, entry.detail) for entry in thread if isinstance(entry, Notice)]


def messages(thread: Thread, kind: str) -> list[str]:
    return [entry.text for entry in thread if isinstance(entry, MessageEntry) and entry.kind == kind]


def methods(record: Path) -> list[tuple[int, str]]:
    return [(message["version"], message["method"]) for message in got(record)]


async def turn(session: Session, text: str) -> None:
    assert session.submit_prompt(text, f"nonce-{text}")
    await until(lambda: session.turns.turn_running, timeout=30)
    await until(lambda: not session.turns.turn_running, timeout=30)


@pytest.mark.asyncio
async def test_a_v2_initialize_to_a_dual_agent_speaks_v2(tmp_path: Path) -> None:
    session, record = ts_session(tmp_path, "dual_agent.mjs", 2)
    async with started(session):
        await until(lambda: session.lifecycle.ready, timeout=30)
        assert acp(session).dialect.version == 2
        assert session.lifecycle.agent_info["name"] == "ts-dual-agent"
        assert session.lifecycle.prompt_capabilities == {"image", "embeddedContext"}
        await turn(session, "hello")
        assert messages(session.thread, "user-message") == ["hello"]  # the agent's echo is not shown again
        assert messages(session.thread, "agent-message")[-1].startswith("Hello")
    sent = got(record)
    initialize = sent[0]["params"]
    assert initialize["protocolVersion"] == 2 and initialize["info"]["name"] == "acp-webclient"
    assert set(initialize["capabilities"]) <= {"auth", "elicitation", "_meta"}  # v2 has no fs nor terminal
    assert initialize["capabilities"]["elicitation"] == {"form": {}, "url": {}}
    assert sent[1]["params"] == {"cwd": str(tmp_path / "workspace"), "mcpServers": []}
    assert methods(record) == [(2, "initialize"), (2, "session/new"), (2, "session/prompt"), (2, "session/close")]


@pytest.mark.asyncio
async def test_a_v1_initialize_to_a_dual_agent_speaks_v1_with_files_and_terminals(tmp_path: Path) -> None:
    session, record = ts_session(tmp_path, "dual_agent.mjs", 1)
    async with started(session):
        await until(lambda: session.lifecycle.ready, timeout=30)
        assert acp(session).dialect.version == 1
        await turn(session, "hello")
        assert messages(session.thread, "agent-message") == ["Hello from ACP v1"]
    initialize = got(record)[0]["params"]
    assert initialize["protocolVersion"] == 1
    assert initialize["clientCapabilities"]["fs"] == {"readTextFile": True, "writeTextFile": True}
    assert methods(record) == [(1, "initialize"), (1, "session/new"), (1, "session/prompt")]


@pytest.mark.asyncio
async def test_a_v1_agent_asked_v2_is_started_again_with_a_v1_initialize(tmp_path: Path) -> None:
    session, record = ts_session(tmp_path, "v1_only_agent.mjs", 2)
    async with started(session):
        await until(lambda: session.lifecycle.ready, timeout=30)
        assert acp(session).dialect.version == 1
        await turn(session, "hello")
        assert messages(session.thread, "agent-message") == ["Hello from ACP v1"]
    first, second = got(record)[:2]
    # The router downgraded the v2 request: the v1 agent saw neither files nor terminals offered...
    assert first["params"]["clientCapabilities"]["fs"] == {"readTextFile": False, "writeTextFile": False}
    assert first["params"]["clientCapabilities"]["terminal"] is False
    # ... so it got a v1 initialize of its own, from a fresh process.
    assert second["params"]["protocolVersion"] == 1 and second["params"]["clientCapabilities"]["terminal"] is True
    assert methods(record) == [(1, "initialize"), (1, "initialize"), (1, "session/new"), (1, "session/prompt")]


@pytest.mark.asyncio
async def test_a_v1_agent_asked_v2_keeps_its_process_when_the_session_serves_no_files_nor_terminals(
    tmp_path: Path,
) -> None:
    session, record = ts_session(tmp_path, "v1_only_agent.mjs", 2)
    spec = session.spec
    session, _ = (
        Session(replace(spec, entry=replace(spec.entry, file_access="none", terminals=False)), type(session.agent)),
        None,
    )
    async with started(session):
        await until(lambda: session.lifecycle.ready, timeout=30)
        assert acp(session).dialect.version == 1
    assert methods(record) == [(1, "initialize"), (1, "session/new")]


@pytest.mark.asyncio
async def test_a_v2_only_agent_asked_v1_says_which_versions_it_speaks_and_what_to_set(tmp_path: Path) -> None:
    session, record = ts_session(tmp_path, "v2_only_agent.mjs", 1)
    async with started(session):
        await until(lambda: session.lifecycle.agent_state == "failed", timeout=30)
        assert session.lifecycle.error is not None
        assert "The agent speaks only ACP version 2; this client asked for version 1" in session.lifecycle.error
        assert "WEBCLIENT_ACP_PROTOCOL=2" in session.lifecycle.error and "acp_protocol = 2" in session.lifecycle.error
    assert methods(record) == []  # the router refused it before the agent saw it


@pytest.mark.asyncio
async def test_a_v2_turn_ends_with_its_idle_state_and_shows_each_stop(tmp_path: Path) -> None:
    session, record = ts_session(tmp_path, "v2_only_agent.mjs", 2)
    async with started(session):
        await until(lambda: session.lifecycle.ready, timeout=30)
        await turn(session, "error")
        assert notices(session.thread)[-1] == (
            "error",
            "The agent reported an error",
            "The model is overloaded: try again in a minute (code -32603)",
        )
        await turn(session, "refuse")  # refused before it was taken in: the prompt's error answer ends the turn
        assert notices(session.thread)[-1][:2] == ("error", "The agent reported an error")
        assert "This prompt is refused" in notices(session.thread)[-1][2]
        assert session.submit_prompt("slow", "n-slow")
        await until(lambda: "Working slowly" in messages(session.thread, "agent-message"), timeout=30)
        assert session.turns.turn_running  # the prompt was answered long ago: the turn runs until its idle state
        session.cancel()
        await until(lambda: not session.turns.turn_running, timeout=30)
        assert notices(session.thread)[-1][:2] == ("info", "Stopped")
        assert session.submit_prompt("queued", "n-queued")  # never taken in: Stop ends it with -32800
        await until(lambda: session.turns.turn_running, timeout=30)
        await asyncio.sleep(0.2)
        session.cancel()
        await until(lambda: not session.turns.turn_running, timeout=30)
        assert notices(session.thread)[-1][:2] == ("info", "Stopped")
        await turn(session, "child")  # a subagent's idle state does not end the turn
        assert messages(session.thread, "agent-message")[-1] == "After the child"
        await turn(session, "hello")  # the next turn runs as usual
        assert messages(session.thread, "agent-message")[-1].startswith("Hello")
    assert (2, "session/cancel") in methods(record)
    prompts = [m["params"]["prompt"] for m in got(record) if m["method"] == "session/prompt"]
    assert prompts[0] == [{"type": "text", "text": "error"}]


@pytest.mark.asyncio
async def test_a_v2_permission_and_background_work(tmp_path: Path) -> None:
    session, record = ts_session(tmp_path, "v2_only_agent.mjs", 2)
    async with started(session):
        await until(lambda: session.lifecycle.ready, timeout=30)
        assert session.submit_prompt("permission", "n1")
        await until(lambda: bool(session.thread.pending_permissions), timeout=30)
        assert acp(session).turns.state == "requires_action"
        asked = session.thread.pending_permissions[0]
        session.answers.permission(asked.request_id, "yes")
        await until(lambda: not session.turns.turn_running, timeout=30)
        assert messages(session.thread, "agent-message")[-1] == "Permission answer: yes"
        assert acp(session).turns.state == "idle"
        await turn(session, "background")
        assert notices(session.thread)[-1] == ("info", BACKGROUND, "“Watch the build”")
        call = session.thread.tool_call("call-watch")
        assert isinstance(call, ToolCall) and call.status == "in_progress"
    answered = [m for m in got(record) if m["method"] == "session/prompt"]
    assert len(answered) == 2


@pytest.mark.asyncio
async def test_v2_sessions_are_listed_resumed_with_their_replay_closed_and_deleted(tmp_path: Path) -> None:
    session, record = ts_session(tmp_path, "dual_agent.mjs", 2)
    async with started(session):
        await until(lambda: session.lifecycle.ready, timeout=30)
        await turn(session, "hello")
        listed = await acp(session).list_sessions()  # session/list is part of the v2 baseline
        assert listed is not None and [item.title for item in listed] == ["hello"]
        agent_session_id = listed[0].id
        await session.end()
        assert session.lifecycle.can_resume
        session.resume()  # v2 has no session/load: session/resume replays it, matched with what the page shows
        await until(lambda: session.lifecycle.ready, timeout=30)
        assert notices(session.thread)[-1] == (
            "info",
            "The agent resumed its session",
            "With session/resume: what it replayed matches the 1 prompt shown.",
        )
        assert messages(session.thread, "user-message") == ["hello"]  # the replay is not shown twice
        await session.delete()
    sent = got(record)
    resumed = [m["params"] for m in sent if m["method"] == "session/resume"]
    assert resumed == [
        {
            "sessionId": agent_session_id,
            "cwd": str(tmp_path / "workspace"),
            "mcpServers": [],
            "replayFrom": {"type": "start"},
        }
    ]
    ended = [(m["method"], m["params"]) for m in sent if m["method"] in ("session/close", "session/delete")]
    assert ended == [  # ended, then deleted (and closed) after the resume
        ("session/close", {"sessionId": agent_session_id}),
        ("session/delete", {"sessionId": agent_session_id}),
        ("session/close", {"sessionId": agent_session_id}),
    ]


@pytest.mark.asyncio
async def test_an_agents_v2_session_is_continued_here_from_its_replay(tmp_path: Path) -> None:
    first, record = ts_session(tmp_path, "dual_agent.mjs", 2)
    async with started(first):
        await until(lambda: first.lifecycle.ready, timeout=30)
        await turn(first, "plan")
        listed = await acp(first).list_sessions()
        assert listed is not None
    second, _ = ts_session(tmp_path, "dual_agent.mjs", 2)
    second.start(continuing=listed[0].id)
    try:
        await until(lambda: second.lifecycle.ready, timeout=30)
        assert notices(second.thread)[-1] == ("info", "The agent resumed its session", "With session/resume.")
    finally:
        await second.close()
    assert [m["params"].get("replayFrom") for m in got(record) if m["method"] == "session/resume"] == [
        {"type": "start"}
    ]


@pytest.mark.asyncio
async def test_a_v2_sign_in_is_auth_login_and_a_sign_out_auth_logout(tmp_path: Path) -> None:
    session, record = ts_session(tmp_path, "v2_only_agent.mjs", 2, TS_AGENT_AUTH="1")
    async with started(session):
        await until(lambda: session.lifecycle.agent_state == "auth-required", timeout=30)
        assert [(m.id, m.name, m.type) for m in session.lifecycle.auth_methods] == [
            ("token", "Sign in with a token", "agent")
        ]
        session.lifecycle.authenticate("token")
        await until(lambda: session.lifecycle.ready, timeout=30)
        assert acp(session).can_sign_out  # a non-empty authMethods offers auth/logout
        session.sign_out()
        await until(lambda: ("info", "Signed out of the agent") in [n[:2] for n in notices(session.thread)], timeout=30)
    assert [m for m in methods(record) if m[1] != "session/close"] == [
        (2, "initialize"),
        (2, "session/new"),
        (2, "auth/login"),
        (2, "session/new"),
        (2, "auth/logout"),
    ]
    assert [m["params"] for m in got(record) if m["method"] == "auth/login"] == [{"methodId": "token"}]


@pytest.mark.asyncio
async def test_every_message_of_a_v2_session_both_ways_is_valid_v2(tmp_path: Path) -> None:
    session, _ = ts_session(tmp_path, "dual_agent.mjs", 2, TS_AGENT_AUTH="1")
    async with started(session):
        await until(lambda: session.lifecycle.agent_state == "auth-required", timeout=30)
        session.lifecycle.authenticate("token")
        await until(lambda: session.lifecycle.ready, timeout=30)
        for text in ("everything", "background", "error", "refuse"):
            await turn(session, text)
        assert session.submit_prompt("permission", "n-permission")
        await until(lambda: bool(session.thread.pending_permissions), timeout=30)
        session.answers.permission(session.thread.pending_permissions[0].request_id, "no")
        await until(lambda: not session.turns.turn_running, timeout=30)
        await acp(session).set_setting("mode", "code")  # (the controls read v2's configId once v2shapes is in)
        assert await acp(session).list_sessions()
        session.sign_out()
        await until(lambda: any(line.method == "auth/logout" for line in acp(session).protocol_log), timeout=30)
        lines = [(line.direction, line.text) for line in acp(session).protocol_log]
    updates = {line.update for line in acp(session).protocol_log if line.update}
    assert updates >= {
        "user_message",
        "agent_message_chunk",
        "agent_message",
        "agent_thought",
        "state_update",
        "tool_call_update",
        "tool_call_content_chunk",
        "plan_update",
        "terminal_update",
        "terminal_output_chunk",
        "available_commands_update",
        "config_option_update",
    }
    assert validate_traffic(lines) > 40
