"""Clients that drive the demo agent as a real subprocess over stdio, shared by its test modules.

Two kinds of client: the SDK's typed client (``acp.Client`` + ``spawn_agent_process``) for what a plain v1
client sees, and the SDK's low-level ``Connection`` with a dict handler for what the typed layer drops
(custom kinds/statuses, unknown content items, v2 ``tool_call_content_chunk``, ``_meta`` terminals). The typed
client can also serve ``fs/*`` and ``terminal/*`` for real (files of the tmp workspace, commands run with
asyncio subprocesses), advertised only when asked to.

A plain module rather than ``conftest.py``: the tests import what they use, by name.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import acp
from acp.connection import Connection
from acp.core import ClientSideConnection
from acp.schema import (
    AllowedOutcome,
    BooleanConfigOptionCapabilities,
    ClientCapabilities,
    ClientSessionCapabilities,
    CreateTerminalResponse,
    DeniedOutcome,
    EnvVariable,
    FileSystemCapabilities,
    KillTerminalResponse,
    PermissionOption,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    RequestPermissionResponse,
    SessionConfigOptionsCapabilities,
    TerminalExitStatus,
    TerminalOutputResponse,
    ToolCallUpdate,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)
from acp.stdio import spawn_stdio_connection

REPO = Path(__file__).resolve().parents[2]
AGENT_CMD = (sys.executable, "-m", "demo_agent")
TARGET = "src/calculator.py"
BOOLEAN_OPTIONS: dict[str, Any] = {"session": {"configOptions": {"boolean": {}}}}
"""The ``clientCapabilities`` of a client that renders boolean config options."""


def agent_env(speed: str) -> dict[str, str]:
    return {"DEMO_AGENT_SPEED": speed, "PYTHONPATH": str(REPO)}


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
    (``meta_terminals`` advertises ``_meta.terminal_output``, ``boolean_options`` boolean config options). Reads
    see ``unsaved`` texts (path -> text) before the disk, like an editor's unsaved buffers; writes append
    ``write_marker`` to show the client wrote.
    """

    def __init__(
        self,
        answer: str | None = "allow-once",
        cancel_on_permission: bool = False,
        *,
        fs: bool = False,
        terminals: bool = False,
        meta_terminals: bool = False,
        boolean_options: bool = False,
        unsaved: dict[str, str] | None = None,
        write_marker: str = "",
    ) -> None:
        self.answer = answer
        self.cancel_on_permission = cancel_on_permission
        self.fs, self.terminals_on, self.meta_terminals = fs, terminals, meta_terminals
        self.boolean_options = boolean_options
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
            session=ClientSessionCapabilities(
                config_options=SessionConfigOptionsCapabilities(boolean=BooleanConfigOptionCapabilities())
            )
            if self.boolean_options
            else None,
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


@dataclass
class RawSession:
    """An untyped client's view of one session: every message as the agent sent it."""

    conn: Connection
    session_id: str
    initialized: dict[str, Any]
    """The ``initialize`` result."""
    created: dict[str, Any]
    """The ``session/new`` result."""
    updates: list[dict[str, Any]]
    """Every ``update`` dict exactly as sent, in arrival order."""
    notifications: list[dict[str, Any]]
    """The whole ``session/update`` params (``sessionId`` + ``update``), for schema checks."""
    requests: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    """Requests the agent made of the client (method, params)."""

    async def wait_for(self, kind: str, count: int = 1, timeout: float = 5) -> list[dict[str, Any]]:
        """The updates of ``kind`` once at least ``count`` arrived (some come after a response, not before)."""
        deadline = asyncio.get_running_loop().time() + timeout
        while len(found := [u for u in self.updates if u["sessionUpdate"] == kind]) < count:
            assert asyncio.get_running_loop().time() < deadline, f"no {count}× {kind} in {self.updates}"
            await asyncio.sleep(0.01)
        return found

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [u for u in self.updates if u["sessionUpdate"] == kind]


@asynccontextmanager
async def raw_agent(
    cwd: Path,
    answer: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
    capabilities: dict[str, Any] | None = None,
    serve: dict[str, Callable[[dict[str, Any]], Any]] | None = None,
) -> AsyncIterator[RawSession]:
    """Untyped client on a fresh demo agent; ``serve`` answers further agent requests (method -> handler)."""
    updates: list[dict[str, Any]] = []
    notifications: list[dict[str, Any]] = []
    requests: list[tuple[str, dict[str, Any]]] = []

    async def handler(method: str, params: Any, is_notification: bool) -> Any:
        if method == "session/update":
            notifications.append(params)
            updates.append(params["update"])
            return None
        requests.append((method, params))
        if method == "session/request_permission" and answer is not None:
            return answer(params)
        if serve and method in serve:
            return serve[method](params)
        raise acp.RequestError.method_not_found(method)

    async with spawn_stdio_connection(handler, *AGENT_CMD, env=agent_env("0"), cwd=REPO) as (conn, _proc):
        initialized = await conn.send_request(
            "initialize", {"protocolVersion": 1, "clientCapabilities": capabilities or {}}
        )
        created = await conn.send_request("session/new", {"cwd": str(cwd), "mcpServers": []})
        yield RawSession(conn, created["sessionId"], initialized, created, updates, notifications, requests)


@asynccontextmanager
async def raw_session(
    cwd: Path,
    answer: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
    capabilities: dict[str, Any] | None = None,
) -> AsyncIterator[tuple[Connection, str, list[dict[str, Any]]]]:
    """Untyped client: every ``update`` dict exactly as sent, in arrival order."""
    async with raw_agent(cwd, answer, capabilities) as raw:
        yield raw.conn, raw.session_id, raw.updates


async def raw_prompt(conn: Connection, session_id: str, words: str | list[dict[str, Any]]) -> dict[str, Any]:
    """Send a prompt of ``words`` (one text block) or of the given content blocks; the result."""
    blocks = [{"type": "text", "text": words}] if isinstance(words, str) else words
    request = conn.send_request("session/prompt", {"sessionId": session_id, "prompt": blocks})
    result: dict[str, Any] = await asyncio.wait_for(request, 10)
    return result
