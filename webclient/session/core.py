"""A session: one agent, its conversation thread, and the people watching it.

The session turns what the user does (prompt, click, stop) into calls on its agent's adapter
(`webclient.session.agent.AgentDriver`, whichever protocol it speaks), and the adapter shows what the agent does on the
session's thread and controls. It knows nothing of protocols, sockets or HTML: watchers subscribe with a callback that
is told *which* part changed (an entry's ``seq`` or a region name) and render it themselves when they are ready.

Its jobs live in their own modules, and its parts are public, read where they are: the agent's life and state
(``session.lifecycle``: ready, signing in, its error, Retry), the turns and their queue (``session.turns``), changes
to the controls (``control_changes``), the user's answers (``answers``), the agent's work in the workspace
(`workspace_events`). `Session` itself keeps what adds to a part: an action journalled with who did it, a notice
naming them, a check before the agent is asked.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from pathlib import Path

from webclient.people.roles import Share
from webclient.session import replay
from webclient.session.agent import AgentError, AgentFactory, AgentHost
from webclient.session.agent_lifecycle import AgentLifecycle
from webclient.session.agent_spec import AgentSpec
from webclient.session.answers import Answers
from webclient.session.attribution import Actor, by_json, record_action, say
from webclient.session.checkpoints import Checkpoints
from webclient.session.control_changes import ControlChanges
from webclient.session.recorder import NO_RECORDER, JournalRow, Recorder
from webclient.session.review import Review
from webclient.session.rules import SessionRules
from webclient.session.shown import Shown
from webclient.session.sleep import IdleSleep
from webclient.session.tasks import BackgroundTasks
from webclient.session.turns import Turns
from webclient.session.uploads import Uploads
from webclient.session.workspace_events import WorkspaceEvents
from webclient.viewmodel.controls import SECRET_SET, SessionControls
from webclient.viewmodel.events import Change, Region
from webclient.viewmodel.prompt_title import prompt_title
from webclient.viewmodel.subagents import Subagents
from webclient.viewmodel.thread import Thread
from webclient.workspace.changes import ChangeTracker
from webclient.workspace.paths import Workspace
from webclient.workspace.terminals import Terminals
from webclient.workspace.worktrees import Worktree

log = logging.getLogger(__name__)


class Session:
    """One agent, one conversation, one thread; any number of watchers.

    ``agent`` makes the adapter of the protocol the agent speaks, from what the session gives it; ``recorder``
    keeps the session's journal (the user's actions here, the protocol in the adapter, the workspace's events).
    """

    def __init__(
        self,
        spec: AgentSpec,
        agent: AgentFactory,
        session_id: str | None = None,
        recorder: Recorder = NO_RECORDER,
        created: float | None = None,
    ) -> None:
        self.id = session_id or secrets.token_urlsafe(9)
        self.spec = spec
        self.recorder = recorder
        self.created = time.time() if created is None else created
        self.owner: str | None = None
        """The id of the person whose session this is (None: from before people; admins only)."""
        self.shares: list[Share] = []
        """Whom the owner shared it with, and how (`webclient.people.roles.role_of` reads both)."""
        self.worktree: Worktree | None = None
        """The git worktree it works in, on a branch of its own (`webclient.agents.session_worktrees`), if any."""
        self._watchers: set[Callable[[Change], None]] = set()
        self.thread = Thread(listener=self._changed)
        self.controls = SessionControls(listener=self._changed)
        self.subagents = Subagents(self.thread)
        self.shown = Shown(self.thread, recorder)
        self.uploads = Uploads()
        self.workspace = Workspace([spec.cwd, *spec.entry.extra_roots], spec.entry.file_access, spec.hidden)
        self.terminals = Terminals(spec.sandbox) if spec.entry.terminals else None
        self.changes = ChangeTracker(
            self.workspace.roots, lambda: self._changed(Region.CHANGES), hides=self.workspace.lexically_hides
        )
        self._tasks = BackgroundTasks(self.id)
        # The lifecycle needs the agent, so it is made after it: the host reaches it when the agent reports.
        self.agent = agent(
            AgentHost(
                spec=spec,
                thread=self.thread,
                controls=self.controls,
                subagents=self.subagents,
                workspace=self.workspace,
                terminals=self.terminals,
                events=WorkspaceEvents(self.thread, self.workspace, self.changes, recorder),
                changed=self._changed,
                step=lambda step: self.lifecycle.step(step),
                gone=lambda title, detail: self.lifecycle.gone(title, detail),
                notice=self.shown.notice,
                recorder=recorder,
                asked=lambda call, prompt: self.rules.asked(call, prompt),
            )
        )
        self.lifecycle = AgentLifecycle(
            self.agent, spec, self.thread, self.shown, self._changed, self._tasks, self._agent_ready
        )
        self.turns = Turns(
            self.agent,
            self.lifecycle,
            self.thread,
            self.shown,
            self.workspace,
            self.uploads,
            self._changed,
            self._tasks,
            self.subagents,
        )
        self.checkpoints = Checkpoints(self.turns, recorder, self.submit_prompt)
        """The workspace before each prompt, restored on request (`webclient.session.checkpoints`)."""
        self.review = Review(self.changes, recorder, self._tasks)
        """The person's Keep and Undo on the changes, and the note the next prompt gives the agent."""
        self.turns.notes = self.review.turn_starting
        self.control_changes = ControlChanges(self.agent, self.lifecycle, self.controls, self.shown, self._tasks)
        self.answers = Answers(self.agent, self.thread, recorder, self._tasks, self._changed, self.subagents)
        """The person's answers to the agent's questions (the page's socket and the inbox give them here)."""
        self.rules = SessionRules(self)
        self.sleep = IdleSleep(self._may_sleep, self._fall_asleep)
        """When the agent, idle and unwatched, is stopped until the next prompt (`webclient.session.sleep`)."""
        self._falling_asleep: asyncio.Task[None] | None = None
        self._watching_changes = False

    # -- watching ----------------------------------------------------------------------------------

    def watch(self, callback: Callable[[Change], None], page: bool = False) -> Callable[[], None]:
        """Call ``callback`` with every change from now on; returns the function that stops it. ``page``: a page's
        socket, which keeps the agent awake while it is open, and wakes it if it sleeps (as Resume)."""
        self._watchers.add(callback)
        if not page:
            return lambda: self._watchers.discard(callback)
        self.sleep.page_opened()
        if self.lifecycle.sleeping:
            self.resume()
        stopped = False

        def stop() -> None:
            nonlocal stopped
            self._watchers.discard(callback)
            if not stopped:
                stopped = True
                self.sleep.page_closed()

        return stop

    def _changed(self, key: Change) -> None:
        self.sleep.active()
        for watcher in self._watchers:
            watcher(key)

    # -- what the page shows -----------------------------------------------------------------------

    @property
    def title(self) -> str | None:
        return self.controls.title or prompt_title(self.thread)  # the agent's or the person's, else its first prompt

    @property
    def elapsed(self) -> str:
        """Time since the agent began starting or signing in, as ``m:ss`` (the page counts on from it)."""
        seconds = max(0, int(time.time() - self.lifecycle.since))
        return f"{seconds // 60}:{seconds % 60:02d}"

    @property
    def sleeping(self) -> bool:
        """Its idle agent was stopped until the next prompt, Resume or page opened (`webclient.session.sleep`)."""
        return self.lifecycle.sleeping

    @property
    def shown_state(self) -> str:
        """The state a list of sessions shows: the turn's, ``sleeping`` for one whose idle agent was stopped until the
        next prompt, or ``stopped`` for a session rebuilt after a restart whose agent was not resumed (its turn
        state is ``ended``, as for one the user ended)."""
        if self.lifecycle.agent_state == "stopped":
            return "sleeping" if self.lifecycle.sleeping else "stopped"
        return self.turns.turn_state

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

    # -- lifecycle ---------------------------------------------------------------------------------

    def start(self, continuing: str | None = None) -> None:
        """Start the agent in the background; progress shows in the page. ``continuing``: the id of one of the
        agent's own sessions, which this one takes up (resumed or loaded, if the agent can)."""
        if continuing is not None:
            self.agent.known_session_id = continuing
        self._tasks.spawn(self._start(resume=continuing is not None), "start")

    async def _start(self, resume: bool = False) -> None:
        falling, self._falling_asleep = self._falling_asleep, None
        if falling is not None and not falling.done():  # woken as it fell asleep: the agent stops before one starts
            await asyncio.gather(falling, return_exceptions=True)
            if self.terminals is not None:
                self.terminals.reopen()  # closed by the sleep after `resume` had reopened them
        self.checkpoints.prepare()  # the first prompt's checkpoint then reads only what changed since
        # The baseline of the Changes view is the workspace before the agent could touch it (kept while it slept).
        if not self._watching_changes:
            await self.changes.start()
            self._watching_changes = True
        await self.lifecycle.start_agent(resume)

    def _agent_ready(self) -> None:
        self.turns.send_queued()
        self.sleep.arm()

    def _may_sleep(self) -> bool | None:
        """`IdleSleep.idle`: None unless the agent runs and can be woken as it was (or the operator said so)."""
        hello = self.agent.hello
        if not self.lifecycle.ready or self.lifecycle.closing:
            return None
        if not (self.sleep.without_resume or (hello is not None and hello.reattaches)):
            return None
        return self.turns.turn_state == "idle" and not self.turns.turn_running and not len(self.turns.queue)

    def _fall_asleep(self) -> None:
        """Stop the idle agent, on record: the page (and a page rebuilt from the journal) shows it sleeping, and the
        next prompt, Resume or page opened wakes it (`resume`). Its state changes now, so that a prompt that comes
        before the agent has stopped wakes it rather than starting a turn on it."""
        record_action(self.recorder, "sleep", None)
        self.lifecycle.sleeping = True
        self.lifecycle.agent_state = "stopped"
        self._changed(Region.STATUS)
        self._falling_asleep = self._tasks.spawn(self._stop_sleeping_agent(), "sleep")

    async def sleep_now(self) -> bool:
        """Put the agent to sleep at once if it is idle (no turn, no question, nothing queued), whether or not it can
        be woken as it was (its instance stops, and hands the session over); False when it is busy or not running."""
        if not self.lifecycle.ready or self.lifecycle.closing or self.turns.turn_running or len(self.turns.queue):
            return False
        if self.turns.turn_state != "idle":
            return False
        self._fall_asleep()
        falling = self._falling_asleep
        if falling is not None:
            await asyncio.gather(falling, return_exceptions=True)
        return True

    async def _stop_sleeping_agent(self) -> None:
        await self.agent.close()
        if self.terminals is not None:
            await self.terminals.close()
        log.info("session %s: its idle agent sleeps", self.id)

    def resume(self, by: Actor = None) -> None:
        """Start the agent again and reattach it to its session (after a restart, after the user ended it, or when it
        sleeps)."""
        if self.lifecycle.begin_resume():
            self.lifecycle.sleeping = False
            record_action(self.recorder, "resume", by)
            if self.terminals is not None:
                self.terminals.reopen()
            self._tasks.spawn(self._start(resume=True), "resume")

    async def rebuild(self, journal: AsyncIterator[Iterable[JournalRow]]) -> None:
        """Show the stored journal again (a new session object for a stored session); no agent starts."""
        rebuilding = replay.Rebuild(self)
        async for records in journal:
            rebuilding.replay(records)
        rebuilding.done()
        self._changed(Region.STATUS)

    async def end(self, by: Actor = None) -> None:
        """The user ends the session: as `close`, and recorded (a rebuilt page says the user ended it)."""
        record_action(self.recorder, "end", by)
        await self.close()

    async def close(self) -> None:
        """End the session: stop the agent and everything running for it."""
        self.lifecycle.closing = True
        self.lifecycle.sleeping = False
        self.sleep.cancel()
        await self.lifecycle.close_terminal()
        await self.agent.close()
        if self.terminals is not None:
            await self.terminals.close()
        await self.changes.close()
        self._watching_changes = False
        await self._tasks.cancel_all()
        if self.lifecycle.agent_state != "failed":
            self.lifecycle.agent_state = "exited"
        self._changed(Region.STATUS)

    # -- the user's actions ------------------------------------------------------------------------

    def submit_prompt(
        self, text: str, nonce: str, uploads: Sequence[str] = (), mentions: Sequence[str] = (), by: Actor = None
    ) -> bool:
        """Send a prompt, or queue it while the agent is busy (see `Turns.submit_prompt`); one typed while the agent
        sleeps wakes it (as Resume), and waits in the queue until it is up."""
        if self.lifecycle.sleeping:
            self.resume(by)
        accepted = self.turns.submit_prompt(text, nonce, uploads, mentions, by_json(by))
        if accepted:
            record_action(self.recorder, "prompt", by, text=text, uploads=list(uploads), mentions=list(mentions))
        return accepted

    def cancel(self, by: Actor = None) -> None:
        """Stop: a sign-in in progress is given up; a turn is stopped. Returns at once."""
        record_action(self.recorder, "stop", by)
        say(self.shown, by, "pressed Stop")
        if self.lifecycle.agent_state == "signing-in":
            self.lifecycle.cancel_auth()
        else:
            self.turns.cancel()

    def cancel_subagent(self, session_id: str, by: Actor = None) -> None:
        """Stop one child session's work (a Stop on it): recorded, then sent in the background."""
        record_action(self.recorder, "stop_subagent", by, session_id=session_id)
        self._tasks.spawn(self.agent.cancel_subagent(session_id), "cancel subagent")

    def cancel_entity(self, kind: str, entity_id: str, by: Actor = None) -> None:
        """The user's Stop on one ``tool_call`` or ``terminal``: journalled, then asked (if the adapter may ask)."""
        record_action(self.recorder, "cancel_entity", by, kind=kind, id=entity_id)
        self._tasks.spawn(self._tell(self.agent.cancel_entity(kind, entity_id)), "cancel-entity")

    def rename(self, title: str, by: Actor = None) -> None:
        """Give the session a title of the user's, kept until they clear it (blank: the agent's title again)."""
        title = " ".join(title.split())[:200]
        record_action(self.recorder, "rename", by, title=title)
        self.controls.name(title or None)
        if title and self.lifecycle.ready:
            self._tasks.spawn(self._tell(self.agent.set_title(title)), "set-title")

    async def _tell(self, request: Awaitable[None]) -> None:
        """A request the user's change does not wait for: the agent's refusal is logged, not shown."""
        try:
            await request
        except AgentError as error:
            log.info("session %s: the agent refused: %s", self.id, error)

    def sign_out(self, by: Actor = None) -> None:
        """Sign out of the agent's account (the agent's ``logout``); the next prompt may ask for a sign-in."""
        if self.lifecycle.ready and self.agent.can_sign_out:
            record_action(self.recorder, "sign_out", by)
            self._tasks.spawn(self._signed_out(), "sign-out")

    async def _signed_out(self) -> None:
        try:
            await self.agent.sign_out()
        except AgentError as error:
            self.shown.notice("error", "The agent did not sign out", str(error))
            return
        self.shown.notice("info", "Signed out of the agent", "It may ask you to sign in again before the next prompt.")

    async def delete(self) -> None:
        """The user deletes the session: the agent deletes its own (if it can and runs), then it ends."""
        if self.lifecycle.ready:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.spec.entry.start_timeout):
                    await self._tell(self.agent.forget())
        await self.close()
        await self.checkpoints.forget()

    def set_mode(self, mode_id: str, by: Actor = None) -> None:
        record_action(self.recorder, "mode", by, mode_id=mode_id)
        say(self.shown, by, "set the mode to", self.controls.mode(mode_id))
        self.control_changes.set_mode(mode_id)

    def set_model(self, model_id: str, by: Actor = None) -> None:
        record_action(self.recorder, "model", by, model_id=model_id)
        say(self.shown, by, "set the model to", self.controls.model(model_id))
        self.control_changes.set_model(model_id)

    def set_setting(self, setting_id: str, value: str, by: Actor = None) -> None:
        secret = getattr(self.controls.setting(setting_id), "secret", False)
        record_action(self.recorder, "setting", by, setting_id=setting_id, value=SECRET_SET if secret else value)
        say(self.shown, by, "changed", self.controls.setting(setting_id))
        self.control_changes.set_setting(setting_id, value)
