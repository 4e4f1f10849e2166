"""The person's say over tool calls of a remote agent: questions on the calls' cards, answered once.

A server tool the person does not trust (or one nobody declared) needs a permission; the client's own tools that
change things (`hands.CHANGES_THINGS`) ask before they run, unless the person allowed that tool for the session.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping

from webclient.aap.cards import Asked
from webclient.viewmodel.changes import Change, Region
from webclient.viewmodel.content import PermissionOption
from webclient.viewmodel.entries import PermissionPrompt, ToolCall
from webclient.viewmodel.thread import Thread

ALLOW, ALWAYS, DENY = "allow", "allow-always", "deny"
SERVER_OPTIONS = [
    PermissionOption(ALLOW, "Allow", "allow_once"),
    PermissionOption(DENY, "Deny", "reject_once", asks_reason=True),  # the reason reaches the agent
]
CLIENT_OPTIONS = [
    PermissionOption(ALLOW, "Allow once", "allow_once"),
    PermissionOption(ALWAYS, "Allow for this session", "allow_always"),
    PermissionOption(DENY, "Deny", "reject_once"),
]


class Asking:
    def __init__(
        self,
        thread: Thread,
        changed: Callable[[Change], None],
        asked: Callable[[ToolCall, PermissionPrompt], None] = lambda call, prompt: None,
        details: Mapping[str, Asked] | None = None,
    ) -> None:
        self.thread = thread
        self.details: Mapping[str, Asked] = details if details is not None else {}
        """What each call's question says (its command line and folder, a server tool's description), by call id."""
        self.changed = changed
        self.asked_hook = asked
        """The session's rules, told of each live question once it is on its card (they may answer it at once)."""
        self.asked = 0
        """Questions so far: the last one's id is ``q{asked}``, the same when the journal is replayed."""
        self.allowed_tools: set[str] = set()
        """The client's tools the person allowed for the whole session."""
        self._reasons: dict[str, str] = {}
        self.on_ask: Callable[[str, str, bool], None] = lambda call_id, request_id, client_tool: None
        """Told of each question as it is asked (the adapter journals it)."""

    def show_again(self, call_id: str, request_id: str, client_tool: bool) -> None:
        """A journalled question, asked again on its card while the session is rebuilt (its answer, if any, is
        the journal's too)."""
        self.asked += 1
        call = self.thread.tool_call(call_id)
        if call is not None:
            prompt = self.thread.ask_permission(call, request_id, CLIENT_OPTIONS if client_tool else SERVER_OPTIONS)
            self._describe(call, prompt)

    def ask(self, call_id: str, options: list[PermissionOption]) -> asyncio.Future[tuple[str | None, str]]:
        """Ask on ``call_id``'s card; the future is the option chosen (None if the turn was stopped) and the reason
        the person gave (empty if none)."""
        future: asyncio.Future[tuple[str | None, str]] = asyncio.get_running_loop().create_future()
        self.asked += 1
        request_id = f"q{self.asked}"
        call = self.thread.tool_call(call_id)
        if call is None:
            future.set_result((None, ""))
            return future
        self.on_ask(call_id, request_id, options is CLIENT_OPTIONS)

        def answered(option_id: str | None) -> None:
            if not future.done():
                future.set_result((option_id, self._reasons.pop(request_id, "")))

        prompt = self.thread.ask_permission(call, request_id, options, answered)
        self._describe(call, prompt)
        self.asked_hook(call, prompt)
        self.changed(Region.STATUS)
        return future

    def _describe(self, call: ToolCall, prompt: PermissionPrompt) -> None:
        details = self.details.get(call.tool_call_id)
        if details is not None:
            prompt.command, prompt.cwd, prompt.description = details.command, details.cwd, details.description
            self.changed(call.change)

    def answer(self, request_id: str, option_id: str, reason: str = "") -> None:
        self._reasons.setdefault(request_id, reason)  # the first answer's: later clicks change nothing
        if self.thread.answer_permission(request_id, option_id) is not None:
            self.changed(Region.STATUS)
        elif (call := self.thread.tool_call_for_permission(request_id)) is not None:
            self.changed(call.change)

    def settle(self) -> None:
        self.thread.settle_permissions()


def denial(reason: str) -> str:
    """What a server tool's card says when the person denied it (with their reason, if they gave one)."""
    return f"Denied by the person: {reason}" if reason else "Denied by the person"
