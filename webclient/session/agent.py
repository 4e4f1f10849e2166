"""The seam between a session and the protocol that reaches its agent.

A `Session` drives its agent only through `AgentDriver`, which a protocol adapter implements:
`webclient.acp.agent.AcpAgent` for ACP over a subprocess's stdio today, an adapter for AAP (remote agents over
HTTP and server-sent events) next. The adapter is made by an `AgentFactory` from the `AgentHost` the session
hands it, and shows what the agent does through the host's view-model objects (thread, controls, terminals).

Everything crosses here, each way through one door:

* session → agent: the methods of `AgentDriver`. Each answers with a neutral value (`AgentHello`, a stop
  reason) or one of the errors below, never a protocol's own (no JSON-RPC error, no HTTP status).
* agent → session: what the adapter does to the `AgentHost`: its view-model objects (which tell the session's
  watchers what changed), ``step`` while starting, ``gone`` when the agent ended on its own.

The session's journal (`webclient.session.recorder.Recorder`, a store's or a no-op) is on the host too: the adapter
records there every protocol message both ways as it went over the wire; the session records the user's actions
and the workspace's events itself.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from webclient.session.agent_auth import AuthMethod, AuthStatus
from webclient.session.agent_spec import AgentSpec
from webclient.session.prompt_content import PromptBlock
from webclient.session.recorder import NO_RECORDER, Recorder
from webclient.session.workspace_events import WorkspaceEvents
from webclient.viewmodel.controls import SessionControls
from webclient.viewmodel.entries import PermissionPrompt, ToolCall
from webclient.viewmodel.events import Change
from webclient.viewmodel.subagents import Subagents
from webclient.viewmodel.thread import Thread
from webclient.workspace.paths import Workspace
from webclient.workspace.terminals import Terminals

STARTING = "its start"
"""The first step of every start, before the agent can answer anything (a process starting, a server reached)."""

StopReason = str
"""Why a turn ended: ``end_turn``, ``max_tokens``, ``max_turn_requests``, ``refusal``, ``cancelled``, or whatever
else the agent said (shown as it is)."""


class AgentError(Exception):
    """Something the agent did instead of what the session asked."""


class AgentFailed(AgentError):
    """The agent could not be started or reached, or answered what cannot be used; the message says so to the
    user."""


class AgentRefused(AgentError):
    """The agent answered a request with an error: ``text`` for the user, the protocol's ``code`` if it has one."""

    def __init__(self, text: str, code: int | None = None) -> None:
        super().__init__(text)
        self.text = text
        self.code = code

    def __str__(self) -> str:
        return f"{self.text} (code {self.code})" if self.code is not None else self.text


class AgentGone(AgentError):
    """The agent is not there any more (its process exited, its connection closed). The adapter reports why
    through `AgentHost.gone` (unless the session stopped it): whoever gets this error says nothing more."""


class AuthenticationRequired(AgentError):
    """The agent will open a session only after a sign-in, with one of the methods of its `AgentHello`;
    ``reason`` is what it said."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class AgentHello:
    """What the agent said of itself when it started."""

    info: dict[str, Any]
    """Its name, title and version, as it gave them (the page shows them)."""
    prompt_capabilities: frozenset[str]
    """What a prompt may carry besides text and links: ``image``, ``audio``, ``embeddedContext``."""
    auth_methods: list[AuthMethod]
    lists_sessions: bool = False
    """Whether it lists its own sessions (ACP: ``sessionCapabilities.list`` in its initialize answer)."""
    reattaches: bool = False
    """Whether it can take a session up again (ACP: ``session/resume`` or ``session/load``; AAP: its server keeps
    them), so that an idle one may sleep (`webclient.session.sleep`)."""


@dataclass(frozen=True, slots=True)
class AgentSession:
    """One of the agent's own sessions, as it lists them (a session it had in a terminal, or an editor)."""

    id: str
    cwd: str
    title: str | None = None
    updated: str | None = None
    """When it last changed, as the agent said it (ISO 8601)."""


