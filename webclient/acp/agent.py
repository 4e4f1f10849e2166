"""One class: AcpAgent, the ACP adapter: a session's agent as an ACP agent process (`session.agent.AgentDriver`).

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
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, cast

from webclient.acp import auth_status, permission_request, wire, wire_v2
from webclient.acp.advisories import turn_usage
from webclient.acp.auth import sign_in_methods
from webclient.acp.client_methods import ClientMethods
from webclient.acp.connection import (
    BASE_CAPABILITIES,
    STDERR_LINES,
    AgentConnection,
    diagnosis,
    oversized_notice,
)
from webclient.acp.controls import apply_session_result, settings
from webclient.acp.elicitation import CAPABILITIES as ELICITATION
from webclient.acp.elicitation import Elicitations
from webclient.acp.errors import answer, gone
from webclient.acp.jsonrpc import AuthRequired, RequestCancelled
from webclient.acp.loaded_history import LoadedHistory
from webclient.acp.mcp_wire import offered, redacted
from webclient.acp.process import AgentStartError, StderrLog
from webclient.acp.prompt import prompt_blocks
from webclient.acp.protocol_log import ProtocolLog
from webclient.acp.replay import ProtocolReplay
from webclient.acp.subagents import CAPABILITIES as SUBAGENTS
from webclient.acp.subagents import SubagentRouter
from webclient.acp.updates import SUBAGENT_UPDATES, SessionUpdates, content_block
from webclient.acp.v2_turn import ECHOES, StateUpdate, TurnFailed, TurnLifecycle, stop_reason
from webclient.acp.versions import DIALECTS, Dialect, Greeting, dialect, initialize, served_by_v1
from webclient.acp.wire_values import items, mapping, string
from webclient.session.agent import (
    STARTING,
    AgentError,
    AgentFailed,
    AgentGone,
    AgentHello,
    AgentHost,
    AgentRefused,
    AgentSession,
    AuthenticationRequired,
    Diagnosis,
    StopReason,
)
from webclient.session.agent_auth import AuthMethod, AuthStatus
from webclient.session.attribution import record_action
from webclient.session.prompt_content import PromptBlock
from webclient.session.recorder import PROTOCOL
from webclient.viewmodel.events import Change, Region
from webclient.viewmodel.permission_questions import PermissionQuestions

InitializeResponse = wire.InitializeResponse | wire_v2.V2InitializeResponse
NewSessionResponse = wire.NewSessionResponse | wire_v2.V2NewSessionResponse

NOT_RESUMED = "The agent starts a new session, without the earlier conversation"

CLOSE_SECONDS = 1.0
"""How long ``session/close`` may take before the agent is stopped anyway."""

MAX_LISTED = 1000
"""Of an agent's own sessions, at most this many are listed."""


