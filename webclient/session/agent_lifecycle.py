"""The agent's life in a session: its start, a sign-in, Retry, and the notices when it fails or ends."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Literal

from webclient.session.agent import (
    STARTING,
    AgentDriver,
    AgentFailed,
    AgentGone,
    AgentRefused,
    AuthenticationRequired,
    Diagnosis,
)
from webclient.session.agent_auth import AuthMethod
from webclient.session.agent_spec import AgentSpec
from webclient.session.shown import Shown
from webclient.session.tasks import BackgroundTasks
from webclient.session.terminal_auth import AuthTerminal
from webclient.viewmodel.events import Change, Region
from webclient.viewmodel.thread import Thread

AgentState = Literal["starting", "ready", "auth-required", "signing-in", "exited", "failed", "stopped"]
"""``stopped``: rebuilt from the journal after the server restarted, or put to sleep (`sleeping`); no agent runs until
Resume."""


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
        self.auth_methods: list[AuthMethod] = []
        self.auth_reason: str | None = None
        """What the agent said when it asked for a sign-in."""
        self.authenticating: AuthMethod | None = None
        self.closing = False
        """The user ended the session: nothing starts again."""
        self._auth_task: asyncio.Task[None] | None = None
        self.auth_terminal: AuthTerminal | None = None
        """The page's sign-in terminal (a ``terminal`` method's command), running or ended; one at most."""
        self.resume_refused: str | None = None
        """Why this stored session cannot be resumed (its agent or folder no longer allowed), or None."""
        self.may_start: Callable[[], str | None] | None = None
        """Why its owner may not start one more agent now (a limit per person, `webclient.agents.limits`), or None."""
        self.limited: str | None = None
        """Why the last Resume was refused (a limit), shown until one is let through."""
        self.sleeping = False
        """The idle agent was stopped (`webclient.session.sleep`), as the journal says: the next prompt, Resume or a
        page opened wakes it."""
        self._resuming = False
        """The start under way reattaches to the agent's earlier session (Resume), rather than opening a new one."""
        self.keep_key: Callable[[str, str], Awaitable[None]] | None = None
        """Keeps a key given on the page as the owner's secret (`webclient.store.secrets`); None: nothing keeps it
        (no store, or no owner), and only this session's agent has it."""
        self._then_authenticate: AuthMethod | None = None
        """The method to ``authenticate`` with as soon as the agent starting now has initialised (a key given)."""

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
        ``spec.entry.start_timeout`` seconds. An agent that never answers fails the start, naming the step."""
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
        self.auth_methods = hello.auth_methods
        method, self._then_authenticate = self._then_authenticate, None
        if method is not None and any(m.id == method.id for m in self.auth_methods):
            try:
                await self.agent.sign_in(method.id)
            except AgentRefused as error:
                self.agent_state = "auth-required"
                self.error = f"Signing in with “{method.name}” failed: {error.text}"
                self.changed(Region.STATUS)
                return
        await self._open_session(method)

    async def _within_timeout(self, start: Awaitable[None]) -> None:
        try:
            async with asyncio.timeout(self.spec.entry.start_timeout):
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
        self._fail(f"The agent did not answer {step} within {self.spec.entry.start_timeout:g} s{because}", diagnosis)
        await self.agent.close()

    async def _open_session(self, signed_in_with: AuthMethod | None = None) -> None:
        """Open the agent's session; ``signed_in_with``: the method it just accepted, which did not sign it in if
        the agent still asks (the page says so, rather than coming back to the same screen)."""
        try:
            await self.agent.open_session(resume=self._resuming)
        except AuthenticationRequired as request:
            self.agent_state = "auth-required"
            self.auth_reason = request.reason
            if signed_in_with is not None:
                self.error = f"Still not signed in: the agent says “{request.reason}” after “{signed_in_with.name}”."
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

    def auth_required(self, reason: str) -> None:
        """The agent refused a prompt until the user signs in (claude-agent-acp opens a session, then checks the
        account at the first prompt): its sign-in methods are offered, as after a refused ``session/new``."""
        self.agent_state = "auth-required"
        self.auth_reason = reason
        self.shown.notice("warning", "The agent asks you to sign in", reason)
        self.changed(Region.STATUS)

    def authenticate(self, method_id: str) -> None:
        """Sign in with one of the agent's methods, then open the session: an ``agent`` method, or a key method whose
        variables are set, through the agent (``authenticate``), a ``terminal`` method in the page's sign-in
        terminal. In the background, since an agent may never answer (a browser login it opened on the server);
        ``cancel_sign_in`` gives up."""
        offered = (m for m in self.auth_methods if m.id == method_id and (m.button or m.in_terminal or m.takes_key))
        method = next(offered, None)
        if self.agent_state != "auth-required" or method is None:
            return
        self.agent_state = "signing-in"
        self.authenticating = method
        self.since = time.time()
        self.error = None
        self.changed(Region.STATUS)
        if method.in_terminal:
            self._auth_task = self.tasks.spawn(self._authenticate_in_terminal(method), "sign-in terminal")
        else:
            self._auth_task = self.tasks.spawn(self._authenticate(method), "sign-in")

    async def _authenticate_in_terminal(self, method: AuthMethod) -> None:
        """Run the method's command in the sign-in terminal; exit 0 starts the agent again (it reads what the
        command stored), anything else shows how it ended and the methods again. Never ``authenticate``."""
        await self.close_terminal()
        starting = asyncio.ensure_future(AuthTerminal.start(method, self.spec))
        try:
            terminal = await asyncio.shield(starting)  # cancelled meanwhile (Cancel): what started is stopped
        except asyncio.CancelledError:
            starting.add_done_callback(self._stop_unwanted)
            raise
        except OSError as error:
            self.agent_state = "auth-required"
            self.authenticating = self._auth_task = None
            self.error = f"The sign-in command could not be started: {error.strerror or error}"
            self.changed(Region.STATUS)
            return
        self.auth_terminal = terminal
        self.changed(Region.STATUS)
        status = await terminal.wait()
        self.authenticating = self._auth_task = None
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

    def _stop_unwanted(self, starting: asyncio.Future[AuthTerminal]) -> None:
        if not starting.cancelled() and starting.exception() is None:
            self.tasks.spawn(starting.result().close(), "close sign-in terminal")

    async def close_terminal(self) -> None:
        """Stop the sign-in terminal's command (its whole process group) and forget it; nothing if there is none."""
        terminal, self.auth_terminal = self.auth_terminal, None
        if terminal is not None:
            self.changed(Region.STATUS)
            await terminal.close()

    def dismiss_terminal(self) -> None:
        """The person closed the sign-in terminal: stop what runs in it; a sign-in it was running is given up."""
        if self.auth_terminal is None:
            return
        if self.agent_state == "signing-in" and self.authenticating is not None and self.authenticating.in_terminal:
            self.cancel_auth()
        self.tasks.spawn(self.close_terminal(), "close sign-in terminal")

    async def _authenticate(self, method: AuthMethod) -> None:
        try:
            await self.agent.sign_in(method.id)
        except AgentRefused as error:
            self.agent_state = "auth-required"
            self.error = f"Signing in with “{method.name}” failed: {error.text}"
            return
        except AgentGone:
            return  # the adapter reports it
        finally:
            self.authenticating = None
            self._auth_task = None
            self.changed(Region.STATUS)
        self.agent_state = "starting"
        self.since = time.time()
        await self._within_timeout(self._open_session(method))

    def env_set(self, name: str) -> bool:
        """Whether the agent's environment has ``name``, non-empty: the server's that it inherits, its secrets, a
        key given on the page (its value is never read for anything else)."""
        return bool(self.spec.sandbox.environment(os.environ, self.spec.agent_env).get(name))

    def key_ready(self, method: AuthMethod) -> bool:
        """Whether every variable a key method needs is set, so that ``authenticate`` may be sent for it."""
        return all(self.env_set(var.name) for var in method.env_vars if not var.optional)

    def authenticate_with_key(self, method_id: str, values: Mapping[str, str], by_owner: bool) -> None:
        """A key method's variables given on the page (``values`` by name; others are ignored): kept as the
        owner's secrets (only the owner may give them: the agent runs with the owner's), then the agent starts
        again with them and is signed in with the method (``authenticate``)."""
        method = next((m for m in self.auth_methods if m.id == method_id and m.takes_key), None)
        if self.agent_state != "auth-required" or method is None:
            return
        names = {var.name for var in method.env_vars}
        given = {name: value.strip() for name, value in values.items() if name in names and value.strip()}
        missing = [v.name for v in method.env_vars if not (v.optional or v.name in given or self.env_set(v.name))]
        if not by_owner:
            self.error = "Only the session's owner can give its agent a key: it is kept as the owner's secret."
        elif not given or missing:
            self.error = f"Give {', '.join(missing) or 'the key'} to sign in with “{method.name}”."
        else:
            self.agent_state = "signing-in"
            self.authenticating = method
            self.since = time.time()
            self.error = None
            self._auth_task = self.tasks.spawn(self._authenticate_with_key(method, given), "sign-in with a key")
        self.changed(Region.STATUS)

    async def _authenticate_with_key(self, method: AuthMethod, given: dict[str, str]) -> None:
        try:
            for name, value in given.items():
                if self.keep_key is not None:
                    await self.keep_key(name, value)
        except ValueError as refused:  # the store's SecretRefused: a name or value it may not keep
            self.agent_state = "auth-required"
            self.authenticating = self._auth_task = None
            self.error = f"The key was not kept: {refused}"
            self.changed(Region.STATUS)
            return
        self.spec.given_env.update(given)
        kept = "kept as your secret" if self.keep_key is not None else "given to this session's agent only"
        self.shown.notice("info", "Key given", f"{', '.join(given)} {kept}: the agent starts again with it.")
        self.agent_state = "starting"
        self.authenticating = self._auth_task = None
        self.error = self.auth_reason = None
        self.step(STARTING)
        await self.agent.close()
        self._then_authenticate = method
        await self.start_agent()

    def cancel_auth(self) -> None:
        """Give up waiting for the sign-in: the request is forgotten (a late answer is ignored) and the
        session asks for a sign-in again."""
        task = self._auth_task
        if self.agent_state != "signing-in" or task is None:
            return
        task.cancel()
        if self.authenticating is not None and self.authenticating.in_terminal:
            self.tasks.spawn(self.close_terminal(), "close sign-in terminal")
        self._auth_task = None
        self.authenticating = None
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
        self._then_authenticate = None
        self.error = self.auth_reason = None
        self.auth_methods = []
        self.since = time.time()
        self.step(STARTING)
        self.shown.notice("info", "Restarting the agent")
        await self.close_terminal()
        await self.agent.close()
        await self.start_agent()
