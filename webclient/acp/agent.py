"""The ACP adapter: a session's agent as an ACP agent process (`webclient.session.agent.AgentDriver`).

Everything ACP of a session lives here: the process and its JSON-RPC connection, the ACP session id, what
``initialize`` said, the sign-in error code, the agent's messages (``session/update`` into the thread and
controls, ``session/request_permission`` as questions on the thread, ``fs/*`` and ``terminal/*`` served in the
workspace), and the record of every line (the protocol log, the agent's stderr). Errors leave as the session's
own (`AgentRefused`, `AgentGone`, ...), never as `RpcError` or `ConnectionClosed`.
Spec: https://agentclientprotocol.com/protocol/overview
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Sequence
from typing import Any, TypeVar

from webclient.acp.auth import sign_in_methods
from webclient.acp.client_methods import ClientMethods
from webclient.acp.connection import AgentConnection
from webclient.acp.controls import apply_session_result, settings
from webclient.acp.jsonrpc import AuthRequired, ConnectionClosed, RpcError
from webclient.acp.permissions import Permissions
from webclient.acp.process import AgentStartError, StderrLog
from webclient.acp.prompt import prompt_blocks
from webclient.acp.protocol_log import ProtocolLog
from webclient.acp.updates import SessionUpdates
from webclient.session.agent import (
    STARTING,
    AgentFailed,
    AgentGone,
    AgentHello,
    AgentHost,
    AgentRefused,
    Diagnosis,
    SignInRequired,
    StopReason,
)
from webclient.session.prompt_content import PromptBlock
from webclient.session.recorder import PROTOCOL
from webclient.session.sign_in import SignInMethod

T = TypeVar("T")

STDERR_LINES = 20
"""Lines of the agent's stderr shown under a notice that it failed or exited."""


