"""The user's prompts: each a turn of the agent's, one at a time; queued while it is busy; stopped on request."""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Literal

from webclient.session.agent import AgentDriver, AgentGone, AgentRefused, AuthenticationRequired
from webclient.session.agent_lifecycle import AgentLifecycle
from webclient.session.prompt_content import PromptBlock, mentioned_files, prompt_content, upload_content
from webclient.session.prompt_queue import PromptQueue, PromptRefused, QueuedPrompt, text_bytes
from webclient.session.shown import Shown
from webclient.session.tasks import BackgroundTasks
from webclient.session.uploads import Uploads
from webclient.viewmodel.events import Change, Region
from webclient.viewmodel.questions import Question
from webclient.viewmodel.subagents import Subagents
from webclient.viewmodel.thread import Thread
from webclient.workspace.paths import Workspace

TurnState = Literal["idle", "running", "awaiting-permission", "auth-required", "ended"]

_STOP_NOTICES: dict[str, tuple[str, str]] = {
    "cancelled": ("info", "Stopped"),
    "max_tokens": ("warning", "The agent reached its token limit"),
    "max_turn_requests": ("warning", "The agent reached its limit of requests for one turn"),
    "refusal": ("warning", "The agent refused to continue"),
}


class Turns:
    """Sends prompts as turns, queues them while the agent is busy, and stops a turn when the user asks."""

    def __init__(
        self,
        agent: AgentDriver,
        lifecycle: AgentLifecycle,
        thread: Thread,
        shown: Shown,
        workspace: Workspace,
        uploads: Uploads,
        changed: Callable[[Change], None],
        tasks: BackgroundTasks,
        subagents: Subagents | None = None,
    ) -> None:
        self.agent = agent
        self.lifecycle = lifecycle
        self.thread = thread
        self.shown = shown
        self.workspace = workspace
        self.uploads = uploads
        self.changed = changed
        self.tasks = tasks
        self.subagents = subagents
        """The session's child sessions: a question of one waits for the user as the session's own do."""
        self.queue = PromptQueue(
            self._queue_changed, refused=lambda why: self.shown.notice("warning", "Not changed", why)
        )
        self.queue_paused = False
        """True after the user stopped a turn: queued prompts then wait for "Send now" (those kept from before a
        restart always do: `QueuedPrompt.kept`)."""
        self.turn_running = False
        self.cancelling = False
        self.started = 0
        """Turns started since the session was opened in this process: a page embedded in a portal tells its host of
        each one (static/js/embed.js), even one that started and ended between two of the page's updates."""
        self.stop_reason: str | None = None
        """How the last turn ended (the agent's stop reason, ``cancelled``, ``error``), for the embedding page."""
        self._prompt_nonces: set[str] = set()
        self.before_prompt: Callable[[], Awaitable[None]] | None = None
        """What runs after a prompt is shown and before it goes to the agent, which waits for it (the workspace's
        checkpoint, `webclient.session.checkpoints`)."""
        self.notes: Callable[[], list[PromptBlock]] = list
        """What the agent is told before the person's words when a turn starts (`webclient.session.review`: what the
        person undid since its last turn)."""

    def _queue_changed(self) -> None:
        self.shown.queued([(item.id, item.text, item.blocks, item.by) for item in self.queue])
        self.changed(Region.QUEUE)

    @property
    def turn_state(self) -> TurnState:
        agent_state = self.lifecycle.agent_state
        if agent_state in ("exited", "failed", "stopped"):
            return "ended"
        if agent_state in ("auth-required", "signing-in"):
            return "auth-required"  # not idle: a prompt now is refused (with a notice), not queued
        if (
            any(prompt.rule is None for prompt in self.thread.pending_permissions)  # a rule's answer is on its way
            or (self.subagents is not None and self.subagents.waiting)
            or any(isinstance(entry, Question) and entry.state == "pending" for entry in self.thread.latest(50))
        ):
            return "awaiting-permission"
        # While the agent starts it is busy, as during a turn: prompts wait for ``idle``.
        return "running" if self.turn_running or agent_state == "starting" else "idle"

    def submit_prompt(
        self,
        text: str,
        nonce: str,
        uploads: Sequence[str] = (),
        mentions: Sequence[str] = (),
        by: dict[str, Any] | None = None,
    ) -> bool:
        """Send a prompt, or queue it while the agent is busy. A nonce already seen (a replayed send) changes nothing.

        ``uploads`` are ids of files the user attached; ``mentions`` workspace paths typed as ``@path``; ``by`` who
        sent it (`webclient.session.attribution.by_json`).

        Raises:
            PromptRefused: the text is too long, or the queue is full (`PromptBounds`); shown as a notice too.
        """
        text = text.strip()
        if nonce in self._prompt_nonces or self.turn_state == "ended":
            return False
        if self.turn_state == "auth-required":
            # Not queued: a sign-in may never come. Said where the user looks, with the text to copy back.
            self._prompt_nonces.add(nonce)
            self.shown.notice("warning", "Not sent: sign in first (at the top of the page)", text)
            return False
        starts_now = self.lifecycle.ready and not self.turn_running and (self.queue_paused or not self.queue.sendable)
        # Checked before the attachments are taken, so that a refused prompt's files stay for the next one.
        attached = [upload for upload_id in uploads if (upload := self.uploads.get(upload_id)) is not None]
        adding = text_bytes(text) + sum(4 * ((len(upload.data) + 2) // 3) for upload in attached)  # as base64
        bounds = self.queue.bounds
        refusal = bounds.too_long(text) or (None if starts_now else bounds.queue_full(self.queue, adding))
        if refusal is not None:
            self._prompt_nonces.add(nonce)
            self.shown.notice("warning", "Not sent", refusal)
            raise PromptRefused(refusal)
        blocks: list[PromptBlock] = [upload_content(upload) for upload in self.uploads.take(list(uploads))]
        blocks += mentioned_files(self.workspace, mentions)
        if not text and not blocks:
            return False
        self._prompt_nonces.add(nonce)
        if starts_now:
            self._start_turn(text, blocks, by)
        else:
            self.queue.add(text, blocks, by)
        return True

    def send_queued(self, item_id: str | None = None) -> None:
        """Start the next queued prompt, or the one the user asked to send now, if the agent is free; while a turn
        runs, "Send now" steers it when the agent takes prompts into a running turn."""
        if item_id is not None and self.turn_running and not self.cancelling and self.agent.can_steer:
            steering = next((i for i in self.queue if i.id == item_id), None)
            if steering is not None:
                self.queue.remove(item_id)
                self.tasks.spawn(self._steer(prompt_content(steering.text, steering.blocks)), "steer")
            return
        if not self.lifecycle.ready or self.turn_running or self.lifecycle.closing:
            return
        item: QueuedPrompt | None
        if item_id is None:
            item = None if self.queue_paused else self.queue.pop()
        else:
            item = next((i for i in self.queue if i.id == item_id), None)
            if item is not None:
                self.queue.remove(item_id)
        if item is not None:
            self._start_turn(item.text, item.blocks, item.by)

    async def _steer(self, prompt: list[PromptBlock]) -> None:
        try:
            await self.agent.steer(prompt)
        except AgentRefused as error:
            self.shown.notice("warning", "The agent did not take the prompt into its turn", str(error))
        except AgentGone:
            pass  # the adapter reports it

    def _start_turn(self, text: str, blocks: list[PromptBlock], by: dict[str, Any] | None = None) -> None:
        prompt = [*self.notes(), *prompt_content(text, blocks)]
        self.shown.turn_started(prompt, by)
        self.turn_running = True
        self.started += 1
        self.stop_reason = None
        self.changed(Region.STATUS)
        self.tasks.spawn(self._run_turn(prompt), "turn")

    async def _run_turn(self, prompt: list[PromptBlock]) -> None:
        stopped = False
        ending = "error"
        try:
            if self.before_prompt is not None:
                await self.before_prompt()
            reason = await self.agent.prompt(prompt)
            stopped = self.cancelling or reason == "cancelled"
            ending = "cancelled" if stopped else str(reason or "end_turn")[:60]
            if not self.thread.turn_replied and not self.cancelling:
                # claude-agent-acp, after a Stop, ends the next turn at once: say so rather than show nothing.
                detail = f"Stop reason: {reason}" if reason is not None and reason != "end_turn" else ""
                self.shown.notice("warning", "The agent ended the turn without replying", detail)
            elif reason is not None and reason != "end_turn":
                level, title = _STOP_NOTICES.get(reason, ("info", f"The turn ended: {reason}"))
                self.shown.notice(level, title)
        except AuthenticationRequired as request:
            ending = "auth-required"
            self.lifecycle.auth_required(request.reason)
        except AgentRefused as error:
            self.shown.notice("error", "The agent reported an error", str(error))
        except AgentGone:
            pass  # the adapter reports it
        finally:
            # A stop pauses what is queued until the user sends it ("Send now"), or until nothing is left.
            self.queue_paused = (self.queue_paused or self.cancelling) and bool(self.queue.sendable)
            self.turn_running = False
            self.cancelling = False
            self.stop_reason = ending
            self.shown.turn_ended(stopped)
            self.changed(Region.STATUS)
            self.changed(Region.PLAN)
            self.changed(Region.QUEUE)
            self.send_queued()

    def cancel(self) -> None:
        """Stop the turn: the agent is told, its open questions answered ``cancelled``, unfinished calls marked.
        Returns at once: the agent is told in the background, so an agent that does not read its input cannot
        hold up the page."""
        if not self.turn_running or self.cancelling:
            return
        self.cancelling = True
        self.queue_paused = bool(self.queue.sendable)
        self.changed(Region.STATUS)
        self.changed(Region.QUEUE)
        self.tasks.spawn(_told(self.agent.cancel()), "cancel")
        self.shown.stopped()


async def _told(notice: Awaitable[None]) -> None:
    with contextlib.suppress(AgentGone):  # the adapter reports it
        await notice
