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
import contextlib
from collections.abc import Awaitable, Sequence
from typing import Any, TypeVar

from webclient.acp.advisories import turn_usage
from webclient.acp.auth import sign_in_methods
from webclient.acp.client_methods import ClientMethods
from webclient.acp.connection import AgentConnection
from webclient.acp.controls import apply_session_result, settings
from webclient.acp.elicitation import CAPABILITIES as ELICITATION
from webclient.acp.elicitation import Elicitations
from webclient.acp.entity_cancel import cancel_entity, speaks_v2
from webclient.acp.jsonrpc import AuthRequired, ConnectionClosed, RpcError
from webclient.acp.listing import list_all
from webclient.acp.loaded_history import LoadedHistory
from webclient.acp.permissions import Permissions
from webclient.acp.process import AgentStartError, StderrLog
from webclient.acp.prompt import prompt_blocks
from webclient.acp.protocol_log import ProtocolLog
from webclient.acp.replay import ProtocolReplay
from webclient.acp.updates import SessionUpdates, content_block
from webclient.session.agent import (
    STARTING,
    AgentFailed,
    AgentGone,
    AgentHello,
    AgentHost,
    AgentRefused,
    AgentSession,
    Diagnosis,
    SignInRequired,
    StopReason,
)
from webclient.session.prompt_content import PromptBlock
from webclient.session.recorder import PROTOCOL
from webclient.session.sign_in import SignInMethod

T = TypeVar("T")

NOT_RESUMED = "The agent starts a new session, without the earlier conversation"