class AcpAgent:
    """One session's ACP agent: `AgentDriver` for the session, `ClientHandler` for the connection.

    The protocol log and the stderr log last as long as the session, across Retry's fresh processes.
    """

    def __init__(self, host: AgentHost) -> None:
        self.host = host
        self.stderr = StderrLog()
        self.protocol_log = ProtocolLog()
        self.permissions = Permissions(host.thread, host.changed)
        self.updates = SessionUpdates(host.thread, host.controls)
        self.client_methods = ClientMethods(host.workspace, host.terminals, host.events)
        self._connection: AgentConnection | None = None
        self._session_id: str | None = None
        self._sign_in_methods: list[SignInMethod] = []
        self._cancelling = False
        """From a Stop until the turn ends: the agent's questions are answered ``cancelled`` at once."""
        self._stopping = False
        self._exit_watch: asyncio.Task[None] | None = None

    # -- the session's calls (AgentDriver) ---------------------------------------------------------

    async def start(self) -> AgentHello:
        """Spawn the agent and ``initialize`` it (https://agentclientprotocol.com/protocol/initialization)."""
        spec = self.host.spec
        self._stopping = False
        self.host.step(STARTING)
        try:
            connection = await AgentConnection.spawn(
                spec.argv,
                cwd=spec.cwd,
                env=spec.env,
                handler=self,
                stderr_log=self.stderr,
                max_line_bytes=spec.max_line_bytes,
            )
        except AgentStartError as error:
            raise AgentFailed(f"The agent could not be started: {error}") from None
        self._connection = connection
        self._exit_watch = asyncio.create_task(self._watch_exit(connection), name=f"acp-exit-{connection.process.pid}")
        self.host.step("initialize")
        result = await _answer(connection.initialize(self.client_methods.capabilities()))
        info = result.get("agentInfo")
        capabilities = result.get("agentCapabilities")
        offered = capabilities.get("promptCapabilities") if isinstance(capabilities, dict) else None
        self._sign_in_methods = sign_in_methods(result.get("authMethods"))
        return AgentHello(
            info=info if isinstance(info, dict) else {},
            prompt_capabilities=frozenset(
                name for name, on in (offered.items() if isinstance(offered, dict) else ()) if on is True
            ),
            sign_in_methods=self._sign_in_methods,
        )

    async def open_session(self) -> None:
        """``session/new`` (https://agentclientprotocol.com/protocol/session-setup#creating-a-session); an
        ``auth_required`` error is a request to sign in when the agent offered a way."""
        connection = self._connected()
        self.host.step("session/new")
        try:
            result = await _answer(connection.new_session(self.host.spec.cwd))
        except AgentRefused as error:
            if error.code == AuthRequired.CODE and self._sign_in_methods:
                raise SignInRequired(error.text) from None
            raise
        session_id = result.get("sessionId")
        if not isinstance(session_id, str):
            raise AgentFailed("The agent's session/new answer has no sessionId.")
        self._session_id = session_id
        apply_session_result(self.host.controls, result)

    async def sign_in(self, method_id: str) -> None:
        await _answer(self._connected().authenticate(method_id))

    async def prompt(self, prompt: Sequence[PromptBlock]) -> StopReason | None:
        connection, session_id = self._in_session()
        try:
            result = await _answer(connection.prompt(session_id, prompt_blocks(prompt)))
        finally:
            self._cancelling = False
            self.permissions.settle()
        reason = result.get("stopReason")
        return reason if isinstance(reason, str) else None

    def cancel(self) -> Awaitable[None]:
        self._cancelling = True
        self.permissions.settle()
        return self._notify_cancel(self._connection, self._session_id)

    async def _notify_cancel(self, connection: AgentConnection | None, session_id: str | None) -> None:
        if connection is not None and session_id is not None:
            await _answer(connection.cancel(session_id))

    def answer_permission(self, request_id: str, option_id: str) -> None:
        self.permissions.answer(request_id, option_id)

    async def set_mode(self, mode_id: str) -> None:
        connection, session_id = self._in_session()
        await _answer(connection.set_mode(session_id, mode_id))
        self.host.controls.set_current_mode(mode_id)

    async def set_model(self, model_id: str) -> None:
        connection, session_id = self._in_session()
        await _answer(connection.set_model(session_id, model_id))
        self.host.controls.set_current_model(model_id)

    async def set_setting(self, setting_id: str, value: str | bool) -> None:
        connection, session_id = self._in_session()
        result = await _answer(connection.set_config_option(session_id, setting_id, value))
        if isinstance(result.get("configOptions"), list):  # the agent's complete settings
            self.host.controls.set_settings(settings(result["configOptions"]))

    def diagnose(self) -> Diagnosis:
        stray = self._connection.peer.stray_responses if self._connection is not None else 0
        return Diagnosis(
            detail=self.stderr.tail(STDERR_LINES) or "The agent wrote nothing on stderr.",
            unanswered=f"{stray} answer{'s' if stray > 1 else ''} came with an id we never sent" if stray else None,
        )

    async def close(self) -> None:
        """Answer open questions ``cancelled``, close stdin, then terminate, then kill."""
        connection, self._connection = self._connection, None  # its exit is expected now: the watcher stays quiet
        self._session_id = None
        self._stopping = True
        self.permissions.settle()
        if connection is not None:
            await connection.close()
        if self._exit_watch is not None:
            await asyncio.gather(self._exit_watch, return_exceptions=True)

    def _connected(self) -> AgentConnection:
        if self._connection is None:
            raise AgentGone
        return self._connection

    def _in_session(self) -> tuple[AgentConnection, str]:
        if self._session_id is None:
            raise AgentGone
        return self._connected(), self._session_id

    async def _watch_exit(self, connection: AgentConnection) -> None:
        code = await connection.process.wait()
        await asyncio.gather(connection.reader, return_exceptions=True)
        if connection is not self._connection:
            return  # stopped on purpose
        self.permissions.settle()
        self.host.gone(f"The agent exited (exit code {code})", self.stderr.tail(STDERR_LINES))

    # -- the agent's messages (ClientHandler) ------------------------------------------------------

    def on_session_update(self, params: dict[str, Any]) -> None:
        # Types this client does not know stay, as sent, in the protocol log (which marks them).
        self.updates.apply(params.get("update"))

    def on_request_permission(self, params: dict[str, Any]) -> Awaitable[dict[str, Any]]:
        return self.permissions.ask(params, refuse=self._cancelling or self._stopping)

    def on_client_request(self, method: str, params: dict[str, Any]) -> Awaitable[Any] | None:
        handler = self.client_methods.handler(method)
        return handler(params) if handler is not None else None

    def on_traffic(self, direction: str, line: str, message: Any) -> None:
        self.protocol_log.record(direction, line, message)
        self.host.recorder.record(PROTOCOL, direction, line)

    def on_oversized_message(self, limit: int) -> None:
        size = f"{limit // (1024 * 1024)} MiB" if limit >= 1024 * 1024 else f"{limit:,} bytes"
        self.host.thread.add_notice(
            "warning",
            f"The agent sent a message of more than {size}; it was dropped",
            "The limit is WEBCLIENT_MAX_LINE_MB. What the message said is lost; the agent may wait for an answer.",
        )


async def _answer(request: Awaitable[T]) -> T:
    """The agent's answer to a request, its error as the session's own."""
    try:
        return await request
    except RpcError as error:
        raise AgentRefused(error.text, error.code) from None
    except ConnectionClosed:
        raise AgentGone from None