class AcpAgent:
    """One session's ACP agent: `AgentDriver` for the session, `ClientHandler` for the connection.

    The protocol log and the stderr log last as long as the session, across Retry's fresh processes.
    """

    def __init__(self, host: AgentHost) -> None:
        self.host = host
        self.stderr = StderrLog()
        self.protocol_log = ProtocolLog()
        self.questions = PermissionQuestions(host.thread, host.changed, host.asked)
        self.answer_permission = self.questions.answer  # the person's answer goes straight to the question it settles
        self.elicitations = Elicitations(host.thread, host.changed)
        self.updates = SessionUpdates(host.thread, host.controls)
        self.subagents = SubagentRouter(host.subagents, self.protocol_log.mark_unrouted)
        self.client_methods = ClientMethods(host.workspace, host.terminals, host.events, host.spec.env)
        self._connection: AgentConnection | None = None
        self._session_id: str | None = None
        self.known_session_id: str | None = None
        """The agent's id of the session it last opened (live or in the journal): what Resume reattaches to."""
        self.dialect: Dialect = DIALECTS[1]  # the version initialize settled (webclient.acp.versions)
        self.greeting: Greeting = self.dialect.greeting({})
        self.turns = TurnLifecycle()
        self._sign_in_methods: list[AuthMethod] = []
        self.cancelling = False
        """From a Stop until the turn ends: the agent's questions are answered ``cancelled`` at once."""
        self.loading_history = False
        """While ``session/load`` runs: the agent replays the conversation, which the thread already shows."""
        self.history = LoadedHistory()
        self.can_steer = self.can_sign_out = False
        self.hello: AgentHello | None = None
        """What the agent said when it last started (live, or in the journal)."""
        self.auth_status: AuthStatus | None = None
        """Whether it is signed in, and as whom, as it last said (`webclient.acp.auth_status`); None: not said."""
        self._replay: ProtocolReplay | None = None
        self._stopping = False
        self._exit_watch: asyncio.Task[None] | None = None
        self._mcp_secrets: set[str] = set()
        """The secrets filled into the MCP servers last sent: never on record."""

    # -- the session's calls (AgentDriver) ---------------------------------------------------------

    async def start(self) -> AgentHello:
        """Spawn the agent and ``initialize`` it (https://agentclientprotocol.com/protocol/initialization) in the
        version its settings ask. A v1 answer to a v2 ``initialize`` starts the agent again with a v1 one when this
        session serves files or terminals, which a v2 ``initialize`` cannot offer (a v1 agent would do without)."""
        asked, served = self.host.spec.entry.acp_protocol, self.client_methods.capabilities()
        capabilities = {**served, **ELICITATION, **SUBAGENTS, **BASE_CAPABILITIES}
        result = await answer(initialize(await self._spawn(), asked, capabilities))
        if asked > 1 and dialect(asked, result.get("protocolVersion")).version == 1 and served_by_v1(served):
            await self.close()  # nothing was opened: only the process stops
            asked, result = 1, await answer(initialize(await self._spawn(), 1, capabilities))
        hello = self.greeted(result, asked)
        if auth_status.advertised(self.greeting.capabilities):
            self.auth_status_said(await auth_status.ask(self._connected().peer))
        return hello

    async def _spawn(self) -> AgentConnection:
        spec = self.host.spec
        self._stopping = False
        self.host.step(STARTING)
        try:
            connection = await AgentConnection.spawn(
                spec.entry.argv,
                cwd=spec.cwd,
                env=spec.agent_env,
                handler=self,
                stderr_log=self.stderr,
                max_line_bytes=spec.max_line_bytes,
                sandbox=spec.sandbox,
            )
        except AgentStartError as error:
            raise AgentFailed(f"The agent could not be started: {error}") from None
        self._connection = connection
        self._exit_watch = asyncio.create_task(self._watch_exit(connection), name=f"acp-exit-{connection.process.pid}")
        self.host.step("initialize")
        return connection

    def greeted(self, result: dict[str, Any], asked: int = 1) -> AgentHello:
        """What the agent's ``initialize`` answer says of it (live, or replayed from the journal), ``asked`` in the
        version the client asked for: the version both speak from now on, and what the agent offers in it."""
        said = cast(InitializeResponse, result)
        self.dialect = dialect(asked, said.get("protocolVersion"))
        self.greeting = self.dialect.greeting(result)
        steering = mapping(said.get("_meta")).get("steering")
        self.can_steer = mapping(steering).get("supported") is True
        self.can_sign_out = self.greeting.can_sign_out
        self._sign_in_methods = sign_in_methods(self.greeting.auth_methods)
        self.auth_status = None  # a new agent process: it says again
        self.hello = AgentHello(
            info=self.greeting.info,
            prompt_capabilities=self.greeting.prompt_capabilities,
            auth_methods=self._sign_in_methods,
            lists_sessions="list" in self.greeting.session_methods,
            reattaches=self.dialect.reattach(self.greeting) is not None,
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
            result = await answer(connection.new_session(self.host.spec.cwd, self._mcp_servers()))
        except AgentRefused as error:
            if error.code == AuthRequired.CODE and self._sign_in_methods:
                raise AuthenticationRequired(error.text) from None
            raise
        if string(cast(NewSessionResponse, result).get("sessionId")) is None:
            raise AgentFailed("The agent's session/new answer has no sessionId.")
        self.opened({}, result)

    async def _reattach(self, connection: AgentConnection, session_id: str) -> bool:
        """``session/resume`` if the agent offers it, else ``session/load`` (v2: resume with ``replayFrom``; a replay
        of the conversation is not shown again); False, with a notice, when it offers neither or refused."""
        how = self.dialect.reattach(self.greeting)
        if how is None:
            self.host.notice("warning", NOT_RESUMED, "The agent cannot resume or load a session.")
            return False
        method, extra = how
        self.host.step(method)
        self.loading_history, self.history = self.reloading(method, extra), LoadedHistory()
        try:
            servers = self._mcp_servers()
            result = await answer(connection.reattach(method, session_id, self.host.spec.cwd, servers, **extra))
        except AgentRefused as error:
            self.host.notice("warning", NOT_RESUMED, f"The agent refused {method}: {error}")
            return False
        finally:
            self.loading_history = False
        self.opened({"sessionId": session_id}, result)
        if self.reloading(method, extra):
            self.host.notice(*self.history.verdict(self.host.thread, method))
        else:
            self.host.notice("info", "The agent resumed its session", f"With {method}.")
        return True

    def _mcp_servers(self) -> list[dict[str, Any]]:
        """The session's MCP servers as this agent takes them, secrets filled in now; those left out are said on the
        thread and put on record (a change only), as the header lists them (`webclient.session.mcp_servers`)."""
        mcp = self.host.spec.mcp
        carried, left_out, self._mcp_secrets = offered(self.greeting, mcp.servers, self.host.spec.owner_env)
        if left_out != mcp.left_out:
            mcp.left_out = left_out
            record_action(self.host.recorder, "mcp_servers", None, **mcp.public())
            self.host.changed(Region.STATUS)
        if left_out:
            why = "; ".join(f"{name}: {reason}" for name, reason in left_out.items())
            self.host.notice("warning", "Some MCP servers were not given to the agent", why)
        return carried

    def reloading(self, method: str, params: dict[str, Any]) -> bool:
        """Whether what the agent replays now is already shown: ``session/load`` (v2: ``replayFrom``) of the
        conversation this thread holds (its history is shown when the user chose an agent's session to continue)."""
        return self.dialect.replays(method, params) and self.host.thread.turn > 0

    def opened(self, params: dict[str, Any], result: dict[str, Any]) -> None:
        """A session opened (new, loaded or resumed; live, or replayed from the journal): its id and controls."""
        session_id = string(result.get("sessionId", params.get("sessionId")))
        if session_id is not None:
            self._session_id = self.known_session_id = session_id
        apply_session_result(self.host.controls, result)

    async def prompt(self, prompt: Sequence[PromptBlock]) -> StopReason | None:
        try:
            return await self._prompt(prompt)
        except AgentRefused as error:  # claude-agent-acp checks the account at the first prompt, not at session/new
            if error.code == AuthRequired.CODE and self._sign_in_methods:
                raise AuthenticationRequired(error.text) from None
            raise

    async def _prompt(self, prompt: Sequence[PromptBlock]) -> StopReason | None:
        connection, session_id = self._in_session()
        if not self.dialect.prompt_ends_turn:
            return await self._prompt_v2(connection, session_id, prompt_blocks(prompt))
        result: dict[str, Any] = {}
        try:
            result = await answer(connection.prompt(session_id, prompt_blocks(prompt)))
        finally:
            self.turn_ended(result)
        return string(result.get("stopReason"))

    async def _prompt_v2(
        self, connection: AgentConnection, session_id: str, blocks: list[wire.ContentBlock]
    ) -> StopReason | None:
        """A v2 turn: the prompt's answer says it was taken in, the idle ``state_update`` ends the turn
        (`webclient.acp.v2_turn`); a refused prompt ends it at once, the ``error`` stop reason with its error."""
        try:
            idle = await self.turns.run(lambda: answer(connection.prompt(session_id, blocks)), connection.reader)
            return stop_reason(idle) if idle is not None else gone()
        except TurnFailed as failed:
            raise AgentRefused(failed.text, failed.code) from None
        except AgentError as error:
            stopped = self.cancelling and isinstance(error, AgentRefused) and error.code == RequestCancelled.CODE
            self.turn_ended()
            if stopped:
                return "cancelled"  # stopped before the agent took the prompt in (claude-agent-acp's queue)
            raise

    async def steer(self, prompt: Sequence[PromptBlock]) -> None:
        """``_session/steering`` (claude-agent-acp, codex-acp: advertised as ``_meta.steering.supported``)."""
        connection, session_id = self._in_session()
        blocks = prompt_blocks(prompt)
        await answer(connection.steer(session_id, blocks))
        self.steered({"prompt": blocks})

    def steered(self, params: dict[str, Any]) -> None:
        """The agent took a prompt into its running turn (live, or in the journal): the user's message shows it."""
        for block in items(params.get("prompt")):
            self.host.thread.append_message("user-message", content_block(block))
        self.host.thread.end_turn()  # closes the message: the agent's next chunk starts one of its own

    def turn_ended(self, result: Mapping[str, object] | None = None) -> None:
        """The answer to ``session/prompt`` came (live, or in the journal): questions still open are cancelled, and
        the tokens the turn used are shown if the answer says."""
        self.cancelling = False
        self.questions.settle()
        self.elicitations.settle()
        turn_usage(self.host.thread, (result or {}).get("usage"))

    def cancel(self) -> Awaitable[None]:
        self.cancelling = True
        self.questions.settle()
        self.elicitations.settle()
        return self._notify_cancel(self._connection, self._session_id)

    def cancel_subagent(self, session_id: str) -> Awaitable[None]:
        """Stop a child session's work (``session/cancel`` with its id), when it runs and the agent allows it."""
        stoppable = self.subagents.stop(session_id)
        return self._notify_cancel(self._connection if stoppable else None, session_id)

    async def _notify_cancel(self, connection: AgentConnection | None, session_id: str | None) -> None:
        if connection is not None and session_id is not None:
            await answer(connection.cancel(session_id))

    def answer_question(self, request_id: str, action: str, values: dict[str, Any] | None) -> None:
        self.elicitations.answer(request_id, action, values)

    @property
    def can_cancel_entities(self) -> bool:
        return self._connection is not None and self.dialect.version >= 2  # tool_call/cancel is a v2 method

    async def cancel_entity(self, kind: str, entity_id: str) -> None:
        """Per-entity cancel (the v2 draft, schema ``CancelToolCallRequest``, ``CancelTerminalRequest``):
        ``tool_call/cancel`` or ``terminal/cancel``, sent only for what advertises ``capabilities.cancel`` now and
        was not asked already. The answer means "accepted": the card says "Stopping…" until the agent reports a new
        status (a tool call) or an exit (a terminal); an error answer takes the "Stopping…" back, and is raised."""
        connection, session_id = self._in_session()
        if not self.can_cancel_entities:
            return
        thread, changed = self.host.thread, self.host.changed
        undo: Callable[[], None]
        if kind == "tool_call":
            call = thread.tool_call(entity_id)
            if call is None or not call.can_cancel or call.stopping:
                return
            call.stop_asked_in = call.effective_status
            change: Change = call.change
            undo = lambda: setattr(call, "stop_asked_in", None)  # noqa: E731
            params: dict[str, Any] = {"sessionId": session_id, "toolCallId": entity_id}
        elif kind == "terminal":
            terminal = thread.terminals.get(entity_id)
            if terminal is None or terminal.stop_asked or not thread.terminals.ask_stop(entity_id):
                return
            change = terminal.change
            undo = lambda: setattr(terminal, "stop_asked", False)  # noqa: E731
            params = {"sessionId": session_id, "terminalId": entity_id}
        else:
            return
        changed(change)
        try:
            await answer(connection.peer.request(f"{kind}/cancel", params))
        except AgentRefused:
            undo()
            changed(change)
            raise

    # -- requests that only ask and show the answer ------------------------------------------------

    def _offers(self, capability: str) -> bool:
        """Whether the agent offers ``session/<capability>`` (v1: ``sessionCapabilities``; v2: the baseline too)."""
        return capability in self.greeting.session_methods

    @property
    def can_fork(self) -> bool:
        return self._offers("fork") and self._session_id is not None and self._connection is not None

    async def fork(self) -> None:
        """``session/fork`` (unstable: https://agentclientprotocol.com/rfds/session-fork); the fork is the session
        from now on, and what a Resume reattaches to."""
        connection, session_id = self._in_session()
        result = await answer(connection.fork_session(session_id, self.host.spec.cwd))
        if string(result.get("sessionId")) is None:
            raise AgentRefused("The agent's session/fork answer has no sessionId.")
        self.opened({}, result)

    async def set_title(self, title: str) -> None:
        if self._offers("title") and self._session_id is not None:
            connection, session_id = self._in_session()
            await answer(connection.session_request("session/set_title", session_id, title=title))

    async def forget(self) -> None:
        if self._offers("delete") and self._session_id is not None:
            connection, session_id = self._in_session()
            await answer(connection.session_request("session/delete", session_id))

    async def list_sessions(self) -> list[AgentSession] | None:
        """``session/list`` (https://agentclientprotocol.com/protocol/session-setup#listing-sessions), every page of
        it up to `MAX_LISTED` sessions, when the agent offers it; a ``SessionInfo`` without its id or folder is left
        out."""
        if not self._offers("list"):
            return None
        connection, cursor, listed = self._connected(), None, list[AgentSession]()
        while len(listed) < MAX_LISTED:
            result = await answer(connection.list_sessions(cursor))
            listed += filter(None, map(_agent_session, items(result.get("sessions"))))
            next_cursor = string(result.get("nextCursor"))
            if not next_cursor:
                break
            cursor = next_cursor
        return listed[:MAX_LISTED]

    async def sign_in(self, method_id: str) -> None:
        await answer(self._connected().authenticate(method_id, self.dialect.sign_in_method))

    async def sign_out(self) -> None:
        """``logout`` (https://agentclientprotocol.com/protocol/initialization#logout; v2: ``auth/logout``)."""
        await answer(self._connected().peer.request(self.dialect.sign_out_method, {}))

    async def set_mode(self, mode_id: str) -> None:
        connection, session_id = self._in_session()
        await answer(connection.set_mode(session_id, mode_id))
        self.host.controls.set_current_mode(mode_id)

    async def set_model(self, model_id: str) -> None:
        connection, session_id = self._in_session()
        await answer(connection.set_model(session_id, model_id))
        self.host.controls.set_current_model(model_id)

    async def set_setting(self, setting_id: str, value: str | bool) -> None:
        connection, session_id = self._in_session()
        result = await answer(connection.set_config_option(session_id, setting_id, self.dialect.config_value(value)))
        options = result.get("configOptions")
        if isinstance(options, list):  # the agent's complete settings
            self.host.controls.set_settings(settings(options))

    def diagnose(self) -> Diagnosis:
        return diagnosis(self.stderr, self._connection.peer.stray_responses if self._connection is not None else 0)

    async def close(self) -> None:
        """Answer open questions ``cancelled``, ``session/close`` if the agent offers it (for a second at most), close
        stdin, then terminate, then kill."""
        if self._offers("close") and self._connection is not None and self._session_id is not None:
            with contextlib.suppress(AgentRefused, AgentGone, TimeoutError):
                async with asyncio.timeout(CLOSE_SECONDS):
                    await answer(self._connection.session_request("session/close", self._session_id))
        connection, self._connection = self._connection, None  # its exit is expected now: the watcher stays quiet
        self._session_id = None
        self._stopping = True
        self.questions.settle()
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
        self.questions.settle()
        self.host.gone(f"The agent exited (exit code {code})", self.stderr.tail(STDERR_LINES))

    # -- the agent's messages (ClientHandler) ------------------------------------------------------

    def on_notification(self, method: str, params: Any) -> None:
        if method == "session/update":
            if type(params) is dict:
                self.on_session_update(params)
        elif method == "$/cancel_request":
            if self._connection is not None:
                self._connection.peer.cancel_incoming(params)  # the agent withdrew a question
        elif method == "elicitation/complete":
            self.elicitations.complete(params)
        elif method in auth_status.NOTIFICATIONS:
            self.auth_status_said(params)
        # Unknown notifications (``_``-extensions among them) are ignored, as the spec asks.

    def on_session_update(self, params: dict[str, Any]) -> None:
        """One ``session/update`` (live, or in the journal): the session's own goes to its table of folds
        (`webclient.acp.updates`), a child's to its thread; the prompt's echo and the replay of a loaded conversation
        are not shown again. A streamed chunk of the session's own passes no other module."""
        update, main = params.get("update"), self._session_id or self.known_session_id
        if self.loading_history:  # the conversation shown already (its subagents too): only compared with it
            if params.get("sessionId") in (main, None):
                self.history.take(update)
            return
        if type(update) is not dict:
            return
        kind = update.get("sessionUpdate")
        # Routed unless it is plainly the session's own: another session's id, a subagent's type, or claude's _meta
        # mark of a subagent's update sent on the parent (`webclient.acp.subagents.SubagentRouter.route`).
        if (main is None or params.get("sessionId") != main or kind in SUBAGENT_UPDATES or "_meta" in update) and (
            self.subagents.route(params, main)
        ):
            return  # a child's, or of a session this client does not know
        if kind in ECHOES and self.turns.echoes(update):
            return  # the prompt this client sent, shown already
        if kind == "state_update":
            state = cast(StateUpdate, update)
            if self.turns.state_changed(state) and not self.dialect.prompt_ends_turn:  # v1: the answer ends it
                self.turn_ended(state)
        # Types this client does not know stay, as sent, in the protocol log (which marks them).
        self.updates.apply(update)

    def auth_status_said(self, said: Any) -> None:
        """The answer to ``auth/status`` or a notification of it (live, or in the journal): the header shows it."""
        self.auth_status = auth_status.read(said) or self.auth_status
        self.host.changed(Region.STATUS)

    def on_request_permission(self, params: dict[str, Any]) -> Awaitable[permission_request.Outcome]:
        thread = self.subagents.permission_thread(params)  # a child's question: on its thread
        return permission_request.ask(self.questions, params, refuse=self.cancelling or self._stopping, thread=thread)

    def on_client_request(self, method: str, params: dict[str, Any]) -> Awaitable[Any] | None:
        if method == "elicitation/create":
            asked_by = self.subagents.asked_by(params)  # a child's question: labelled with it
            return self.elicitations.ask(params, refuse=self.cancelling or self._stopping, asked_by=asked_by)
        handler = self.client_methods.handler(method)
        return handler(params) if handler is not None else None

    def on_traffic(self, direction: str, line: str, message: Any) -> None:
        if direction == "out" and self.elicitations.secrets:
            line = self.elicitations.redact(line)  # what goes on record; the agent got the line as it was
        if direction == "out" and (kept := redacted(message, self._mcp_secrets)) is not None:
            line = kept  # the MCP servers' variables, headers and secrets: the agent's only
        self.protocol_log.record(direction, line, message)
        self.host.recorder.record(PROTOCOL, direction, line)

    def replay(self, direction: str, line: str) -> None:
        if self._replay is None:
            self._replay = ProtocolReplay(self)
        self._replay.line(direction, line)

    def on_oversized_message(self, limit: int) -> None:
        self.host.notice("warning", *oversized_notice(limit))


def _agent_session(info: Any) -> AgentSession | None:
    """A ``SessionInfo``; None when it lacks its id or folder."""
    said = mapping(info)
    session_id, cwd = string(said.get("sessionId")), string(said.get("cwd"))
    if session_id is None or cwd is None:
        return None
    return AgentSession(id=session_id, cwd=cwd, title=string(said.get("title")), updated=string(said.get("updatedAt")))
