"""The demo agent's ``subagent`` scenario: a Task tool call launching a child session, in both forms a client may
understand (ACP's unstable ``subagents``, or claude's ``_meta.claudeCode.parentToolUseId``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from demo_agent import make_sample_workspace
from tests.support.demo_clients import raw_agent, raw_prompt


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return make_sample_workspace(tmp_path)


@pytest.mark.asyncio
async def test_with_the_subagents_capability_the_child_has_its_own_session(workspace: Path) -> None:
    async with raw_agent(workspace, capabilities={"subagents": {}}) as raw:
        assert (await raw_prompt(raw.conn, raw.session_id, "subagent"))["stopReason"] == "end_turn"
    parent = raw.session_id
    (task,) = [u for u in raw.of("tool_call") if u["title"].startswith("Task")]
    announced = raw.of("subagent_update")
    child = announced[0]["sessionId"]
    assert announced[0]["capabilities"] == {"cancel": {}} and announced[0]["state"] == {"state": "running"}
    assert announced[-1]["state"] == {"state": "idle", "stopReason": "end_turn"}
    on_child = [n["update"] for n in raw.notifications if n["sessionId"] == child]
    kinds = {u["sessionUpdate"] for u in on_child}
    assert {"session_message", "agent_message_chunk", "tool_call", "tool_call_update"} <= kinds
    messages = [n for n in raw.notifications if n["update"]["sessionUpdate"] == "session_message"]
    assert [(n["sessionId"], n["update"]["messageId"]) for n in messages] == [
        (parent, task["toolCallId"]),
        (child, task["toolCallId"]),
        (parent, f"{task['toolCallId']}:reply"),
    ]
    assert all("parentToolUseId" not in str(u.get("_meta")) for u in raw.updates)


@pytest.mark.asyncio
async def test_without_it_the_childs_updates_carry_claudes_parent_tool_use_id(workspace: Path) -> None:
    async with raw_agent(workspace) as raw:
        assert (await raw_prompt(raw.conn, raw.session_id, "subagent"))["stopReason"] == "end_turn"
    (task,) = [u for u in raw.of("tool_call") if u["title"].startswith("Task")]
    assert {n["sessionId"] for n in raw.notifications} == {raw.session_id}
    assert not raw.of("subagent_update") and not raw.of("session_message")
    marked = [u for u in raw.updates if (u.get("_meta") or {}).get("claudeCode", {}).get("parentToolUseId")]
    assert {u["_meta"]["claudeCode"]["parentToolUseId"] for u in marked} == {task["toolCallId"]}
    assert {u["sessionUpdate"] for u in marked} >= {"agent_message_chunk", "tool_call", "tool_call_update"}
