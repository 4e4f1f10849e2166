"""The demo agent, driven as a real subprocess over stdio.

Two kinds of client: the SDK's typed client (``acp.Client`` + ``spawn_agent_process``) for what a plain v1
client sees, and the SDK's low-level ``Connection`` with a dict handler for what the typed layer drops
(custom kinds/statuses, unknown content items, v2 ``tool_call_content_chunk``, ``_meta`` terminals). The typed
client can also serve ``fs/*`` and ``terminal/*`` for real (files of the tmp workspace, commands run with
asyncio subprocesses), advertised only when asked to.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import acp
import pytest
from acp.connection import Connection
from acp.core import ClientSideConnection
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    CreateTerminalResponse,
    DeniedOutcome,
    EnvVariable,
    FileEditToolCallContent,
    FileSystemCapabilities,
    KillTerminalResponse,
    PermissionOption,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    RequestPermissionResponse,
    TerminalExitStatus,
    TerminalOutputResponse,
    TerminalToolCallContent,
    ToolCallUpdate,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)
from acp.stdio import spawn_stdio_connection

from webclient.demo_agent import make_sample_workspace
from webclient.demo_agent.capabilities import ClientCapabilities as DemoCapabilities
from webclient.demo_agent.scenarios import SCENARIOS

REPO = Path(__file__).resolve().parents[1]
AGENT_CMD = (sys.executable, "-m", "webclient.demo_agent")
TARGET = "src/calculator.py"
V1_KINDS = {"read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"}


def agent_env(speed: str) -> dict[str, str]:
    return {"DEMO_AGENT_SPEED": speed, "PYTHONPATH": str(REPO)}


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return make_sample_workspace(tmp_path)


def text(block: Any) -> str:
    return getattr(block, "text", "") or ""


@dataclass
class ClientTerminal:
    """A command the test client runs for the agent, with all of its output."""

    process: asyncio.subprocess.Process
    output: bytearray = field(default_factory=bytearray)
    pump: asyncio.Task[None] | None = None

    async def read_all(self) -> None:
        assert self.process.stdout is not None
        while chunk := await self.process.stdout.read(4096):
            self.output.extend(chunk)


class RecordingClient:
    """A typed ``acp.Client``: records updates; answers permission requests with ``answer`` (None = cancel).

    It serves ``fs/*`` and ``terminal/*`` for real, but advertises them only when ``fs`` / ``terminals`` is set
    (``meta_terminals`` advertises ``_meta.terminal_output``). Reads see ``unsaved`` texts (path -> text) before
    the disk, like an editor's unsaved buffers; writes append ``write_marker`` to show the client wrote.
    """

    def __init__(
        self,
        answer: str | None = "allow-once",
        cancel_on_permission: bool = False,
        *,
        fs: bool = False,
        terminals: bool = False,
        meta_terminals: bool = False,
        unsaved: dict[str, str] | None = None,
        write_marker: str = "",
    ) -> None:
        self.answer = answer
        self.cancel_on_permission = cancel_on_permission
        self.fs, self.terminals_on, self.meta_terminals = fs, terminals, meta_terminals
        self.unsaved = unsaved or {}
        self.write_marker = write_marker
        self.updates: list[Any] = []
        self.permissions: list[tuple[ToolCallUpdate, list[PermissionOption]]] = []
        self.conn: ClientSideConnection | None = None
        self.reads: list[tuple[str, int | None, int | None]] = []
        self.writes: list[tuple[str, str]] = []
        self.created: list[dict[str, Any]] = []
        self.released: list[str] = []
        self.terminals: dict[str, ClientTerminal] = {}

    def capabilities(self) -> ClientCapabilities:
        return ClientCapabilities(
            fs=FileSystemCapabilities(read_text_file=self.fs, write_text_file=self.fs),
            terminal=self.terminals_on,
            field_meta={"terminal_output": True} if self.meta_terminals else None,
        )

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption], **kwargs: Any
    ) -> RequestPermissionResponse:
        self.permissions.append((tool_call, options))
        if self.cancel_on_permission:
            # What a browser client does when the user presses Stop while the question is open.
            assert self.conn is not None
            await self.conn.cancel(session_id=session_id)
        if self.answer is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=self.answer))

    # -- fs/* ------------------------------------------------------------------------------------

    async def read_text_file(
        self, session_id: str, path: str, line: int | None = None, limit: int | None = None, **kwargs: Any
    ) -> ReadTextFileResponse:
        self.reads.append((path, line, limit))
        if path in self.unsaved:
            text = self.unsaved[path]
        elif Path(path).is_file():
            text = Path(path).read_text(encoding="utf-8")
        else:
            raise acp.RequestError.resource_not_found(path)
        start = (line or 1) - 1
        lines = text.splitlines(keepends=True)
        return ReadTextFileResponse(content="".join(lines[start : start + limit if limit else None]))

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any) -> WriteTextFileResponse:
        self.writes.append((path, content))
        self.unsaved.pop(path, None)
        Path(path).write_text(content + self.write_marker, encoding="utf-8")
        return WriteTextFileResponse()

    # -- terminal/* ------------------------------------------------------------------------------

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str] | None = None,
        env: list[EnvVariable] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
        **kwargs: Any,
    ) -> CreateTerminalResponse:
        extra_env = {e.name: e.value for e in env or []}
        self.created.append({"command": command, "args": args or [], "cwd": cwd, "env": extra_env})
        process = await asyncio.create_subprocess_exec(
            command,
            *(args or []),
            cwd=cwd,
            env=os.environ | extra_env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        terminal = ClientTerminal(process)
        terminal.pump = asyncio.create_task(terminal.read_all())
        terminal_id = f"term-{len(self.created)}"
        self.terminals[terminal_id] = terminal
        return CreateTerminalResponse(terminal_id=terminal_id)

    @staticmethod
    def _exit(terminal: ClientTerminal) -> TerminalExitStatus | None:
        code = terminal.process.returncode
        if code is None:
            return None
        return TerminalExitStatus(exit_code=code if code >= 0 else None, signal=None if code >= 0 else f"SIG{-code}")

    async def terminal_output(self, session_id: str, terminal_id: str, **kwargs: Any) -> TerminalOutputResponse:
        terminal = self.terminals[terminal_id]
        text = terminal.output.decode("utf-8", "replace")
        return TerminalOutputResponse(output=text, truncated=False, exit_status=self._exit(terminal))

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> WaitForTerminalExitResponse:
        terminal = self.terminals[terminal_id]
        await terminal.process.wait()
        assert terminal.pump is not None
        await terminal.pump
        status = self._exit(terminal)
        assert status is not None
        return WaitForTerminalExitResponse(exit_code=status.exit_code, signal=status.signal)

    async def kill_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> KillTerminalResponse:
        process = self.terminals[terminal_id].process
        if process.returncode is None:
            process.kill()
        return KillTerminalResponse()

    async def release_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> ReleaseTerminalResponse:
        self.released.append(terminal_id)
        await self.kill_terminal(session_id, terminal_id)
        await self.terminals[terminal_id].process.wait()
        return ReleaseTerminalResponse()

    # -- what was seen ---------------------------------------------------------------------------

    def message_text(self, kind: str = "agent_message_chunk") -> str:
        return "".join(text(u.content) for u in self.updates if u.session_update == kind)

    def of(self, kind: str) -> list[Any]:
        return [u for u in self.updates if u.session_update == kind]

    def of_tool(self, tool_call_id: str) -> list[Any]:
        return [u for u in self.updates if getattr(u, "tool_call_id", None) == tool_call_id]


@asynccontextmanager
async def typed_session(
    client: RecordingClient, cwd: Path, speed: str = "0"
) -> AsyncIterator[tuple[ClientSideConnection, str]]:
    spawned = acp.spawn_agent_process(cast(acp.Client, client), *AGENT_CMD, env=agent_env(speed), cwd=REPO)
    async with spawned as (conn, _proc):
        init = await conn.initialize(protocol_version=1, client_capabilities=client.capabilities())
        assert init.protocol_version == 1
        session = await conn.new_session(cwd=str(cwd), mcp_servers=[])
        yield conn, session.session_id


async def prompt(conn: ClientSideConnection, session_id: str, words: str) -> str:
    response = await asyncio.wait_for(conn.prompt(session_id=session_id, prompt=[acp.text_block(words)]), 10)
    return response.stop_reason


@asynccontextmanager
async def raw_session(
    cwd: Path,
    answer: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
    capabilities: dict[str, Any] | None = None,
) -> AsyncIterator[tuple[Connection, str, list[dict[str, Any]]]]:
    """Untyped client: every ``update`` dict exactly as sent, in arrival order."""
    updates: list[dict[str, Any]] = []

    async def handler(method: str, params: Any, is_notification: bool) -> Any:
        if method == "session/update":
            updates.append(params["update"])
            return None
        if method == "session/request_permission" and answer is not None:
            return answer(params)
        raise acp.RequestError.method_not_found(method)

    async with spawn_stdio_connection(handler, *AGENT_CMD, env=agent_env("0"), cwd=REPO) as (conn, _proc):
        await conn.send_request("initialize", {"protocolVersion": 1, "clientCapabilities": capabilities or {}})
        session = await conn.send_request("session/new", {"cwd": str(cwd), "mcpServers": []})
        yield conn, session["sessionId"], updates


async def raw_prompt(conn: Connection, session_id: str, words: str) -> dict[str, Any]:
    request = conn.send_request(
        "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": words}]}
    )
    result: dict[str, Any] = await asyncio.wait_for(request, 10)
    return result


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


def test_client_capabilities_are_off_unless_exactly_true() -> None:
    assert DemoCapabilities.from_wire(None) == DemoCapabilities()
    assert DemoCapabilities.from_wire({"fs": "yes", "terminal": 1, "_meta": []}) == DemoCapabilities()
    full = {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True, "_meta": {"terminal_output": True}}
    assert DemoCapabilities.from_wire(full) == DemoCapabilities(True, True, True, True)


def completed_text(client: RecordingClient, tool_call_id: str) -> str:
    last = [u for u in client.of_tool(tool_call_id) if u.content][-1]
    return "".join(text(item.content) for item in last.content if getattr(item, "type", "") == "content")


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


def terminal_embeds(client: RecordingClient, tool_call_id: str) -> list[str]:
    return [
        item.terminal_id
        for u in client.of_tool(tool_call_id)
        for item in u.content or []
        if isinstance(item, TerminalToolCallContent)
    ]


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
