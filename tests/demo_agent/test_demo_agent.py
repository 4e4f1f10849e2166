"""The demo agent's scenarios as a client without fs/* or terminal/* sees them, driven as a real subprocess.

The clients are in ``tests/demo_clients.py``; what the agent does with a client's own files and terminals
(and ``_meta`` terminals) is tested in ``tests/demo_agent/test_demo_agent_hands.py``.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import acp
import pytest
from acp.schema import FileEditToolCallContent

from demo_agent import make_sample_workspace
from demo_agent.scenarios import SCENARIOS
from tests.support.demo_clients import TARGET, RecordingClient, prompt, raw_prompt, raw_session, typed_session

V1_KINDS = {"read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"}


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return make_sample_workspace(tmp_path)


def test_make_sample_workspace_is_a_fresh_copy(tmp_path: Path) -> None:
    first, second = make_sample_workspace(tmp_path), make_sample_workspace(tmp_path)
    assert first != second and first.parent == tmp_path
    for rel in ("README.md", "pyproject.toml", TARGET, "tests/test_calculator.py"):
        assert (first / rel).is_file()
    assert "def divide" in (first / TARGET).read_text()


@pytest.mark.asyncio
async def test_help_lists_every_scenario_and_commands_are_announced(workspace: Path) -> None:
    client = RecordingClient()
    async with typed_session(client, workspace) as (conn, session_id):
        assert await prompt(conn, session_id, "/HELP") == "end_turn"
    commands = client.of("available_commands_update")
    assert commands and {c.name for c in commands[0].available_commands} == set(SCENARIOS)
    answer = client.message_text()
    for name in SCENARIOS:
        assert f"`{name}`" in answer


@pytest.mark.asyncio
async def test_markdown_plan_fail_and_tour(workspace: Path) -> None:
    client = RecordingClient(answer="reject-once")
    async with typed_session(client, workspace) as (conn, session_id):
        assert await prompt(conn, session_id, "markdown") == "end_turn"
        kinds = [u.session_update for u in client.updates if u.session_update.startswith("agent_")]
        assert kinds[0] == "agent_thought_chunk" and kinds[-1] == "agent_message_chunk"
        answer = client.message_text()
        for needle in ("## ", "| Scenario |", "```python", "```bash", "](https://", "- "):
            assert needle in answer

        client.updates.clear()
        assert await prompt(conn, session_id, "plan") == "end_turn"
        plans = client.of("plan")
        assert len(plans[0].entries) == 4 and {e.priority for e in plans[0].entries} >= {"high", "medium", "low"}
        assert all(e.status == "completed" for e in plans[-1].entries)

        client.updates.clear()
        assert await prompt(conn, session_id, "fail") == "end_turn"
        failed = [u for u in client.of("tool_call_update") if u.status == "failed"]
        assert failed and failed[0].raw_output["exitCode"] != 0 and failed[0].content

        client.updates.clear()
        assert await prompt(conn, session_id, "what can you do?") == "end_turn"  # unknown prompt -> tour
        assert client.of("agent_thought_chunk") and client.of("plan") and client.permissions
        assert {u.kind for u in client.of("tool_call")} >= {"read", "search", "edit", "execute"}
        assert "help" in client.message_text().splitlines()[-1]


@pytest.mark.asyncio
async def test_tools_scenario_sends_every_kind_and_v2_extras(workspace: Path) -> None:
    async with raw_session(workspace) as (conn, session_id, updates):
        assert await raw_prompt(conn, session_id, "tools") == {"stopReason": "end_turn"}
    announced = {u["toolCallId"] for u in updates if u["sessionUpdate"] == "tool_call"}
    kinds = {u["kind"] for u in updates if u["sessionUpdate"] in ("tool_call", "tool_call_update") and "kind" in u}
    assert kinds >= V1_KINDS | {"_demo_widget"}
    assert any(u.get("status") == "_warming_up" for u in updates)

    chunks = [u for u in updates if u["sessionUpdate"] == "tool_call_content_chunk"]
    assert len(chunks) >= 2 and chunks[0]["content"]["type"] == "content"
    streamed = chunks[0]["toolCallId"]
    after = [u for u in updates[updates.index(chunks[-1]) :] if u.get("toolCallId") == streamed]
    assert any(u["sessionUpdate"] == "tool_call_update" and "content" in u for u in after)  # replaces the chunks

    items = [i for u in updates for i in u.get("content", []) if isinstance(u.get("content"), list)]
    assert any(i["type"] == "_demo_chart" for i in items)
    diffs = [i for i in items if i["type"] == "diff"]
    assert diffs and diffs[0]["oldText"] == (workspace / "tests/test_calculator.py").read_text()

    upserted = {u["toolCallId"] for u in updates if u["sessionUpdate"] == "tool_call_update"} - announced
    assert upserted
    read = next(u for u in updates if u.get("kind") == "read")
    assert read["locations"][0]["path"] == str(workspace / TARGET) and read["locations"][0]["line"] > 1
    search = next(u for u in updates if u.get("kind") == "search")
    done = [u for u in updates if u.get("toolCallId") == search["toolCallId"] and "rawOutput" in u]
    assert search["rawInput"]["pattern"] and done[-1]["rawOutput"]["matches"]
    for path in [loc["path"] for u in updates for loc in u.get("locations") or []]:
        assert Path(path).is_absolute() and Path(path).is_relative_to(workspace)
    assert (workspace / TARGET).read_text() == (make_sample_workspace(workspace.parent) / TARGET).read_text()


@pytest.mark.asyncio
async def test_edit_allowed_writes_the_file_and_asks_again(workspace: Path) -> None:
    before = (workspace / TARGET).read_text()
    client = RecordingClient(answer="allow-once")
    async with typed_session(client, workspace) as (conn, session_id):
        assert await prompt(conn, session_id, "edit") == "end_turn"
        after_first = (workspace / TARGET).read_text()
        assert after_first != before and "cannot divide by zero" in after_first

        tool_call, options = client.permissions[0]
        assert [o.option_id for o in options] == ["allow-once", "allow-always", "reject-once", "reject-always"]
        assert {o.kind for o in options} == {"allow_once", "allow_always", "reject_once", "reject_always"}
        assert tool_call.content
        diff = tool_call.content[0]
        assert isinstance(diff, FileEditToolCallContent)
        assert diff.path == str(workspace / TARGET) and diff.old_text == before
        statuses = [u.status for u in client.updates if getattr(u, "tool_call_id", None) == tool_call.tool_call_id]
        assert statuses[0] == "pending" and statuses[-1] == "completed" and "in_progress" in statuses

        assert await prompt(conn, session_id, "edit") == "end_turn"  # "once" is not remembered
    assert len(client.permissions) == 2
    assert "def power" in (workspace / TARGET).read_text()


@pytest.mark.asyncio
async def test_edit_rejected_leaves_the_file_alone(workspace: Path) -> None:
    before = (workspace / TARGET).read_text()
    client = RecordingClient(answer="reject-once")
    async with typed_session(client, workspace) as (conn, session_id):
        assert await prompt(conn, session_id, "edit") == "end_turn"
    assert (workspace / TARGET).read_text() == before
    assert client.of("tool_call_update")[-1].status == "failed"
    assert "not" in client.message_text()


@pytest.mark.asyncio
@pytest.mark.parametrize(("answer", "changes"), [("allow-always", True), ("reject-always", False)])
async def test_always_answers_are_remembered(workspace: Path, answer: str, changes: bool) -> None:
    before = (workspace / TARGET).read_text()
    client = RecordingClient(answer=answer)
    async with typed_session(client, workspace) as (conn, session_id):
        assert await prompt(conn, session_id, "edit") == "end_turn"
        assert await prompt(conn, session_id, "edit") == "end_turn"
    assert len(client.permissions) == 1
    assert ((workspace / TARGET).read_text() != before) is changes
    assert "didn't ask again" in client.message_text()


@pytest.mark.alone  # times or measures the server: one at a time
@pytest.mark.slow  # waits for the demo's slow scenario, seconds
@pytest.mark.asyncio
async def test_cancel_during_slow_stops_promptly(workspace: Path) -> None:
    client = RecordingClient()
    async with typed_session(client, workspace, speed="1") as (conn, session_id):
        task = asyncio.create_task(conn.prompt(session_id=session_id, prompt=[acp.text_block("slow")]))
        while not client.of("agent_message_chunk"):
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.2)
        started = time.monotonic()
        await conn.cancel(session_id=session_id)
        response = await asyncio.wait_for(task, 2)
        assert response.stop_reason == "cancelled"
        assert time.monotonic() - started < 1.0
        streamed = len(client.of("agent_message_chunk"))
        assert streamed < 60  # far from the whole answer
        # The session is still usable afterwards.
        assert await prompt(conn, session_id, "help") == "end_turn"


@pytest.mark.asyncio
async def test_cancel_while_permission_pending(workspace: Path) -> None:
    before = (workspace / TARGET).read_text()
    client = RecordingClient(answer=None, cancel_on_permission=True)
    async with typed_session(client, workspace) as (conn, session_id):
        assert await prompt(conn, session_id, "edit") == "cancelled"
    assert (workspace / TARGET).read_text() == before
    assert len(client.permissions) == 1


@pytest.mark.asyncio
async def test_cancelled_outcome_alone_ends_turn_and_marks_tool_cancelled(workspace: Path) -> None:
    before = (workspace / TARGET).read_text()
    async with raw_session(workspace, answer=lambda _params: {"outcome": {"outcome": "cancelled"}}) as (
        conn,
        session_id,
        updates,
    ):
        assert await raw_prompt(conn, session_id, "/edit") == {"stopReason": "cancelled"}
    assert (workspace / TARGET).read_text() == before
    edit = next(u for u in updates if u["sessionUpdate"] == "tool_call")
    last = [u for u in updates if u.get("toolCallId") == edit["toolCallId"]][-1]
    assert last["status"] == "cancelled"
