"""The agent's questions to the user (``session/request_permission``): each a future the user's click
resolves, or a stop answers ``cancelled``. https://agentclientprotocol.com/protocol/tool-calls#requesting-permission
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from webclient.acp.updates import permission_options, tool_call_patch
from webclient.viewmodel.changes import Change, Region
from webclient.viewmodel.entries import PermissionPrompt, ToolCall
from webclient.viewmodel.thread import Thread

Outcome = dict[str, Any]


class Permissions:
    """Asks the agent's questions on their tool call cards and answers the agent. Which questions are open is
    the thread's to say (its permission prompts): the future of each is settled when its prompt is."""

    def __init__(
        self,
        thread: Thread,
        changed: Callable[[Change], None],
        asked: Callable[[ToolCall, PermissionPrompt], None] = lambda call, prompt: None,
    ) -> None:
        self.thread = thread
        self.changed = changed
        self.asked_hook = asked
        """The session's rules, told of each question once it is on its card (they may answer it at once)."""
        self._threads: dict[str, Thread] = {}
        """The questions of subagents (child sessions) by request id: each is asked on its child's thread."""
        self.asked = 0
        """Questions asked so far: the last one's request id is ``q{asked}`` (the same when the journal is replayed,
        so that a rebuilt page and the journal's answers name the same questions)."""

    def ask(self, params: dict[str, Any], *, refuse: bool, thread: Thread | None = None) -> Awaitable[Outcome]:
        """Show the question on its tool call (creating a card if it is about none) and return the answer
        to come; ``refuse`` answers ``cancelled`` at once (the user is stopping the turn). ``thread``: a subagent's,
        when the question is the child session's."""
        future: asyncio.Future[Outcome] = asyncio.get_running_loop().create_future()
        self.asked += 1
        request_id = f"q{self.asked}"
        if thread is not None and thread is not self.thread:
            self._threads[request_id] = thread
        thread = thread or self.thread
        tool_call = params.get("toolCall")
        subject = params.get("subject")
        subject = subject if isinstance(subject, dict) else {}
        if not isinstance(tool_call, dict):
            tool_call = subject.get("toolCall")  # the v2 draft's shape
        if not isinstance(tool_call, dict) and isinstance(subject.get("toolCallId"), str):
            tool_call = {"toolCallId": subject["toolCallId"]}  # a command the agent runs for a tool call it showed
        if isinstance(tool_call, dict) and isinstance(tool_call.get("toolCallId"), str):
            raw = {k: v for k, v in tool_call.items() if k != "toolCallId"}
            call = thread.upsert_tool_call(tool_call["toolCallId"], tool_call_patch(tool_call), raw)
        else:
            # A question not about a tool call (v2 ``command`` subjects, or unknown): a card of its own.
            title = params.get("title")
            raw = {k: v for k, v in params.items() if k not in ("sessionId", "options")}
            patch: dict[str, Any] = {"title": title if isinstance(title, str) else "The agent asks for permission"}
            call = thread.upsert_tool_call(f"permission-{request_id}", patch, raw)
        options = permission_options(params.get("options"))
        if refuse or not options:
            future.set_result(_outcome(None))
            return future

        def answered(option_id: str | None) -> None:
            if not future.done():  # done: the agent's request was cancelled meanwhile (its connection closed)
                future.set_result(_outcome(option_id))

        prompt = thread.ask_permission(call, request_id, options, answered)
        _describe(prompt, params, subject)  # before the page renders the change ask_permission reported
        self.asked_hook(call, prompt)

        def withdrawn(done: asyncio.Future[Outcome]) -> None:
            if done.cancelled() and prompt.state == "pending":  # the agent withdrew it ($/cancel_request)
                prompt.state = "withdrawn"
                self._card_changed(thread, call.change)
                self.changed(Region.STATUS)

        future.add_done_callback(withdrawn)
        self.changed(Region.STATUS)
        return future

    def answer(self, request_id: str, option_id: str) -> None:
        """The user chose ``option_id``: answer the agent once; a repeated or late click changes nothing."""
        thread = self._threads.get(request_id, self.thread)
        if thread.answer_permission(request_id, option_id) is not None:
            self.changed(Region.STATUS)
        elif (call := thread.tool_call_for_permission(request_id)) is not None:
            self._card_changed(thread, call.change)  # re-show the settled card to whoever clicked late

    def settle(self) -> None:
        """Answer every open question ``cancelled`` (the turn was stopped, or it is over)."""
        self.thread.settle_permissions()
        for thread in {id(thread): thread for thread in self._threads.values()}.values():
            thread.settle_permissions()

    def _card_changed(self, thread: Thread, change: Change) -> None:
        """A card changed: a child's card is a change of where the child is shown, which its thread reports."""
        (self.changed if thread is self.thread else thread.listener)(change)

    def answered_again(self, request_id: str, option_id: str | None) -> None:
        """The journal says how a question was answered: it shows answered (on its child's thread, if a child's)."""
        self._threads.get(request_id, self.thread).answer_permission(request_id, option_id)


def _describe(prompt: PermissionPrompt, params: dict[str, Any], subject: dict[str, Any]) -> None:
    """What the v2 draft's request says of itself: its title and description, and a ``command`` subject's command
    and working directory (shown as the agent's text; the answer offers only the agent's options)."""
    prompt.title, prompt.description = _str(params.get("title")), _str(params.get("description"))
    if subject.get("type") == "command":
        prompt.command, prompt.cwd = _str(subject.get("command")), _str(subject.get("cwd"))


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _outcome(option_id: str | None) -> Outcome:
    """The ``RequestPermissionOutcome``: the option chosen, or cancelled."""
    if option_id is None:
        return {"outcome": {"outcome": "cancelled"}}
    return {"outcome": {"outcome": "selected", "optionId": option_id}}