@dataclass(frozen=True, slots=True)
class Diagnosis:
    """What the adapter can tell of an agent that failed, for the notice that says so."""

    detail: str
    """Shown under the notice: for an agent process, the last lines of its stderr, or that it wrote none."""
    unanswered: str | None = None
    """For a start that timed out: what came instead of an answer, if anything did."""


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentHost:
    """What a session gives the adapter of its agent: the agent's orders and powers, and where to show its work."""

    spec: AgentSpec
    thread: Thread
    controls: SessionControls
    subagents: Subagents
    """The session's child sessions (each with its own thread), shown nested in its thread."""
    workspace: Workspace
    """What the agent may read and write through the client (already limited by ``spec.entry.file_access``)."""
    terminals: Terminals | None
    """Where the agent's commands run; None when it may run none."""
    events: WorkspaceEvents
    """Tell it what the agent did in the workspace (a file written, a terminal's output), to show it."""
    changed: Callable[[Change], None]
    """Tell the session's watchers that a part changed which the view model does not report itself."""
    step: Callable[[str], None]
    """Say what the start waits for now (the page shows it): a step of the protocol's own, by name."""
    gone: Callable[[str, str], None]
    """The agent ended without being asked to: a title and a detail for the notice (an exit code, its stderr)."""
    notice: Callable[[str, str, str], None]
    """Show a notice of the adapter's own on the thread: a level (info, warning, error), a title and a detail."""
    recorder: Recorder = NO_RECORDER
    """The session's journal: the adapter records every protocol message there, both ways (kind ``protocol``)."""
    asked: Callable[[ToolCall, PermissionPrompt], None] = lambda call, prompt: None
    """Tell the session of a question just put on a card (once each, never per chunk): its rules may answer it."""


