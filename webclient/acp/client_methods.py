"""The requests an ACP agent makes of its client: files (``fs/*``) and terminals (``terminal/*``).

This module checks the parameters, turns them into calls on the session's workspace and terminals, and
turns every refusal into a JSON-RPC error whose message says why. It knows nothing of HTML: what the user
should see (a write, a terminal's output) is reported to :class:`ClientEvents` (the session's `WorkspaceEvents`).
Spec: https://agentclientprotocol.com/protocol/file-system and .../protocol/terminals
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol, cast

from webclient.acp import wire
from webclient.acp.jsonrpc import InternalError, InvalidParams, ResourceNotFound, RpcError
from webclient.acp.wire_values import integer, string
from webclient.workspace.files import NotText, WriteResult, read_text_file, write_text_file
from webclient.workspace.paths import FileTooLarge, PathRefused, Workspace
from webclient.workspace.terminals import ExitStatus, Terminals, UnknownTerminal

Handler = Callable[[dict[str, Any]], Awaitable[Any]]

DEFAULT_OUTPUT_LIMIT = 16 * 1024 * 1024
"""Bytes of output kept for a terminal whose agent sets no ``outputByteLimit``: the server's memory is finite."""


class ClientEvents(Protocol):
    """What the session hears of the agent's work, to show it (`webclient.session.workspace_events.WorkspaceEvents`)."""

    def file_written(self, result: WriteResult) -> None: ...

    def terminal_started(self, terminal_id: str, command: str, args: list[str], cwd: Path) -> None: ...

    def terminal_output(self, terminal_id: str, data: bytes) -> None: ...

    def terminal_exited(self, terminal_id: str, status: ExitStatus) -> None: ...

    def terminal_released(self, terminal_id: str) -> None: ...


def _string(params: Mapping[str, object], name: str) -> str:
    """A parameter that must be a non-empty string; the agent's error if it is not."""
    value = string(params.get(name))
    if not value:
        raise InvalidParams(f"{name} must be a non-empty string")
    return value


def _optional_int(params: Mapping[str, object], name: str, minimum: int) -> int | None:
    """A parameter that may be absent (or null), else an integer of at least ``minimum``; the agent's error if not."""
    value = params.get(name)
    if value is None:
        return None
    number = integer(value)
    if number is None or number < minimum:
        raise InvalidParams(f"{name} must be an integer of at least {minimum}")
    return number


def _refused(error: Exception) -> RpcError:
    """The JSON-RPC error for a refused or failed file operation, with a message the agent can act on."""
    if isinstance(error, FileNotFoundError):
        return ResourceNotFound(f"No such file: {error.filename or error}")
    if isinstance(error, PathRefused | NotText | ValueError | FileTooLarge):
        return InvalidParams(str(error))
    if isinstance(error, OSError):
        return InternalError(f"{error.strerror or error}: {error.filename or ''}".rstrip(": "))
    return InternalError(str(error))


@contextmanager
def _known_terminal() -> Iterator[None]:
    """Turns `UnknownTerminal` (never created, or already released) into the agent's error: invalid params."""
    try:
        yield
    except UnknownTerminal as error:
        raise InvalidParams(str(error)) from None