CLOSE_SECONDS = 1.0
"""How long ``session/close`` may take before the agent is stopped anyway."""

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
        self.elicitations = Elicitations(host.thread, host.changed)
        self.updates = SessionUpdates(host.thread, host.controls)
        self.client_methods = ClientMethods(host.workspace, host.terminals, host.events)
        self._connection: AgentConnection | None = None
        self._session_id: str | None = None
        self.known_session_id: str | None = None
        """The agent's id of the session it last opened (live or in the journal): what Resume reattaches to."""
        self._capabilities: dict[str, Any] = {}
        self._sign_in_methods: list[SignInMethod] = []
        self.cancelling = False
        """From a Stop until the turn ends: the agent's questions are answered ``cancelled`` at once."""
        self.loading_history = False
        """While ``session/load`` runs: the agent replays the conversation, which the thread already shows."""
        self.history = LoadedHistory()
        self.can_steer = self.can_sign_out = False
        self.hello: AgentHello | None = None
        """What the agent said when it last started (live, or in the journal)."""
        self._replay: ProtocolReplay | None = None
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
        capabilities = {**self.client_methods.capabilities(), **ELICITATION}
        return self.greeted(await _answer(connection.initialize(capabilities)))

    def greeted(self, result: dict[str, Any]) -> AgentHello:
        """What the agent's ``initialize`` answer says of it (live, or replayed from the journal)."""
        info = result.get("agentInfo")
        capabilities = result.get("agentCapabilities")
        self._capabilities = capabilities if isinstance(capabilities, dict) else {}
        meta = result.get("_meta")
        steering = meta.get("steering") if isinstance(meta, dict) else None
        self.can_steer = isinstance(steering, dict) and steering.get("supported") is True
        auth = self._capabilities.get("auth")
        self.can_sign_out = isinstance(auth, dict) and auth.get("logout") is not None
        offered = self._capabilities.get("promptCapabilities")
        self._sign_in_methods = sign_in_methods(result.get("authMethods"))
        self.hello = AgentHello(
            info=info if isinstance(info, dict) else {},
            prompt_capabilities=frozenset(
                name for name, on in (offered.items() if isinstance(offered, dict) else ()) if on is True
            ),
            sign_in_methods=self._sign_in_methods,
        )
        return self.hello

    async def open_session(self, resume: bool = False) -> None:
        """``session/new`` (https://agentclientprotocol.com/protocol/session-setup#creating-a-session); an
        ``auth_required`` error is a request to sign in when the agent offered a way. ``resume``: reattach to the
        session it had (`known_session_id`) if it can, else open a new one and say that it starts afresh."""
        connection = self._connected()
        if resume and self.known_session_id is not None:
            if await self._reattach(connection, self.known_session_id):
                return
        self.host.step("session/new")
        try:
            result = await _answer(connection.new_session(self.host.spec.cwd))
        except AgentRefused as error:
            if error.code == AuthRequired.CODE and self._sign_in_methods:
                raise SignInRequired(error.text) from None
            raise
        if not isinstance(result.get("sessionId"), str):
            raise AgentFailed("The agent's session/new answer has no sessionId.")
        self.opened({}, result)

    async def _reattach(self, connection: AgentConnection, session_id: str) -> bool:
        """``session/resume`` if the agent offers it, else ``session/load`` (its replay of the conversation is not
        shown again); False, with a notice, when it offers neither or refused."""
        session = self._capabilities.get("sessionCapabilities")
        if isinstance(session, dict) and session.get("resume") is not None:
            method = "session/resume"
        elif self._capabilities.get("loadSession") is True:
            method = "session/load"
        else:
            self.host.notice("warning", NOT_RESUMED, "The agent cannot resume or load a session.")
            return False
        self.host.step(method)
        self.loading_history, self.history = self.reloading(method), LoadedHistory()
        try:
            result = await _answer(connection.reattach(method, session_id, self.host.spec.cwd))
        except AgentRefused as error:
            self.host.notice("warning", NOT_RESUMED, f"The agent refused {method}: {error}")
            return False
        finally:
            self.loading_history = False
        self.opened({"sessionId": session_id}, result)
        if self.reloading(method):
            self.host.notice(*self.history.verdict(self.host.thread))
        else:
            self.host.notice("info", "The agent resumed its session", f"With {method}.")
        return True

    def _offers(self, capability: str) -> bool:
        """Whether the agent advertised ``sessionCapabilities.<capability>``."""
        session = self._capabilities.get("sessionCapabilities")
        return isinstance(session, dict) and session.get(capability) is not None

    async def set_title(self, title: str) -> None:
        if self._offers("title") and self._session_id is not None:
            connection, session_id = self._in_session()
            await _answer(connection.session_request("session/set_title", session_id, title=title))

    async def forget(self) -> None:
        if self._offers("delete") and self._session_id is not None:
            connection, session_id = self._in_session()
            await _answer(connection.session_request("session/delete", session_id))

    async def list_sessions(self) -> list[AgentSession] | None:
        """``session/list``, every page of it, when the agent offers it."""
        return await _answer(list_all(self._connected())) if self._offers("list") else None

    def reloading(self, method: str) -> bool:
        """Whether what the agent replays now is already shown: ``session/load`` of the conversation this thread
        holds (its history is shown when the user chose one of the agent's sessions to continue here)."""
        return method == "session/load" and self.host.thread.turn > 0

    def opened(self, params: dict[str, Any], result: dict[str, Any]) -> None:
        """A session opened (new, loaded or resumed; live, or replayed from the journal): its id and controls."""
        session_id = result.get("sessionId", params.get("sessionId"))
        if isinstance(session_id, str):
            self._session_id = self.known_session_id = session_id
        apply_session_result(self.host.controls, result)

    async def sign_in(self, method_id: str) -> None:
        await _answer(self._connected().authenticate(method_id))

    async def prompt(self, prompt: Sequence[PromptBlock]) -> StopReason | None:
        connection, session_id = self._in_session()
        result: dict[str, Any] = {}
        try:
            result = await _answer(connection.prompt(session_id, prompt_blocks(prompt)))
        finally:
            self.turn_ended(result)
        reason = result.get("stopReason")
        return reason if isinstance(reason, str) else None

    async def sign_out(self) -> None:
        """``logout`` (https://agentclientprotocol.com/protocol/initialization#logout)."""
        await _answer(self._connected().peer.request("logout", {}))

    async def steer(self, prompt: Sequence[PromptBlock]) -> None:
        """``_session/steering`` (claude-agent-acp, codex-acp: advertised as ``_meta.steering.supported``)."""
        connection, session_id = self._in_session()
        blocks = prompt_blocks(prompt)
        await _answer(connection.steer(session_id, blocks))
        self.steered({"prompt": blocks})

    def steered(self, params: dict[str, Any]) -> None:
        """The agent took a prompt into its running turn (live, or in the journal): the user's message shows it."""
        blocks = params.get("prompt")
        for block in blocks if isinstance(blocks, list) else []:
            self.host.thread.append_message("user-message", content_block(block))
        self.host.thread.end_turn()  # closes the message: the agent's next chunk starts one of its own

    def turn_ended(self, result: dict[str, Any] | None = None) -> None:
        """The answer to ``session/prompt`` came (live, or in the journal): questions still open are cancelled, and
        the tokens the turn used are shown if the answer says."""
        self.cancelling = False
        self.permissions.settle()
        self.elicitations.settle()
        turn_usage(self.host.thread, (result or {}).get("usage"))

    def cancel(self) -> Awaitable[None]:
        self.cancelling = True
        self.permissions.settle()
        self.elicitations.settle()
        return self._notify_cancel(self._connection, self._session_id)

    async def _notify_cancel(self, connection: AgentConnection | None, session_id: str | None) -> None:
        if connection is not None and session_id is not None:
            await _answer(connection.cancel(session_id))

    def answer_permission(self, request_id: str, option_id: str) -> None:
        self.permissions.answer(request_id, option_id)

    def answer_question(self, request_id: str, action: str, values: dict[str, Any] | None) -> None:
        self.elicitations.answer(request_id, action, values)

    @property
    def can_cancel_entities(self) -> bool:
        return speaks_v2(self._connection)

    async def cancel_entity(self, kind: str, entity_id: str) -> None:
        connection, session_id = self._in_session()
        if not speaks_v2(connection):
            return
        host = self.host
        await _answer(cancel_entity(connection.peer, host.thread, host.changed, session_id, kind, entity_id))

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
        """Answer open questions ``cancelled``, ``session/close`` if the agent offers it (for a second at most), close
        stdin, then terminate, then kill."""
        if self._offers("close") and self._connection is not None and self._session_id is not None:
            with contextlib.suppress(AgentRefused, AgentGone, TimeoutError):
                async with asyncio.timeout(CLOSE_SECONDS):
                    await _answer(self._connection.session_request("session/close", self._session_id))
        connection, self._connection = self._connection, None  # its exit is expected now: the watcher stays quiet
        self._session_id = None
        self._stopping = True
        self.permissions.settle()
        self.elicitations.settle()
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
        if self.loading_history:
            self.history.take(params.get("update"))
            return
        # Types this client does not know stay, as sent, in the protocol log (which marks them).
        self.updates.apply(params.get("update"))

    def on_notification(self, method: str, params: Any) -> None:
        if method == "elicitation/complete":
            self.elicitations.complete(params)

    def on_request_permission(self, params: dict[str, Any]) -> Awaitable[dict[str, Any]]:
        return self.permissions.ask(params, refuse=self.cancelling or self._stopping)

    def on_client_request(self, method: str, params: dict[str, Any]) -> Awaitable[Any] | None:
        if method == "elicitation/create":
            return self.elicitations.ask(params, refuse=self.cancelling or self._stopping)
        handler = self.client_methods.handler(method)
        return handler(params) if handler is not None else None

    def on_traffic(self, direction: str, line: str, message: Any) -> None:
        self.protocol_log.record(direction, line, message)
        self.host.recorder.record(PROTOCOL, direction, line)

    def replay(self, direction: str, line: str) -> None:
        if self._replay is None:
            self._replay = ProtocolReplay(self)
        self._replay.line(direction, line)

    def on_oversized_message(self, limit: int) -> None:
        size = f"{limit // (1024 * 1024)} MiB" if limit >= 1024 * 1024 else f"{limit:,} bytes"
        self.host.notice(
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
