"""The agent's life in a session: its start, a sign-in, Retry, and the notices when it fails or ends."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any, Literal

from webclient.session.agent import (
    STARTING,
    AgentDriver,
    AgentFailed,
    AgentGone,
    AgentRefused,
    Diagnosis,
    SignInRequired,
)
from webclient.session.agent_spec import AgentSpec
from webclient.session.shown import Shown
from webclient.session.sign_in import SignInMethod
from webclient.session.tasks import BackgroundTasks
from webclient.session.terminal_sign_in import SignInTerminal
from webclient.viewmodel.changes import Change, Region
from webclient.viewmodel.thread import Thread

AgentState = Literal["starting", "ready", "auth-required", "signing-in", "exited", "failed", "stopped"]
"""``stopped``: rebuilt from the journal after the server restarted; no agent runs until Resume."""


class AgentLifecycle:
    """Where the agent is in its life, and the moves between: start, sign in, fail, exit, Retry, close."""

    def __init__(
        self,
        agent: AgentDriver,
        spec: AgentSpec,
        thread: Thread,
        shown: Shown,
        changed: Callable[[Change], None],
        tasks: BackgroundTasks,
        on_ready: Callable[[], None],
    ) -> None:
        self.agent = agent
        self.spec = spec
        self.thread = thread
        self.shown = shown
        self.changed = changed
        self.tasks = tasks
        self.on_ready = on_ready
        self.agent_state: AgentState = "starting"
        self.agent_info: dict[str, Any] = {}
        self.prompt_capabilities: frozenset[str] = frozenset()
        """What a prompt may carry besides text and links (``image``, ``audio``, ``embeddedContext``)."""
        self.error: str | None = None
        """Why the agent could not start, or why the last sign-in failed."""
        self.start_step: str | None = None
        """What the start waits for, as the adapter names it: ``its start``, ``initialize``, ``session/new``..."""
        self.since = time.time()
        """When the agent began starting, or signing in (the header counts up from it)."""
        self.auth_methods: list[SignInMethod] = []
        self.auth_reason: str | None = None
        """What the agent said when it asked for a sign-in."""
        self.signing_in: SignInMethod | None = None
        self.closing = False
        """The user ended the session: nothing starts again."""
        self._sign_in: asyncio.Task[None] | None = None
        self.sign_in_terminal: SignInTerminal | None = None
        """The page's sign-in terminal (a ``terminal`` method's command), running or ended; one at most."""
        self.resume_refused: str | None = None
        """Why this stored session cannot be resumed (its agent or folder no longer allowed), or None."""
        self.may_start: Callable[[], str | None] | None = None
        """Why its owner may not start one more agent now (a limit per person, `webclient.session.limits`), or None."""
        self.limited: str | None = None
        """Why the last Resume was refused (a limit), shown until one is let through."""
        self._resuming = False
        """The start under way reattaches to the agent's earlier session (Resume), rather than opening a new one."""

    @property
    def ready(self) -> bool:
        return self.agent_state == "ready"

    @property
    def can_retry(self) -> bool:
        """Whether Retry (a fresh agent process in this session) is offered: the agent failed to start or
        exited, or waits for a sign-in the browser cannot do; never after the user ended the session."""
        return not self.closing and self.agent_state in ("failed", "exited", "auth-required")

    @property
    def can_resume(self) -> bool:
        """Whether Resume (the agent started again, reattached to its session) is offered: the session was rebuilt
        after a restart, or the user ended it."""
        if self.resume_refused is not None:
            return False
        return self.agent_state == "stopped" or (self.closing and self.agent_state == "exited")

    # -- what the adapter reports (AgentHost) ------------------------------------------------------

    def step(self, step: str) -> None:
        self.start_step = step
        self.changed(Region.STATUS)

    def gone(self, title: str, detail: str) -> None:
        if self.closing:
            return
        self.agent_state = "exited"
        self.shown.notice("error", title, detail)
        self.changed(Region.STATUS)

    # -- start -------------------------------------------------------------------------------------

    async def start_agent(self, resume: bool = False) -> None:
        """Start the agent and open its session (``resume``: reattach to the one it had, if it can): all within
        ``spec.start_timeout`` seconds. An agent that never answers fails the start, naming the step."""
        self.since = time.time()
        self._resuming = resume
        await self._within_timeout(self._start_and_open())

    def begin_resume(self) -> bool:
        """Leave the stopped (or ended) state for a start that resumes; False when Resume is not offered now."""
        if not self.can_resume:
            return False
        self.limited = self.may_start() if self.may_start is not None else None
        if self.limited is not None:
            self.changed(Region.STATUS)
            return False
        self.closing = False
        self.error = self.auth_reason = None
        self.auth_methods = []
        self.agent_state = "starting"
        self.step(STARTING)
        return True

    async def _start_and_open(self) -> None:
        hello = await self.agent.start()
        self.agent_info = hello.info
        self.prompt_capabilities = hello.prompt_capabilities
        self.auth_methods = hello.sign_in_methods
        await self._open_session()

    async def _within_timeout(self, start: Awaitable[None]) -> None:
        try:
            async with asyncio.timeout(self.spec.start_timeout):
                await start
        except TimeoutError:
            await self._timed_out()
        except AgentFailed as error:
            self._fail(str(error))
        except AgentRefused as error:
            self._fail(f"The agent refused to start a session: {error}")
        except AgentGone:
            pass  # the adapter reports it

    async def _timed_out(self) -> None:
        """The start took too long: say which step, stop the agent (what it wrote stays), offer Retry."""
        diagnosis = self.agent.diagnose()
        because = f" ({diagnosis.unanswered})" if diagnosis.unanswered else ""
        step = self.start_step or STARTING
        self._fail(f"The agent did not answer {step} within {self.spec.start_timeout:g} s{because}", diagnosis)
        await self.agent.close()

    async def _open_session(self) -> None:
        try:
            await self.agent.open_session(resume=self._resuming)
        except SignInRequired as request:
            self.agent_state = "auth-required"
            self.auth_reason = request.reason
            self.start_step = None
            self.changed(Region.STATUS)
            return
        self.agent_state = "ready"
        self.start_step = None
        self._resuming = False
        self.changed(Region.STATUS)
        self.on_ready()

    def _fail(self, message: str, diagnosis: Diagnosis | None = None) -> None:
        self.agent_state = "failed"
        self.error = message
        self.shown.notice("error", message, (diagnosis or self.agent.diagnose()).detail)
        self.changed(Region.STATUS)

    # -- sign-in -----------------------------------------------------------------------------------

    def sign_in_required(self, reason: str) -> None:
        """The agent refused a prompt until the user signs in (claude-agent-acp opens a session, then checks the
        account at the first prompt): its sign-in methods are offered, as after a refused ``session/new``."""
        self.agent_state = "auth-required"
        self.auth_reason = reason
        self.shown.notice("warning", "The agent asks you to sign in", reason)
        self.changed(Region.STATUS)

    def authenticate(self, method_id: str) -> None:
        """Sign in with one of the agent's methods, then open the session: an ``agent`` method through the agent
        (``authenticate``), a ``terminal`` method in the page's sign-in terminal. In the background, since an agent
        may never answer (a browser login it opened on the server); ``cancel_sign_in`` gives up."""
        method = next((m for m in self.auth_methods if m.id == method_id and (m.button or m.in_terminal)), None)
        if self.agent_state != "auth-required" or method is None:
            return
        self.agent_state = "signing-in"
        self.signing_in = method
        self.since = time.time()
        self.error = None
        self.changed(Region.STATUS)
        if method.in_terminal:
            self._sign_in = self.tasks.spawn(self._sign_in_in_terminal(method), "sign-in terminal")
        else:
            self._sign_in = self.tasks.spawn(self._authenticate(method), "sign-in")

    async def _sign_in_in_terminal(self, method: SignInMethod) -> None:
        """Run the method's command in the sign-in terminal; exit 0 starts the agent again (it reads what the
        command stored), anything else shows how it ended and the methods again. Never ``authenticate``."""
        await self.close_terminal()
        starting = asyncio.ensure_future(SignInTerminal.start(method, self.spec))
        try:
            terminal = await asyncio.shield(starting)  # cancelled meanwhile (Cancel): what started is stopped
        except asyncio.CancelledError:
            starting.add_done_callback(self._stop_unwanted)
            raise
        except OSError as error:
            self.agent_state = "auth-required"
            self.signing_in = self._sign_in = None
            self.error = f"The sign-in command could not be started: {error.strerror or error}"
            self.changed(Region.STATUS)
            return
        self.sign_in_terminal = terminal
        self.changed(Region.STATUS)
        status = await terminal.wait()
        self.signing_in = self._sign_in = None
        if self.closing:
            return  # the session ended, which stopped the command: nothing starts again
        if status.exit_code != 0:
            self.agent_state = "auth-required"
            self.error = f"The sign-in “{method.name}” ended with {terminal.ended_how}: try again, or another way."
            self.changed(Region.STATUS)
            return
        await self.close_terminal()
        self.shown.notice("info", "Signed in", f"“{method.name}” succeeded: the agent starts again.")
        self.agent_state = "starting"
        self.error = self.auth_reason = None
        self.step(STARTING)
        await self.agent.close()
        await self.start_agent()

    def _stop_unwanted(self, starting: asyncio.Future[SignInTerminal]) -> None:
        if not starting.cancelled() and starting.exception() is None:
            self.tasks.spawn(starting.result().close(), "close sign-in terminal")

    async def close_terminal(self) -> None:
        """Stop the sign-in terminal's command (its whole process group) and forget it; nothing if there is none."""
        terminal, self.sign_in_terminal = self.sign_in_terminal, None
        if terminal is not None:
            self.changed(Region.STATUS)
            await terminal.close()

    def dismiss_terminal(self) -> None:
        """The person closed the sign-in terminal: stop what runs in it; a sign-in it was running is given up."""
        if self.sign_in_terminal is None:
            return
        if self.agent_state == "signing-in" and self.signing_in is not None and self.signing_in.in_terminal:
            self.cancel_sign_in()
        self.tasks.spawn(self.close_terminal(), "close sign-in terminal")

    async def _authenticate(self, method: SignInMethod) -> None:
        try:
            await self.agent.sign_in(method.id)
        except AgentRefused as error:
            self.agent_state = "auth-required"
            self.error = f"Signing in with “{method.name}” failed: {error.text}"
            return
        except AgentGone:
            return  # the adapter reports it
        finally:
            self.signing_in = None
            self._sign_in = None
            self.changed(Region.STATUS)
        self.agent_state = "starting"
        self.since = time.time()
        await self._within_timeout(self._open_session())

    def cancel_sign_in(self) -> None:
        """Give up waiting for the sign-in: the request is forgotten (a late answer is ignored) and the
        session asks for a sign-in again."""
        task = self._sign_in
        if self.agent_state != "signing-in" or task is None:
            return
        task.cancel()
        if self.signing_in is not None and self.signing_in.in_terminal:
            self.tasks.spawn(self.close_terminal(), "close sign-in terminal")
        self._sign_in = None
        self.signing_in = None
        self.agent_state = "auth-required"
        self.error = "Sign-in cancelled."
        self.changed(Region.STATUS)

    # -- Retry -------------------------------------------------------------------------------------

    def retry(self) -> None:
        """Stop the agent and start a fresh one in this session (the thread stays)."""
        if self.can_retry:
            self.limited = self.may_start() if self.may_start is not None else None
            if self.limited is not None:  # a fresh agent counts against its owner's limit like a resumed one
                self.changed(Region.STATUS)
                return
            self.agent_state = "starting"
            self.tasks.spawn(self._restart(), "restart")

    async def _restart(self) -> None:
        self.error = self.auth_reason = None
        self.auth_methods = []
        self.since = time.time()
        self.step(STARTING)
        self.shown.notice("info", "Restarting the agent")
        await self.close_terminal()
        await self.agent.close()
        await self.start_agent()