class AgentDriver(Protocol):
    """One agent, as a session drives it; implemented by each protocol's adapter.

    Methods that wait for the agent raise `AgentGone` once it is gone, `AgentRefused` when it answers with an
    error, and take as long as the agent does: the session runs them in the background and limits the start's
    with ``spec.entry.start_timeout``. ``close()`` and a later ``start()`` give the session a fresh agent (Retry).
    """

    async def start(self) -> AgentHello:
        """Start the agent (a process, a connection) and greet it, saying each step through `AgentHost.step`.

        Raises:
            AgentFailed: it could not be started.
        """

    hello: AgentHello | None
    """What the agent said of itself when it last started, live or in the journal replayed (None before)."""
    auth_status: AuthStatus | None
    """Whether the agent is signed in, and as whom, as it last said (display only); None when it did not say."""
    can_sign_out: bool
    """Whether the agent offers a sign-out (`sign_out`), as it said when it started."""
    can_steer: bool
    """Whether a prompt can be sent into a running turn (`steer`), as the agent said when it started."""
    known_session_id: str | None
    """The agent's own id of the conversation it last opened (live, or as the journal says), or of one of its
    sessions the user chose to continue: what ``open_session(resume=True)`` reattaches to."""

    async def open_session(self, resume: bool = False) -> None:
        """Open the conversation, after `start` (and `sign_in` if it asked for one); puts the modes, models
        and settings it offers in `AgentHost.controls`. ``resume``: reattach to the session the agent had (as the
        journal replayed says), if it can; else open a new one, with a notice that it starts afresh.

        Raises:
            AuthenticationRequired: it wants a sign-in first, and offered a way.
            AgentFailed: its answer cannot be used.
        """

    @property
    def can_fork(self) -> bool:
        """Whether the open conversation can be forked (`fork`): the agent offers it, and a session is open."""

    async def fork(self) -> None:
        """Continue in a fork of the open conversation (the agent's copy of it, under a new id), the original left
        as it was: the conversation after an edited prompt (`webclient.session.checkpoints`).

        Raises:
            AgentRefused: the agent refused it.
            AgentGone: the agent is not running.
        """

    async def sign_in(self, method_id: str) -> None:
        """Sign in with one of the ``button`` methods of its `AgentHello`. May never end (a login it opened in
        a browser on the server): cancelling the call gives up, and a late answer is then ignored."""

    async def prompt(self, prompt: Sequence[PromptBlock]) -> StopReason | None:
        """Run one turn: send the prompt, show what the agent does on the host's thread until it ends the turn.
        Questions it asks on the way are shown on the thread (`Thread.ask_permission`) and wait for
        `answer_permission`; those still open when the turn ends are answered ``cancelled``. None when the
        agent gave no stop reason."""

    async def sign_out(self) -> None:
        """Sign out of the agent (its account, its keys), when `can_sign_out`."""

    async def steer(self, prompt: Sequence[PromptBlock]) -> None:
        """Send a prompt into the running turn (only when `can_steer`); shown on the thread as the user's message
        when the agent took it."""

    def cancel(self) -> Awaitable[None]:
        """Stop the turn that runs: its open questions are answered ``cancelled`` now, and questions it asks
        from now on as well, until the turn ends. The awaitable tells the agent: the session runs it in the
        background, so that an agent that reads nothing cannot hold up the page."""

    def cancel_subagent(self, session_id: str) -> Awaitable[None]:
        """Stop the work of one child session (`AgentHost.subagents`), when the agent allows it; nothing otherwise.
        The awaitable tells the agent, like `cancel`'s."""

    def answer_permission(self, request_id: str, option_id: str, reason: str = "") -> None:
        """The user chose ``option_id`` for an open question: answer it once; a repeated or late answer
        changes nothing (but shows the settled question again). ``reason``: why, when the option asks for it."""

    def answer_question(self, request_id: str, action: str, values: dict[str, Any] | None) -> None:
        """The user answered one of the agent's other questions (a form, a link: `viewmodel.questions.Question`) with
        ``accept`` (and the form's values), ``decline`` or ``cancel``: answer it once."""

    @property
    def can_cancel_entities(self) -> bool:
        """Whether the connection has per-entity cancel (a v2 method): a Stop is shown on what advertises it."""

    async def cancel_entity(self, kind: str, entity_id: str) -> None:
        """Ask the agent to stop one ``tool_call`` or ``terminal`` (by its id), only if it advertises that it can
        now; shown stopping until the agent reports it stopped."""

    async def set_mode(self, mode_id: str) -> None:
        """Switch to one of the modes in `AgentHost.controls`; shown there once the agent agreed."""

    async def set_model(self, model_id: str) -> None:
        """Switch to one of the models in `AgentHost.controls`; shown there once the agent agreed."""

    async def set_setting(self, setting_id: str, value: str | bool) -> None:
        """Change one of the settings in `AgentHost.controls` to ``value`` (a choice's id, or on/off); the
        settings as the agent then has them are shown there."""

    async def set_title(self, title: str) -> None:
        """Tell the agent the title the user gave the session, if it takes one (nothing otherwise)."""

    async def forget(self) -> None:
        """Ask the agent to delete the session it has open, if it can (the user deleted it here)."""

    async def list_sessions(self) -> list[AgentSession] | None:
        """The agent's own sessions, after `start`; None when it cannot list them."""

    def replay(self, direction: str, line: str) -> None:
        """Show again what one recorded protocol message (kind ``protocol``) showed: the session is being rebuilt
        from its journal. Nothing is sent, run or recorded."""

    def diagnose(self) -> Diagnosis:
        """What can be said about the agent now, for a notice that it failed."""

    async def close(self) -> None:
        """Stop the agent and forget its conversation (its open questions are answered ``cancelled``); its
        end is not reported through `AgentHost.gone`. A later `start` starts a fresh one."""


AgentFactory = Callable[[AgentHost], AgentDriver]
"""Makes the adapter of a new session's agent (a class such as `webclient.acp.agent.AcpAgent` is one)."""