class ClientMethods:
    """Serves ``fs/*`` and ``terminal/*`` for one session, inside its workspace."""

    def __init__(
        self,
        workspace: Workspace,
        terminals: Terminals | None,
        events: ClientEvents,
        agent_env: Mapping[str, str] | None = None,
    ) -> None:
        self.agent_env = agent_env or {}
        """What the agent's own environment has over the server's (its owner's home): its terminals have it too."""
        self.workspace = workspace
        self.terminals = terminals
        self.events = events
        self._handlers: dict[str, Handler] = {}
        if workspace.access != "none":
            self._handlers["fs/read_text_file"] = self.read_text_file
        if workspace.access == "read-write":
            self._handlers["fs/write_text_file"] = self.write_text_file
        if terminals is not None:
            self._handlers.update(
                {
                    "terminal/create": self.create_terminal,
                    "terminal/output": self.terminal_output,
                    "terminal/wait_for_exit": self.wait_for_terminal_exit,
                    "terminal/kill": self.kill_terminal,
                    "terminal/release": self.release_terminal,
                }
            )

    def capabilities(self) -> dict[str, Any]:
        """``clientCapabilities`` as they are: only what this session will really serve."""
        return {
            "fs": {
                "readTextFile": "fs/read_text_file" in self._handlers,
                "writeTextFile": "fs/write_text_file" in self._handlers,
            },
            "terminal": self.terminals is not None,
        }

    def handler(self, method: str) -> Handler | None:
        return self._handlers.get(method)

    # -- files -------------------------------------------------------------------------------------

    async def read_text_file(self, params: dict[str, Any]) -> wire.ReadTextFileResponse:
        request = cast(wire.ReadTextFileRequest, params)
        path = _string(request, "path")
        line = _optional_int(request, "line", 1)
        limit = _optional_int(request, "limit", 1)
        try:
            content = await asyncio.to_thread(read_text_file, self.workspace, path, line, limit)
        except (OSError, ValueError, PathRefused) as error:
            raise _refused(error) from None
        return {"content": content}

    async def write_text_file(self, params: dict[str, Any]) -> dict[str, Any]:
        request = cast(wire.WriteTextFileRequest, params)
        path = _string(request, "path")
        content = string(request.get("content"))
        if content is None:
            raise InvalidParams("content must be a string")
        try:
            result = await asyncio.to_thread(write_text_file, self.workspace, path, content)
        except (OSError, ValueError, PathRefused) as error:
            raise _refused(error) from None
        self.events.file_written(result)
        return {}

    # -- terminals ---------------------------------------------------------------------------------

    def _cwd(self, request: wire.CreateTerminalRequest) -> Path:
        """The command's working directory: the session's by default, else a directory inside the workspace."""
        value: object = request.get("cwd")
        if value is None:
            return self.workspace.roots[0]
        if not isinstance(value, str) or not os.path.isabs(value) or "\0" in value:
            raise InvalidParams("cwd must be an absolute path")
        try:
            resolved = Path(os.path.realpath(value))
        except OSError as error:  # a symlink on the way changed while it was being resolved
            raise InvalidParams(f"cwd cannot be resolved: {value}: {error.strerror}") from None
        if not self.workspace.contains(resolved):
            raise InvalidParams(f"cwd is outside the workspace: {value}")
        if not resolved.is_dir():
            raise InvalidParams(f"cwd is not a directory: {value}")
        return resolved

    def _env(self, request: wire.CreateTerminalRequest) -> dict[str, str]:
        env = dict(self.agent_env)
        extra: object = request.get("env") or []
        if not isinstance(extra, list):
            raise InvalidParams("env must be a list of {name, value}")
        for item in extra:
            if not (
                isinstance(item, dict) and isinstance(item.get("name"), str) and isinstance(item.get("value"), str)
            ):
                raise InvalidParams("env must be a list of {name, value} strings")
            if not item["name"] or "=" in item["name"] or "\0" in item["name"] + item["value"]:
                raise InvalidParams(f"invalid environment variable name or value: {item['name']!r}")
            env[item["name"]] = item["value"]
        # The server's variables under these: all but its own settings, or in a sandbox only its allow-list.
        return self._terminals().sandbox.environment(os.environ, env)

    def _terminals(self) -> Terminals:
        assert self.terminals is not None  # only registered when terminals are on
        return self.terminals

    async def create_terminal(self, params: dict[str, Any]) -> wire.CreateTerminalResponse:
        request = cast(wire.CreateTerminalRequest, params)
        command = _string(request, "command")
        args: object = request.get("args") or []
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise InvalidParams("args must be a list of strings")
        if "\0" in command or any("\0" in a for a in args):
            raise InvalidParams("command and args must not contain NUL characters")
        limit = _optional_int(request, "outputByteLimit", 0)
        cwd = self._cwd(request)
        env = self._env(request)
        try:
            terminal_id = await self._terminals().create(
                command,
                args,
                cwd=cwd,
                env=env,
                output_byte_limit=min(limit, DEFAULT_OUTPUT_LIMIT) if limit is not None else DEFAULT_OUTPUT_LIMIT,
                on_output=self.events.terminal_output,
                on_exit=self.events.terminal_exited,
            )
        except OSError as error:
            raise InvalidParams(f"Could not run {command!r}: {error.strerror or error}") from None
        self.events.terminal_started(terminal_id, command, args, cwd)
        return {"terminalId": terminal_id}

    def _terminal_id(self, params: Mapping[str, Any]) -> str:
        """The ``terminalId`` of a ``terminal/*`` request (``TerminalOutputRequest`` and its siblings)."""
        return _string(cast(wire.TerminalOutputRequest, params), "terminalId")

    async def terminal_output(self, params: dict[str, Any]) -> wire.TerminalOutputResponse:
        with _known_terminal():
            text, truncated, status = self._terminals().get(self._terminal_id(params)).output()
        result: wire.TerminalOutputResponse = {"output": text, "truncated": truncated}
        if status is not None:
            result["exitStatus"] = _exit_json(status)
        return result

    async def wait_for_terminal_exit(self, params: dict[str, Any]) -> wire.TerminalExitStatus:
        with _known_terminal():
            process = self._terminals().get(self._terminal_id(params))
        return _exit_json(await process.wait_for_exit())

    async def kill_terminal(self, params: dict[str, Any]) -> dict[str, Any]:
        with _known_terminal():
            process = self._terminals().get(self._terminal_id(params))
        await process.kill()
        return {}

    async def release_terminal(self, params: dict[str, Any]) -> dict[str, Any]:
        terminal_id = self._terminal_id(params)
        with _known_terminal():
            await self._terminals().release(terminal_id)
        self.events.terminal_released(terminal_id)
        return {}


def _exit_json(status: ExitStatus) -> wire.TerminalExitStatus:
    return {"exitCode": status.exit_code, "signal": status.signal}
