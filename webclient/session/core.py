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
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from webclient.acp.auth import SignInMethod, sign_in_methods
from webclient.acp.client_methods import ClientMethods
from webclient.acp.connection import AgentConnection
from webclient.acp.controls import apply_session_result, settings
from webclient.acp.jsonrpc import ConnectionClosed, RpcError
from webclient.acp.permissions import Permissions
from webclient.acp.process import AgentStartError, StderrLog
from webclient.acp.prompt import mention_blocks, prompt_blocks, upload_block
from webclient.acp.protocol_log import ProtocolLog
from webclient.acp.updates import SessionUpdates, content_block
from webclient.session.agent_spec import AgentSpec as AgentSpec  # the sessions module and tests import it from here
from webclient.session.agent_spec import command_display
from webclient.session.prompt_queue import PromptQueue, QueuedPrompt
from webclient.session.uploads import Uploads
from webclient.viewmodel.controls import SessionControls
from webclient.viewmodel.thread import Thread
from webclient.workspace.changes import ChangeTracker
from webclient.workspace.files import WriteResult
from webclient.workspace.paths import Workspace
from webclient.workspace.terminals import ExitStatus, Terminals

log = logging.getLogger(__name__)

ChangeKey = int | str
"""An entry's ``seq``, or the name of a page part (``"status"``, ``"controls"``, ``"commands"``, ``"queue"``,
``"plan"``, ``"changes"``, ``"location"``, ``"terminal:<n>"``)."""

AgentState = Literal["starting", "ready", "auth-required", "signing-in", "exited", "failed"]
TurnState = Literal["idle", "running", "awaiting-permission", "auth-required", "ended"]

AUTH_REQUIRED = -32000

_STOP_NOTICES: dict[str, tuple[str, str]] = {
    "cancelled": ("info", "Stopped"),
    "max_tokens": ("warning", "The agent reached its token limit"),
    "max_turn_requests": ("warning", "The agent reached its limit of requests for one turn"),
    "refusal": ("warning", "The agent refused to continue"),
}


