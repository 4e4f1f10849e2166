"""Answering the calls a remote turn left open (AAP v3's ``tool_use``): every one of them, into one list of messages
for one ``POST /sessions/:id/turns``.

An untrusted (or undeclared) server tool becomes a question on its card, granted or denied; the client's own tools
that change things (`hands.CHANGES_THINGS`) ask before they run, unless the person allowed that tool for the
session; the questions are `PermissionQuestions`, as an ACP agent's are. What a client tool told the agent is
journalled, so that after a restart the same call is answered with the same result rather than run again (a command
that appends to a file would append twice).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, Protocol

from webclient.aap.cards import Asked
from webclient.aap.fold import TERMINAL_SHOWN
from webclient.aap.hands import CHANGES_THINGS, Hands
from webclient.aap.turn import OpenCall, TurnEvent, tool_permission, tool_result
from webclient.viewmodel.content import PermissionOption
from webclient.viewmodel.entries import PermissionPrompt
from webclient.viewmodel.permission_questions import PermissionQuestions

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


class Shows(Protocol):
    """Where the answers are shown and journalled (`webclient.aap.agent.AapAgent`)."""

    def card(self, call_id: str, status: str, content: Any = None) -> None: ...

    def show(self, event: TurnEvent) -> None: ...

    def record(self, direction: str, record: dict[str, Any]) -> None: ...


class Answering:
    def __init__(
        self, questions: PermissionQuestions, hands: Hands, shows: Shows, details: Mapping[str, Asked]
    ) -> None:
        self.questions = questions
        self.hands = hands
        self.shows = shows
        self.details = details
        """What each call's question says (its command line and folder, a server tool's description), by call id."""
        self.told: dict[str, dict[str, Any]] = {}
        """The client tools' results as sent (or about to be), by call id: live, or as the journal says."""
        self.allowed_tools: set[str] = set()
        """The client's tools the person allowed for the whole session."""

    def show_again(self, record: dict[str, Any]) -> None:
        """A journalled question (``record``: ``asked``, ``request_id``, ``client_tool``), asked again on its card
        while the session is rebuilt (its answer, if any, is the journal's too)."""
        self.questions.next_id()  # counted as live, so that the next question's id is the one it had
        call = self.questions.thread.tool_call(record["asked"])
        if call is not None:
            options = CLIENT_OPTIONS if record.get("client_tool") is True else SERVER_OPTIONS
            self._describe(self.questions.thread.ask_permission(call, str(record.get("request_id")), options))

    async def _ask(self, call_id: str, options: list[PermissionOption]) -> tuple[str | None, str]:
        """Ask on ``call_id``'s card: the option chosen (None if the turn was stopped) and the reason the person gave
        (empty if none). Journalled as it is asked."""
        request_id = self.questions.next_id()
        call = self.questions.thread.tool_call(call_id)
        if call is None:
            return None, ""
        self.shows.record("out", {"asked": call_id, "request_id": request_id, "client_tool": options is CLIENT_OPTIONS})
        return await self.questions.ask(call, request_id, options, _chosen, describe=self._describe)

    def _describe(self, prompt: PermissionPrompt) -> None:
        call = self.questions.thread.tool_call_for_permission(prompt.request_id)
        details = self.details.get(call.tool_call_id) if call is not None else None
        if details is not None:
            prompt.command, prompt.cwd, prompt.description = details.command, details.cwd, details.description

    def replay(self, record: dict[str, Any]) -> bool:
        """Take up a journalled result of a client tool; False when ``record`` is not one."""
        message = record.get("message")
        if not isinstance(record.get("told"), str) or not isinstance(message, dict):
            return False
        self.told[record["told"]] = message
        return True

    async def answer(self, open_calls: list[OpenCall]) -> list[dict[str, Any]]:
        """Every open call answered, in one list: server tools granted or denied, client tools run (asked first when
        they change things). The questions are all on the page at once; each client tool runs once the client tool
        before it has (the agent's order: a command after a write sees the file); the answers go back together."""
        answers, before = [], None
        for open_call in open_calls:
            answer = asyncio.ensure_future(self._answer_call(open_call, before))
            before = answer if open_call.side == "client" else before
            answers.append(answer)
        return list(await asyncio.gather(*answers))

    async def _answer_call(self, open_call: OpenCall, before: asyncio.Future[dict[str, Any]] | None) -> dict[str, Any]:
        call = open_call.call
        if open_call.side == "client" and call.id in self.told:
            return self.told[call.id]  # it ran before a restart: its card shows it, the agent is told the same
        answer = await self._decide(open_call)
        if answer is not None:
            return answer
        if before is not None:
            await asyncio.wait([before])
        self.shows.card(call.id, "in_progress")

        def show_terminal(terminal_id: str) -> None:
            self.shows.show(TurnEvent(TERMINAL_SHOWN, {"toolCallId": call.id, "terminalId": terminal_id}))

        ran = await self.hands.run(call.name, call.input, show_terminal)
        result = self.told[call.id] = tool_result(call.id, ran.text)
        self.shows.record("out", {"told": call.id, "message": result})
        self.shows.card(call.id, "failed" if ran.failed else "completed", ran.shown)
        return result

    async def _decide(self, open_call: OpenCall) -> dict[str, Any] | None:
        """A server tool's grant or denial, or a client tool's refusal; None: a client tool to run."""
        call = open_call.call
        if open_call.side == "server":
            chosen, reason = await self._ask(call.id, SERVER_OPTIONS)
            granted = chosen == ALLOW
            self.shows.card(call.id, "in_progress" if granted else "failed", None if granted else denial(reason))
            return tool_permission(call.id, granted, reason if not granted else None)
        if call.name in CHANGES_THINGS and call.name not in self.allowed_tools:
            chosen, _ = await self._ask(call.id, CLIENT_OPTIONS)
            if chosen == ALWAYS:
                self.allowed_tools.add(call.name)
            elif chosen != ALLOW:
                self.shows.card(call.id, "failed", "The person did not let this tool run.")
                return tool_result(call.id, "The person did not let this tool run.")
        return None


def _chosen(option_id: str | None, reason: str) -> tuple[str | None, str]:
    return option_id, reason


def denial(reason: str) -> str:
    """What a server tool's card says when the person denied it (with their reason, if they gave one)."""
    return f"Denied by the person: {reason}" if reason else "Denied by the person"
