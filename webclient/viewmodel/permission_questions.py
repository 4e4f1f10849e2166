"""The agent's permission questions to the person, whichever protocol asked them: each a future on its tool call's
card, answered once (the first answer wins; a late click shows the settled card again), answered ``cancelled`` at
a stop or the turn's end.

Both adapters ask through it (`webclient.acp.agent`, `webclient.aap.answering`), each turning the answer into its
protocol's own (`ask`'s ``answer``). The thread is the one record of which questions are open (their prompts'
state); this keeps the futures that wait for them, the threads of subagents' questions, and the reasons given.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TypeVar

from webclient.viewmodel.content import PermissionOption
from webclient.viewmodel.entries import PermissionPrompt, ToolCall
from webclient.viewmodel.events import Change, Region
from webclient.viewmodel.thread import Thread

T = TypeVar("T")

OnAsked = Callable[[ToolCall, PermissionPrompt], None]
"""Told of each question once it is on its card (the session's rules, which may answer it at once)."""


def _not_told(call: ToolCall, prompt: PermissionPrompt) -> None:
    pass


def _undescribed(prompt: PermissionPrompt) -> None:
    pass


class PermissionQuestions:
    """One session's permission questions: asked on the cards of its thread (or a subagent's), answered by the
    person (`answer`), settled at a stop (`settle`)."""

    def __init__(self, thread: Thread, changed: Callable[[Change], None], asked: OnAsked = _not_told) -> None:
        self.thread = thread
        self.changed = changed
        self.asked_hook = asked
        self.asked = 0
        """Questions asked so far: the last one's request id is ``q{asked}`` (the same when the journal is replayed,
        so that a rebuilt page and the journal's answers name the same questions)."""
        self._waiting: dict[str, Callable[[str | None, str], None]] = {}
        """The futures of the questions not answered yet, by request id: each told the option chosen (None:
        cancelled) and the reason given."""
        self._threads: dict[str, Thread] = {}
        """The questions of subagents (child sessions) by request id: each is asked on its child's thread."""

    def next_id(self) -> str:
        """The request id of the next question (``q1``, ``q2``, ...)."""
        self.asked += 1
        return f"q{self.asked}"

    def ask(
        self,
        call: ToolCall,
        request_id: str,
        options: list[PermissionOption],
        answer: Callable[[str | None, str], T],
        *,
        thread: Thread | None = None,
        describe: Callable[[PermissionPrompt], None] = _undescribed,
    ) -> asyncio.Future[T]:
        """Put the question on ``call``'s card and return the answer to come, as ``answer`` makes it of the option
        chosen (None: cancelled) and the reason given (empty if none). ``thread``: a subagent's, when it is the
        child's question; ``describe`` fills in what the protocol says of the question before it is shown.
        Cancelling the future withdraws the question (the agent no longer wants the answer)."""
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        if thread is not None and thread is not self.thread:
            self._threads[request_id] = thread
        shown_on = thread or self.thread

        def answered(option_id: str | None, reason: str) -> None:
            if not future.done():  # done: withdrawn meanwhile (the agent cancelled its request, or its connection)
                future.set_result(answer(option_id, reason))

        self._waiting[request_id] = answered
        prompt = shown_on.ask_permission(call, request_id, options)
        describe(prompt)  # before the page renders the change ask_permission reported
        self.asked_hook(call, prompt)
        if prompt.state != "pending":  # settled on the thread by the hook (a rule with no option to deny with)
            answered(prompt.chosen, "")

        def withdrawn(done: asyncio.Future[T]) -> None:
            self._waiting.pop(request_id, None)
            if done.cancelled() and prompt.state == "pending":
                prompt.state = "withdrawn"
                self._card_changed(shown_on, call.change)
                self.changed(Region.STATUS)

        future.add_done_callback(withdrawn)
        self.changed(Region.STATUS)
        return future

    def answer(self, request_id: str, option_id: str, reason: str = "") -> None:
        """The person chose ``option_id`` (``reason``: why, when the option asks): the question is answered once; a
        repeated or late answer changes nothing but shows the settled card again."""
        thread = self._threads.get(request_id, self.thread)
        if self._answered(thread, request_id, option_id, reason):
            self.changed(Region.STATUS)
        elif (call := thread.tool_call_for_permission(request_id)) is not None:
            self._card_changed(thread, call.change)

    def answered_again(self, request_id: str, option_id: str | None) -> None:
        """The journal says how a question was answered: it shows answered (on its child's thread, if a child's)."""
        self._answered(self._threads.get(request_id, self.thread), request_id, option_id, "")

    def settle(self) -> None:
        """Answer every open question ``cancelled`` (the turn was stopped, or it is over)."""
        for thread in {id(thread): thread for thread in (self.thread, *self._threads.values())}.values():
            thread.settle_permissions()
        for answered in list(self._waiting.values()):
            answered(None, "")

    def _answered(self, thread: Thread, request_id: str, option_id: str | None, reason: str) -> bool:
        prompt = thread.answer_permission(request_id, option_id)
        if prompt is None:
            return False
        answered = self._waiting.get(request_id)
        if answered is not None:
            answered(prompt.chosen, reason)
        return True

    def _card_changed(self, thread: Thread, change: Change) -> None:
        """A card changed: a child's card is a change of where the child is shown, which its thread reports."""
        (self.changed if thread is self.thread else thread.listener)(change)
