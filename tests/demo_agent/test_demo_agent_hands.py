"""The demo agent's hands: the client's ``fs/*`` and ``terminal/*`` and ``_meta`` terminals, used only when offered.

Reads and writes go through the client when it offers ``fs/*`` (so an editor's unsaved text is what the agent
sees), the sample's tests run in a client terminal when it offers ``terminal/*``, and ``_meta`` terminals stream
in order; a client that offers nothing gets the same scenarios done by the agent itself, or as text. The clients
are in ``tests/demo_clients.py``.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import cast

import acp
import pytest
from acp.schema import FileEditToolCallContent, TerminalToolCallContent

from demo_agent import make_sample_workspace
from demo_agent.capabilities import ClientCapabilities as DemoCapabilities
from tests.support.demo_clients import TARGET, RecordingClient, prompt, raw_prompt, raw_session, text, typed_session


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return make_sample_workspace(tmp_path)


def completed_text(client: RecordingClient, tool_call_id: str) -> str:
    last = [u for u in client.of_tool(tool_call_id) if u.content][-1]
    return "".join(text(item.content) for item in last.content if getattr(item, "type", "") == "content")


def terminal_embeds(client: RecordingClient, tool_call_id: str) -> list[str]:
    return [
        item.terminal_id
        for u in client.of_tool(tool_call_id)
        for item in u.content or []
        if isinstance(item, TerminalToolCallContent)
    ]


def test_client_capabilities_are_off_unless_exactly_true() -> None:
    assert DemoCapabilities.from_wire(None) == DemoCapabilities()
    assert DemoCapabilities.from_wire({"fs": "yes", "terminal": 1, "_meta": []}) == DemoCapabilities()
    full = {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True, "_meta": {"terminal_output": True}}
    assert DemoCapabilities.from_wire(full) == DemoCapabilities(True, True, True, True)


@pytest.mark.asyncio
async def test_reads_go_through_the_client_when_it_offers_them(workspace: Path) -> None:
    path = str(workspace / TARGET)
    disk = (workspace / TARGET).read_text()
    # An editor's unsaved change: only a read through the client can see it.
    todo = "    # TODO: give a friendlier"
    unsaved = disk.replace(todo, "    # unsaved change in the editor\n" + todo)
    client = RecordingClient(answer="reject-once", fs=True, unsaved={path: unsaved})
    async with typed_session(client, workspace) as (conn, session_id):
        assert await prompt(conn, session_id, "tour") == "end_turn"
    read = next(u for u in client.of("tool_call") if u.kind == "read")
    line = read.locations[0].line
    assert (path, None, None) in client.reads and (path, line, 12) in client.reads
    assert "unsaved change in the editor" in completed_text(client, read.tool_call_id)
    tool_call, _options = client.permissions[0]
    assert tool_call.content and cast(FileEditToolCallContent, tool_call.content[0]).old_text == unsaved
    assert client.writes == [] and (workspace / TARGET).read_text() == disk  # rejected


@pytest.mark.asyncio
async def test_nothing_goes_through_the_client_when_it_offers_nothing(workspace: Path) -> None:
    client = RecordingClient(answer="allow-once")
    async with typed_session(client, workspace) as (conn, session_id):
        assert await prompt(conn, session_id, "tour") == "end_turn"
        assert await prompt(conn, session_id, "run") == "end_turn"
    assert client.reads == [] and client.writes == [] and client.created == []
    assert "cannot divide by zero" in (workspace / TARGET).read_text()  # the agent wrote the file itself
    executes = [u for u in client.of("tool_call") if u.kind == "execute"]
    assert executes and all(u.raw_input.get("simulated") for u in executes)
    assert "simulated" in client.message_text()


@pytest.mark.asyncio
async def test_allowed_edit_is_written_through_the_client(workspace: Path) -> None:
    marker = "# saved by the client\n"
    client = RecordingClient(answer="allow-once", fs=True, write_marker=marker)
    async with typed_session(client, workspace) as (conn, session_id):
        assert await prompt(conn, session_id, "edit") == "end_turn"
    tool_call, _options = client.permissions[0]
    assert tool_call.content
    diff = cast(FileEditToolCallContent, tool_call.content[0])
    assert client.writes == [(str(workspace / TARGET), diff.new_text)]
    assert "cannot divide by zero" in diff.new_text
    # The file is what the client wrote (with its marker): the agent did not write it itself afterwards.
    assert (workspace / TARGET).read_text() == diff.new_text + marker
    # The "changed meanwhile" check read the file through the client too.
    assert len([r for r in client.reads if r[0] == str(workspace / TARGET)]) >= 2
    assert client.of("tool_call_update")[-1].status == "completed"
    assert "fs/write_text_file" in client.message_text()


@pytest.mark.asyncio
async def test_run_runs_the_tests_in_a_client_terminal(workspace: Path) -> None:
    client = RecordingClient(terminals=True)
    async with typed_session(client, workspace) as (conn, session_id):
        assert await prompt(conn, session_id, "/run") == "end_turn"
    [created] = client.created
    assert created["command"] == sys.executable and created["args"][:2] == ["-u", "-c"]
    assert created["cwd"] == str(workspace) and created["env"] == {"DEMO_AGENT_SPEED": "0"}
    [terminal_id] = client.terminals
    output = client.terminals[terminal_id].output.decode()
    assert output.count("PASSED") == 3 and "\x1b[32m" in output and "\r" in output and "] 2/3" in output
    assert client.released == [terminal_id]
    run = next(u for u in client.of("tool_call") if u.kind == "execute")
    assert run.title == "Run the tests" and terminal_embeds(client, run.tool_call_id) == [terminal_id]
    last = client.of_tool(run.tool_call_id)[-1]
    assert last.status == "completed" and last.raw_output["exitCode"] == 0
    assert "3 passed" in client.message_text()
    assert not list(workspace.rglob("__pycache__"))  # the runner leaves the workspace clean


@pytest.mark.asyncio
async def test_run_after_the_edit_reports_the_failing_test(workspace: Path) -> None:
    client = RecordingClient(answer="allow-once", fs=True, terminals=True)
    async with typed_session(client, workspace) as (conn, session_id):
        assert await prompt(conn, session_id, "edit") == "end_turn"
        client.updates.clear()
        assert await prompt(conn, session_id, "run") == "end_turn"
    output = client.terminals["term-1"].output.decode()
    assert "FAILED" in output and "\x1b[31m" in output
    last = client.of_tool(client.of("tool_call")[0].tool_call_id)[-1]
    assert last.status == "failed" and last.raw_output["exitCode"] == 1
    assert "`test_divide_by_zero`" in client.message_text() and client.released == ["term-1"]


@pytest.mark.asyncio
async def test_run_in_a_folder_that_is_not_the_sample_only_lists_it(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello\n")
    client = RecordingClient(terminals=True)
    async with typed_session(client, tmp_path) as (conn, session_id):
        assert await prompt(conn, session_id, "run") == "end_turn"
    assert "notes.txt" in client.terminals["term-1"].output.decode()
    assert "nothing was tested" in client.message_text() and client.released == ["term-1"]


@pytest.mark.asyncio
async def test_cancel_during_run_releases_the_terminal(workspace: Path) -> None:
    client = RecordingClient(terminals=True)
    async with typed_session(client, workspace, speed="1") as (conn, session_id):
        task = asyncio.create_task(conn.prompt(session_id=session_id, prompt=[acp.text_block("run")]))
        while not client.terminals:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.1)
        await conn.cancel(session_id=session_id)
        response = await asyncio.wait_for(task, 3)
        assert response.stop_reason == "cancelled"
        [terminal_id] = client.terminals
        assert client.released == [terminal_id]
        assert client.terminals[terminal_id].process.returncode is not None
        assert "passed" not in client.terminals[terminal_id].output.decode()  # stopped before the end


@pytest.mark.asyncio
@pytest.mark.parametrize("scenario", ["meta-terminal", "run"])
async def test_meta_terminal_is_reported_in_order_when_offered(workspace: Path, scenario: str) -> None:
    async with raw_session(workspace, capabilities={"_meta": {"terminal_output": True}}) as (conn, session_id, updates):
        assert await raw_prompt(conn, session_id, scenario) == {"stopReason": "end_turn"}
    announce = next(u for u in updates if u["sessionUpdate"] == "tool_call" and "_meta" in u)
    terminal_id = announce["_meta"]["terminal_info"]["terminal_id"]
    assert announce["content"] == [{"type": "terminal", "terminalId": terminal_id}]
    metas = [u["_meta"] for u in updates if u.get("toolCallId") == announce["toolCallId"] and "_meta" in u]
    assert list(metas[0]) == ["terminal_info"] and list(metas[-1]) == ["terminal_exit"]
    assert metas[-1]["terminal_exit"] == {"terminal_id": terminal_id, "exit_code": 0, "signal": None}
    chunks = [m["terminal_output"] for m in metas[1:-1]]
    assert len(chunks) >= 3 and all(c["terminal_id"] == terminal_id for c in chunks)
    data = "".join(c["data"] for c in chunks)
    assert 5 <= data.count("\n") <= 10 and "\x1b[" in data
    last = [u for u in updates if u.get("toolCallId") == announce["toolCallId"]][-1]
    assert last["status"] == "completed"


@pytest.mark.asyncio
async def test_meta_terminal_falls_back_to_text_when_not_offered(workspace: Path) -> None:
    async with raw_session(workspace) as (conn, session_id, updates):
        assert await raw_prompt(conn, session_id, "meta-terminal") == {"stopReason": "end_turn"}
    assert not any("_meta" in u for u in updates)
    tools = [u for u in updates if u["sessionUpdate"] in ("tool_call", "tool_call_update")]
    assert tools[-1]["status"] == "completed" and "already formatted" in tools[-1]["content"][0]["content"]["text"]
