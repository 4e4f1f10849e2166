"""A session: one agent process, its conversation thread, and the people watching it.

The session turns what the agent sends into thread changes (through the ACP adapter) and what the
user does (prompt, click, stop) into ACP calls. It knows nothing of sockets or HTML: watchers
subscribe with a callback that is told *which* part changed (an entry's ``seq`` or a region name) and
render it themselves when they are ready.
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import shlex
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from webclient.acp.client_methods import ClientMethods
from webclient.acp.connection import AgentConnection
from webclient.acp.process import AgentStartError, StderrLog
from webclient.acp.updates import apply_update, permission_options, tool_call_patch
from webclient.jsonrpc import ConnectionClosed, RpcError
from webclient.viewmodel.content import TextBlock
from webclient.viewmodel.thread import Thread
from webclient.workspace.changes import ChangeTracker
from webclient.workspace.files import WriteResult
from webclient.workspace.paths import Access, Workspace
from webclient.workspace.terminals import ExitStatus, Terminals

log = logging.getLogger(__name__)

ChangeKey = int | str
"""An entry's ``seq``, or the name of a page part (``"status"``, ``"changes"``, ``"location"``, ``"terminal:<n>"``)."""

AgentState = Literal["starting", "ready", "auth-required", "exited", "failed"]
TurnState = Literal["idle", "running", "awaiting-permission", "ended"]

AUTH_REQUIRED = -32000
PROTOCOL_LOG_LINES = 5000
PROTOCOL_LOG_LINE_CHARS = 20_000

_STOP_NOTICES: dict[str, tuple[str, str]] = {
    "cancelled": ("info", "Stopped"),
    "max_tokens": ("warning", "The agent reached its token limit"),
    "max_turn_requests": ("warning", "The agent reached its limit of requests for one turn"),
    "refusal": ("warning", "The agent refused to continue"),
}


def command_display(command: str, args: list[str]) -> str:
    """A command line as a person reads it: a long inline script (``python -c ...``) is summarised."""
    shown = []
    for arg in [command, *args]:
        if len(arg) > 80 or "\n" in arg:
            lines = arg.count("\n") + 1
            arg = f"<{lines} lines>" if lines > 1 else f"{arg[:60]}…"
        shown.append(arg)
    return shlex.join(shown)


@dataclass(frozen=True, slots=True)
class AgentSpec:
    """How to start an agent, and what it may do through the client."""

    argv: list[str]
    cwd: Path
    env: Mapping[str, str] | None = None
    extra_roots: tuple[Path, ...] = ()
    """Directories besides ``cwd`` the agent may read and write through the client."""
    file_access: Access = "read-write"
    terminals: bool = True


@dataclass(frozen=True, slots=True)
class LogLine:
    when: float
    direction: str
    text: str