class Session:
    """One agent, one ACP session, one thread; any number of watchers."""

    def __init__(self, spec: AgentSpec, session_id: str | None = None) -> None:
        self.id = session_id or secrets.token_urlsafe(9)
        self.spec = spec
        self.created = time.time()
        self.thread = Thread(listener=self._changed)
        self.controls = SessionControls(listener=self._changed)
        self._updates = SessionUpdates(self.thread, self.controls)
        self.permissions = Permissions(self.thread, self._changed)
        self.queue = PromptQueue(lambda: self._changed("queue"))
        self.queue_paused = False
        """True after the user stopped a turn: queued prompts then wait for "Send now"."""
        self.uploads = Uploads()
        self.prompt_capabilities: frozenset[str] = frozenset()
        """The ``promptCapabilities`` the agent set (``image``, ``audio``, ``embeddedContext``)."""
        self.agent_state: AgentState = "starting"
        self.agent_info: dict[str, Any] = {}
        self.error: str | None = None
        """Why the agent could not start, or why the last sign-in failed."""
        self.start_step: str | None = None
        """What the start waits for: ``the start of its process``, ``initialize`` or ``session/new``."""
        self.since = time.time()
        """When the agent began starting, or signing in (the header counts up from it)."""
        self.auth_methods: list[SignInMethod] = []
        self.auth_reason: str | None = None
        """What the agent said when it asked for a sign-in (the ``session/new`` error, with its data)."""
        self.signing_in: SignInMethod | None = None
        self._sign_in: asyncio.Task[None] | None = None
        self.turn_running = False
        self.cancelling = False
        self.stderr = StderrLog()
        self.protocol_log = ProtocolLog()
        self.workspace = Workspace([spec.cwd, *spec.extra_roots], spec.file_access)
        self.terminals = Terminals() if spec.terminals else None
        self.client_methods = ClientMethods(self.workspace, self.terminals, self)
        self.changes = ChangeTracker(self.workspace.roots, lambda: self._changed("changes"))
        self._watchers: set[Callable[[ChangeKey], None]] = set()
        self._connection: AgentConnection | None = None
        self._acp_session_id: str | None = None
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
    def title(self) -> str | None:
        return self.controls.title

    @property
    def turn_state(self) -> TurnState:
        if self.agent_state in ("exited", "failed"):
            return "ended"
        if self.agent_state in ("auth-required", "signing-in"):
            return "auth-required"  # not idle: a prompt now is refused (with a notice), not queued
        if self.thread.pending_permissions:
            return "awaiting-permission"
        # While the agent starts it is busy, as during a turn: prompts wait for ``idle``.
        return "running" if self.turn_running or self.agent_state == "starting" else "idle"

    def display_path(self, path: str) -> str:
        """A path as the user reads it: relative to the workspace when it lies inside."""
        if "\0" in path:
            return path  # no file has such a name; the OS would refuse to look it up
        candidate = Path(os.path.normpath(path))
        return (
            self.workspace.relative(candidate)
            if candidate.is_absolute() and self.workspace.contains(candidate)
            else path
        )

    @property
    def ready(self) -> bool:
        return self.agent_state == "ready" and self._acp_session_id is not None

    @property
    def elapsed(self) -> str:
        """Time since ``since`` as ``m:ss`` (the page counts on from it)."""
        seconds = max(0, int(time.time() - self.since))
        return f"{seconds // 60}:{seconds % 60:02d}"

    @property
    def can_retry(self) -> bool:
        """Whether Retry (a fresh agent process in this session) is offered: the agent failed to start or
        exited, or waits for a sign-in the browser cannot do; never after the user ended the session."""
        return not self._closing and self.agent_state in ("failed", "exited", "auth-required")

    # -- lifecycle ---------------------------------------------------------------------------------

    def start(self) -> None:
        """Start the agent in the background; progress shows in the page."""
        self._spawn(self._start(), "start")

    async def _start(self) -> None:
        # The baseline of the Changes view is the workspace before the agent could touch it.
        await self.changes.start()
        await self._start_agent()

    def _step(self, step: str) -> None:
        self.start_step = step
        self._changed("status")

    async def _start_agent(self) -> None:
        """Spawn the agent, ``initialize``, ``session/new``: all within ``spec.start_timeout`` seconds. An agent
        that never answers (or answers with ids we never sent) fails the start, naming the step."""
        self.since = time.time()
        try:
            async with asyncio.timeout(self.spec.start_timeout):
                self._step("its start")
                connection = await AgentConnection.spawn(
                    self.spec.argv,
                    cwd=self.spec.cwd,
                    env=self.spec.env,
                    handler=self,
                    stderr_log=self.stderr,
                    max_line_bytes=self.spec.max_line_bytes,
                )
                self._connection = connection
                self._spawn(self._watch_exit(connection), "exit-watch")
                self._step("initialize")
                result = await connection.initialize(self.client_methods.capabilities())
                info = result.get("agentInfo")
                self.agent_info = info if isinstance(info, dict) else {}
                capabilities = result.get("agentCapabilities")
                offered = capabilities.get("promptCapabilities") if isinstance(capabilities, dict) else None
                if isinstance(offered, dict):
                    self.prompt_capabilities = frozenset(name for name, on in offered.items() if on is True)
                self.auth_methods = sign_in_methods(result.get("authMethods"))
                self._step("session/new")
                await self._new_session()
        except TimeoutError:
            await self._timed_out()
        except AgentStartError as error:
            self._fail(f"The agent could not be started: {error}")
        except RpcError as error:
            self._fail(f"The agent refused to start a session: {error.text} (code {error.code})")
        except ConnectionClosed:
            pass  # the exit watcher reports it

    async def _timed_out(self) -> None:
        """The start took too long: say which step, stop the agent (its stderr stays), offer Retry."""
        step, connection = self.start_step or "its start", self._connection
        self._connection = None  # its exit is expected now: the exit watcher stays quiet
        stray = connection.peer.stray_responses if connection is not None else 0
        because = f" ({stray} answer{'s' if stray > 1 else ''} came with an id we never sent)" if stray else ""
        self._fail(f"The agent did not answer {step} within {self.spec.start_timeout:g} s{because}")
        if connection is not None:
            await connection.close()

    async def _new_session(self) -> None:
        assert self._connection is not None
        try:
            result = await self._connection.new_session(self.spec.cwd)
        except RpcError as error:
            if error.code == AUTH_REQUIRED and self.auth_methods:
                self.agent_state = "auth-required"
                self.auth_reason = error.text
                self.start_step = None
                self._changed("status")
                return
            raise
        session_id = result.get("sessionId")
        if not isinstance(session_id, str):
            self._fail("The agent's session/new answer has no sessionId.")
            return
        self._acp_session_id = session_id
        apply_session_result(self.controls, result)
        self.agent_state = "ready"
        self.start_step = None
        self._changed("status")
        self.send_queued()

    def authenticate(self, method_id: str) -> None:
        """Sign in with one of the agent's ``agent`` methods, then start the session: in the background, since
        an agent may never answer (a browser login it opened on the server); ``cancel_sign_in`` gives up."""
        method = next((m for m in self.auth_methods if m.id == method_id and m.button), None)
        if self.agent_state != "auth-required" or self._connection is None or method is None:
            return
        self.agent_state = "signing-in"
        self.signing_in = method
        self.since = time.time()
        self.error = None
        self._changed("status")
        self._sign_in = self._spawn(self._authenticate(self._connection, method), "sign-in")

    async def _authenticate(self, connection: AgentConnection, method: SignInMethod) -> None:
        try:
            await connection.authenticate(method.id)
        except RpcError as error:
            self.agent_state = "auth-required"
            self.error = f"Signing in with “{method.name}” failed: {error.text}"
            return
        except ConnectionClosed:
            return  # the exit watcher reports it
        finally:
            self.signing_in = None
            self._sign_in = None
            self._changed("status")
        self.agent_state = "starting"
        self.since = time.time()
        self._step("session/new")
        try:
            async with asyncio.timeout(self.spec.start_timeout):
                await self._new_session()
        except TimeoutError:
            await self._timed_out()
        except RpcError as error:
            self._fail(f"The agent refused to start a session: {error.text} (code {error.code})")
        except ConnectionClosed:
            pass

    def cancel_sign_in(self) -> None:
        """Give up waiting for ``authenticate``: the request is forgotten (a late answer is ignored) and the
        session asks for a sign-in again."""
        task = self._sign_in
        if self.agent_state != "signing-in" or task is None:
            return
        task.cancel()
        self._sign_in = None
        self.signing_in = None
        self.agent_state = "auth-required"
        self.error = "Sign-in cancelled."
        self._changed("status")

    def retry(self) -> None:
        """Stop the agent process and start a fresh one in this session (the thread stays)."""
        if self.can_retry:
            self.agent_state = "starting"
            self._spawn(self._restart(), "restart")

    async def _restart(self) -> None:
        connection, self._connection = self._connection, None  # its exit is expected: the watcher stays quiet
        self._acp_session_id = None
        self.error = self.auth_reason = None
        self.auth_methods = []
        self.since = time.time()
        self._step("its start")
        self.thread.add_notice("info", "Restarting the agent")
        if connection is not None:
            await connection.close()
        await self._start_agent()

    async def _watch_exit(self, connection: AgentConnection) -> None:
        code = await connection.process.wait()
        await asyncio.gather(connection.reader, return_exceptions=True)
        if self._closing or connection is not self._connection:
            return  # the session ended, or the agent was stopped to be restarted
        self.agent_state = "exited"
        self.permissions.settle()
        tail = self.stderr.tail(20)
        self.thread.add_notice("error", f"The agent exited (exit code {code})", tail)
        self._changed("status")

    def _fail(self, message: str) -> None:
        self.agent_state = "failed"
        self.error = message
        tail = self.stderr.tail(20)
        self.thread.add_notice("error", message, tail or "The agent wrote nothing on stderr.")
        self._changed("status")

    async def close(self) -> None:
        """End the session: stop the agent and everything running for it."""
        self._closing = True
        self.permissions.settle()
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

    def _spawn(self, coro: Awaitable[Any], name: str) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(coro)
        task.set_name(f"session-{self.id}-{name}")
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("session %s: task %s failed", self.id, task.get_name(), exc_info=task.exception())

    # -- the user's actions ------------------------------------------------------------------------

    def submit_prompt(self, text: str, nonce: str, uploads: Sequence[str] = (), mentions: Sequence[str] = ()) -> bool:
        """Send a prompt, or queue it while the agent is busy. A nonce already seen (a replayed send) changes nothing.

        ``uploads`` are ids of files the user attached; ``mentions`` workspace paths typed as ``@path``.
        """
        text = text.strip()
        if nonce in self._prompt_nonces or self.turn_state == "ended":
            return False
        if self.turn_state == "auth-required":
            # Not queued: a sign-in may never come. Said where the user looks, with the text to copy back.
            self._prompt_nonces.add(nonce)
            self.thread.add_notice("warning", "Not sent: sign in first (at the top of the page)", text)
            return False
        blocks = [upload_block(upload) for upload in self.uploads.take(list(uploads))]
        blocks += mention_blocks(self.workspace, mentions)
        if not text and not blocks:
            return False
        self._prompt_nonces.add(nonce)
        if self.ready and not self.turn_running and (self.queue_paused or not self.queue):
            self._start_turn(text, blocks)
        else:
            self.queue.add(text, blocks)
        return True

    def _start_turn(self, text: str, blocks: list[dict[str, Any]]) -> None:
        assert self._connection is not None and self._acp_session_id is not None
        prompt = prompt_blocks(text, blocks)
        self.thread.start_turn([content_block(block) for block in prompt])
        self.turn_running = True
        self._changed("status")
        self._spawn(self._run_turn(self._connection, self._acp_session_id, prompt), "turn")

    def send_queued(self, item_id: str | None = None) -> None:
        """Start the next queued prompt, or the one the user asked to send now, if the agent is free."""
        if not self.ready or self.turn_running or self._closing:
            return
        item: QueuedPrompt | None
        if item_id is None:
            item = None if self.queue_paused else self.queue.pop()
        else:
            item = next((i for i in self.queue if i.id == item_id), None)
            if item is not None:
                self.queue.remove(item_id)
        if item is not None:
            self._start_turn(item.text, item.blocks)

    async def _run_turn(self, connection: AgentConnection, session_id: str, prompt: list[dict[str, Any]]) -> None:
        try:
            result = await connection.prompt(session_id, prompt)
            reason = result.get("stopReason")
            stopped = self.cancelling or reason == "cancelled"
            if stopped:
                self.thread.stop_plan()
            if not self.thread.turn_replied and not self.cancelling:
                # claude-agent-acp, after a Stop, ends the next turn at once: say so rather than show nothing.
                detail = f"Stop reason: {reason}" if isinstance(reason, str) and reason != "end_turn" else ""
                self.thread.add_notice("warning", "The agent ended the turn without replying", detail)
            elif isinstance(reason, str) and reason != "end_turn":
                level, title = _STOP_NOTICES.get(reason, ("info", f"The turn ended: {reason}"))
                self.thread.add_notice(level, title)
        except RpcError as error:
            self.thread.add_notice("error", "The agent reported an error", f"{error.text} (code {error.code})")
        except ConnectionClosed:
            pass  # the exit watcher reports it
        finally:
            # A stop pauses what is queued until the user sends it ("Send now"), or until nothing is left.
            self.queue_paused = (self.queue_paused or self.cancelling) and bool(self.queue)
            self.turn_running = False
            self.cancelling = False
            self.permissions.settle()
            self.thread.end_turn()
            self._changed("status")
            self._changed("plan")
            self._changed("queue")
            self.send_queued()

    def cancel(self) -> None:
        """Stop: a sign-in in progress is given up; a turn is stopped (the agent is told, its open questions
        answered ``cancelled``, unfinished calls marked). Returns at once: the notice to the agent is sent in
        the background, so an agent that does not read its input cannot hold up the page."""
        if self.agent_state == "signing-in":
            self.cancel_sign_in()
            return
        if not self.turn_running or self.cancelling or self._connection is None or self._acp_session_id is None:
            return
        self.cancelling = True
        self.queue_paused = bool(self.queue)
        self._changed("status")
        self._changed("queue")
        self._spawn(self._connection.cancel(self._acp_session_id), "cancel")
        self.permissions.settle()
        self.thread.cancel_unfinished()

    def set_mode(self, mode_id: str) -> None:
        """Switch the session to one of the agent's modes (``session/set_mode``), in the background."""
        if self.ready and self.controls.mode(mode_id) is not None and mode_id != self.controls.current_mode:
            self._spawn(self._set_mode(mode_id), "set-mode")

    async def _set_mode(self, mode_id: str) -> None:
        assert self._connection is not None and self._acp_session_id is not None
        if await self._ask_change("the mode", self._connection.set_mode(self._acp_session_id, mode_id)) is not None:
            self.controls.set_current_mode(mode_id)

    def set_model(self, model_id: str) -> None:
        """Switch the agent's model (``session/set_model``, for agents that offer ``models``), in the background."""
        if self.ready and self.controls.model(model_id) is not None and model_id != self.controls.current_model:
            self._spawn(self._set_model(model_id), "set-model")

    async def _set_model(self, model_id: str) -> None:
        assert self._connection is not None and self._acp_session_id is not None
        if await self._ask_change("the model", self._connection.set_model(self._acp_session_id, model_id)) is not None:
            self.controls.set_current_model(model_id)

    def set_setting(self, setting_id: str, value: str) -> None:
        """Change one of the agent's settings (``session/set_config_option``) in the background; ``value`` as
        the page sent it."""
        setting, wire = self.controls.setting(setting_id), self.controls.choice(setting_id, value)
        if self.ready and setting is not None and wire is not None:
            assert self._connection is not None and self._acp_session_id is not None
            change = self._connection.set_config_option(self._acp_session_id, setting_id, wire)
            self._spawn(self._set_setting(f"“{setting.name}”", change), "set-setting")

    async def _set_setting(self, what: str, change: Awaitable[dict[str, Any]]) -> None:
        result = await self._ask_change(what, change)
        if result is not None and isinstance(result.get("configOptions"), list):
            self.controls.set_settings(settings(result["configOptions"]))

    async def _ask_change(self, what: str, change: Awaitable[dict[str, Any]]) -> dict[str, Any] | None:
        """The agent's answer to a change the user asked for, or None: a refusal shows as a notice and the
        selector goes back to the agent's value."""
        try:
            return await change
        except RpcError as error:
            self.thread.add_notice("error", f"The agent did not change {what}", f"{error.text} (code {error.code})")
            self.controls.refresh("controls")
        except ConnectionClosed:
            pass
        return None

    # -- the agent's messages (ClientHandler) ------------------------------------------------------

    def on_session_update(self, params: dict[str, Any]) -> None:
        # Types this client does not know stay, as sent, in the protocol log (which marks them).
        self._updates.apply(params.get("update"))

    def on_request_permission(self, params: dict[str, Any]) -> Awaitable[dict[str, Any]]:
        return self.permissions.ask(params, refuse=self.cancelling or self._closing)

    def answer_permission(self, request_id: str, option_id: str) -> None:
        self.permissions.answer(request_id, option_id)

    def on_traffic(self, direction: str, line: str, message: Any) -> None:
        self.protocol_log.record(direction, line, message)

    def on_oversized_message(self, limit: int) -> None:
        size = f"{limit // (1024 * 1024)} MiB" if limit >= 1024 * 1024 else f"{limit:,} bytes"
        self.thread.add_notice(
            "warning",
            f"The agent sent a message of more than {size}; it was dropped",
            "The limit is WEBCLIENT_MAX_LINE_MB. What the message said is lost; the agent may wait for an answer.",
        )

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