class Session:
    """One agent, one ACP session, one thread; any number of watchers."""

    def __init__(self, spec: AgentSpec, session_id: str | None = None) -> None:
        self.id = session_id or secrets.token_urlsafe(9)
        self.spec = spec
        self.created = time.time()
        self.thread = Thread(listener=self._changed)
        self.title: str | None = None
        self.agent_state: AgentState = "starting"
        self.agent_info: dict[str, Any] = {}
        self.error: str | None = None
        self.auth_methods: list[dict[str, Any]] = []
        self.turn_running = False
        self.cancelling = False
        self.stderr = StderrLog()
        self.protocol_log: deque[LogLine] = deque(maxlen=PROTOCOL_LOG_LINES)
        self.other_updates: dict[str, Any] = {}
        """The latest update of each kind the thread does not show (commands, modes, usage, ...)."""
        self.workspace = Workspace([spec.cwd, *spec.extra_roots], spec.file_access)
        self.terminals = Terminals() if spec.terminals else None
        self.client_methods = ClientMethods(self.workspace, self.terminals, self)
        self.changes = ChangeTracker(self.workspace.roots, lambda: self._changed("changes"))
        self._watchers: set[Callable[[ChangeKey], None]] = set()
        self._connection: AgentConnection | None = None
        self._acp_session_id: str | None = None
        self._answers: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._prompt_nonces: set[str] = set()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._closing = False

    # -- watching ----------------------------------------------------------------------------------

    def watch(self, callback: Callable[[ChangeKey], None]) -> Callable[[], None]:
        """Call ``callback`` with every change from now on; returns the function that stops it."""
        self._watchers.add(callback)
        return lambda: self._watchers.discard(callback)

    def _changed(self, key: ChangeKey) -> None:
        for watcher in self._watchers:
            watcher(key)

    @property
    def turn_state(self) -> TurnState:
        if self.agent_state in ("exited", "failed"):
            return "ended"
        if self.thread.pending_permissions:
            return "awaiting-permission"
        # While the agent starts it is busy, as during a turn: prompts wait for ``idle``.
        return "running" if self.turn_running or self.agent_state == "starting" else "idle"

    def display_path(self, path: str) -> str:
        """A path as the user reads it: relative to the workspace when it lies inside."""
        candidate = Path(os.path.normpath(path))
        return (
            self.workspace.relative(candidate)
            if candidate.is_absolute() and self.workspace.contains(candidate)
            else path
        )

    @property
    def ready(self) -> bool:
        return self.agent_state == "ready" and self._acp_session_id is not None

    # -- lifecycle ---------------------------------------------------------------------------------

    def start(self) -> None:
        """Start the agent in the background; progress shows in the page."""
        self._spawn(self._start(), "start")

    async def _start(self) -> None:
        try:
            # The baseline of the Changes view is the workspace before the agent could touch it.
            await self.changes.start()
            self._connection = await AgentConnection.spawn(
                self.spec.argv, cwd=self.spec.cwd, env=self.spec.env, handler=self, stderr_log=self.stderr
            )
            self._spawn(self._watch_exit(self._connection), "exit-watch")
            result = await self._connection.initialize(self.client_methods.capabilities())
            info = result.get("agentInfo")
            self.agent_info = info if isinstance(info, dict) else {}
            methods = result.get("authMethods")
            self.auth_methods = [m for m in methods if isinstance(m, dict)] if isinstance(methods, list) else []
            await self._new_session()
        except AgentStartError as error:
            self._fail(f"The agent could not be started: {error}")
        except RpcError as error:
            self._fail(f"The agent refused to start a session: {error.message} ({error.code})")
        except ConnectionClosed:
            pass  # the exit watcher reports it

    async def _new_session(self) -> None:
        assert self._connection is not None
        try:
            result = await self._connection.new_session(self.spec.cwd)
        except RpcError as error:
            if error.code == AUTH_REQUIRED and self.auth_methods:
                self.agent_state = "auth-required"
                self._changed("status")
                return
            raise
        session_id = result.get("sessionId")
        if not isinstance(session_id, str):
            self._fail("The agent's session/new answer has no sessionId.")
            return
        self._acp_session_id = session_id
        self.agent_state = "ready"
        self._changed("status")

    async def authenticate(self, method_id: str) -> None:
        """Sign in with one of the agent's ``authMethods``, then start the session."""
        if self.agent_state != "auth-required" or self._connection is None:
            return
        if not any(m.get("id") == method_id for m in self.auth_methods):
            return
        self.agent_state = "starting"
        self._changed("status")
        try:
            await self._connection.authenticate(method_id)
            await self._new_session()
        except RpcError as error:
            self.agent_state = "auth-required"
            self.error = f"Sign-in failed: {error.message}"
            self._changed("status")
        except ConnectionClosed:
            pass

    async def _watch_exit(self, connection: AgentConnection) -> None:
        code = await connection.process.wait()
        await asyncio.gather(connection.reader, return_exceptions=True)
        if self._closing:
            return
        self.agent_state = "exited"
        self._settle_permissions()
        tail = self.stderr.tail(20)
        self.thread.add_notice("error", f"The agent exited (exit code {code})", tail)
        self._changed("status")

    def _fail(self, message: str) -> None:
        self.agent_state = "failed"
        self.error = message
        self.thread.add_notice("error", message, self.stderr.tail(20))
        self._changed("status")

    async def close(self) -> None:
        """End the session: stop the agent and everything running for it."""
        self._closing = True
        self._settle_permissions()
        if self._connection is not None:
            await self._connection.close()
        if self.terminals is not None:
            await self.terminals.close()
        await self.changes.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self.agent_state not in ("failed",):
            self.agent_state = "exited"
        self._changed("status")

    def _spawn(self, coro: Awaitable[Any], name: str) -> None:
        task = asyncio.ensure_future(coro)
        task.set_name(f"session-{self.id}-{name}")
        self._tasks.add(task)
        task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("session %s: task %s failed", self.id, task.get_name(), exc_info=task.exception())

    # -- the user's actions ------------------------------------------------------------------------

    def submit_prompt(self, text: str, nonce: str) -> bool:
        """Start a turn with ``text``. A nonce already seen (a replayed send) changes nothing."""
        text = text.strip()
        if not text or nonce in self._prompt_nonces or not self.ready or self.turn_running:
            return False
        assert self._connection is not None and self._acp_session_id is not None
        self._prompt_nonces.add(nonce)
        self.thread.start_turn([TextBlock(text=text)])
        self.turn_running = True
        self._changed("status")
        self._spawn(self._run_turn(self._connection, self._acp_session_id, text), "turn")
        return True

    async def _run_turn(self, connection: AgentConnection, session_id: str, text: str) -> None:
        try:
            result = await connection.prompt(session_id, [{"type": "text", "text": text}])
            reason = result.get("stopReason")
            if isinstance(reason, str) and reason != "end_turn":
                level, title = _STOP_NOTICES.get(reason, ("info", f"The turn ended: {reason}"))
                self.thread.add_notice(level, title)
        except RpcError as error:
            self.thread.add_notice("error", "The agent reported an error", f"{error.message} (code {error.code})")
        except ConnectionClosed:
            pass  # the exit watcher reports it
        finally:
            self.turn_running = False
            self.cancelling = False
            self._settle_permissions()
            self.thread.end_turn()
            self._changed("status")

    async def cancel(self) -> None:
        """Stop the turn: tell the agent, answer its open questions ``cancelled``, mark unfinished calls."""
        if not self.turn_running or self.cancelling or self._connection is None or self._acp_session_id is None:
            return
        self.cancelling = True
        self._changed("status")
        await self._connection.cancel(self._acp_session_id)
        self._settle_permissions()
        self.thread.cancel_unfinished()

    def answer_permission(self, request_id: str, option_id: str) -> None:
        """The user chose ``option_id``: answer the agent once; a repeated or late click changes nothing."""
        prompt = self.thread.answer_permission(request_id, option_id)
        future = self._answers.pop(request_id, None) if prompt is not None else None
        if future is not None and not future.done():
            future.set_result({"outcome": {"outcome": "selected", "optionId": option_id}})
            self._changed("status")
        elif (call := self.thread.tool_call_for_permission(request_id)) is not None:
            self._changed(call.seq)  # re-show the settled card to whoever clicked late

    def _settle_permissions(self) -> None:
        """Answer every open question ``cancelled`` (the turn was stopped, or it is over)."""
        for request_id, future in list(self._answers.items()):
            self.thread.answer_permission(request_id, None)
            if not future.done():
                future.set_result({"outcome": {"outcome": "cancelled"}})
        self._answers.clear()

    # -- the agent's messages (ClientHandler) ------------------------------------------------------

    def on_session_update(self, params: dict[str, Any]) -> None:
        update = params.get("update")
        if apply_update(self.thread, update):
            return
        if not isinstance(update, dict):
            return
        kind = update.get("sessionUpdate")
        if kind == "session_info_update" and "title" in update:
            title = update["title"]
            self.title = title if isinstance(title, str) else None
            self._changed("status")
        elif isinstance(kind, str):
            self.other_updates[kind] = update

    def on_request_permission(self, params: dict[str, Any]) -> Awaitable[dict[str, Any]]:
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        request_id = secrets.token_urlsafe(9)
        tool_call = params.get("toolCall")
        subject = params.get("subject")
        if not isinstance(tool_call, dict) and isinstance(subject, dict):
            tool_call = subject.get("toolCall")  # the v2 draft's shape
        if isinstance(tool_call, dict) and isinstance(tool_call.get("toolCallId"), str):
            raw = {k: v for k, v in tool_call.items() if k != "toolCallId"}
            call = self.thread.upsert_tool_call(tool_call["toolCallId"], tool_call_patch(tool_call), raw)
        else:
            # A question not about a tool call (v2 ``command`` subjects, or unknown): show it as a card of its own.
            title = params.get("title")
            raw = {k: v for k, v in params.items() if k not in ("sessionId", "options")}
            patch: dict[str, Any] = {"title": title if isinstance(title, str) else "The agent asks for permission"}
            call = self.thread.upsert_tool_call(f"permission-{request_id}", patch, raw)
        options = permission_options(params.get("options"))
        if self.cancelling or not options or self._closing:
            future.set_result({"outcome": {"outcome": "cancelled"}})
            return future
        self.thread.ask_permission(call, request_id, options)
        self._answers[request_id] = future
        self._changed("status")
        return future

    def on_traffic(self, direction: str, line: str) -> None:
        if len(line) > PROTOCOL_LOG_LINE_CHARS:
            line = f"{line[:PROTOCOL_LOG_LINE_CHARS]}… ({len(line):,} characters)"
        self.protocol_log.append(LogLine(time.time(), direction, line))

    def on_client_request(self, method: str, params: dict[str, Any]) -> Awaitable[Any] | None:
        handler = self.client_methods.handler(method)
        return handler(params) if handler is not None else None

    # -- the agent's work in the workspace (ClientEvents) ------------------------------------------

    def file_written(self, result: WriteResult) -> None:
        self.thread.add_file_change(self.workspace.relative(result.path), result.old_text, result.new_text)
        self.changes.note_write(result.path)

    def terminal_started(self, terminal_id: str, command: str, args: list[str], cwd: Path) -> None:
        where = self.workspace.relative(cwd) if cwd != self.workspace.roots[0] else None
        self.thread.terminals.started(terminal_id, command_display(command, args), where)

    def terminal_output(self, terminal_id: str, data: bytes) -> None:
        self.thread.terminals.output(terminal_id, data)

    def terminal_exited(self, terminal_id: str, status: ExitStatus) -> None:
        self.thread.terminals.exited(terminal_id, status.exit_code, status.signal)

    def terminal_released(self, terminal_id: str) -> None:
        self.thread.terminals.released(terminal_id)
