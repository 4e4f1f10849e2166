"""``session/request_permission`` asked and answered: the card a question is about, its options, what the v2 draft's
request says of itself, and the outcome sent back. The question itself, a future on its card, is a
`PermissionQuestions`' (as an AAP agent's are). https://agentclientprotocol.com/protocol/tool-calls#requesting-permission
"""

from __future__ import annotations

import asyncio
from typing import Any, cast

from webclient.acp import wire, wire_v2
from webclient.acp.updates import WireToolCall, tool_call_patch
from webclient.acp.wire_values import items, mapping, name, string
from webclient.viewmodel.content import PermissionOption
from webclient.viewmodel.entries import PermissionPrompt, ToolCall
from webclient.viewmodel.permission_questions import PermissionQuestions
from webclient.viewmodel.thread import Thread

Outcome = wire.RequestPermissionResponse
"""The answer to ``session/request_permission``: ``{"outcome": RequestPermissionOutcome}`` (the v2 draft's is the
same)."""

Request = wire.RequestPermissionRequest | wire_v2.V2RequestPermissionRequest
"""v1 asks about a ``toolCall``; the v2 draft about a ``subject`` (a tool call, or a command), with a title."""
Subject = wire_v2.V2ToolCallPermissionSubject | wire_v2.V2CommandPermissionSubject
Option = wire.PermissionOption | wire_v2.V2PermissionOption


def ask(
    questions: PermissionQuestions, params: dict[str, Any], *, refuse: bool, thread: Thread | None = None
) -> asyncio.Future[Outcome]:
    """Show the question on its tool call's card (a card of its own if it is about none) and return the answer to
    come; ``refuse`` answers ``cancelled`` at once (the person is stopping the turn), as does a question that offers
    no option. ``thread``: a subagent's, when the question is the child session's."""
    request_id = questions.next_id()
    request = cast(Request, params)
    call = _card(thread or questions.thread, request, request_id)
    offered = _options(request)
    if refuse or not offered:
        refused: asyncio.Future[Outcome] = asyncio.get_running_loop().create_future()
        refused.set_result(outcome(None))
        return refused
    describe = lambda prompt: _describe(prompt, request)  # noqa: E731
    return questions.ask(call, request_id, offered, outcome, thread=thread, describe=describe)


def _card(thread: Thread, request: Request, request_id: str) -> ToolCall:
    """The tool call card the question is about, updated with what the request says of it; a card of its own for a
    question about no tool call (the v2 draft's ``command`` subjects, or unknown)."""
    tool_call, subject = request.get("toolCall"), _subject(request)
    if not isinstance(tool_call, dict):
        tool_call = subject.get("toolCall")  # the v2 draft's shape
    if not isinstance(tool_call, dict) and (subject_call_id := string(subject.get("toolCallId"))) is not None:
        tool_call = {"toolCallId": subject_call_id}  # a command the agent runs for a tool call it showed
    if isinstance(tool_call, dict) and (tool_call_id := string(tool_call.get("toolCallId"))) is not None:
        raw = {k: v for k, v in tool_call.items() if k != "toolCallId"}
        return thread.upsert_tool_call(tool_call_id, tool_call_patch(cast(WireToolCall, tool_call)), raw)
    title = string(request.get("title"))
    raw = {k: v for k, v in request.items() if k not in ("sessionId", "options")}
    patch: dict[str, Any] = {"title": title if title is not None else "The agent asks for permission"}
    return thread.upsert_tool_call(f"permission-{request_id}", patch, raw)


def _options(request: Request) -> list[PermissionOption]:
    """The options offered (unknown kinds are kept; styling is generic)."""
    found = []
    for item in items(request.get("options")):
        option = cast(Option, mapping(item))
        option_id = string(option.get("optionId"))
        if option_id is not None:
            found.append(
                PermissionOption(
                    option_id=option_id, name=str(option.get("name") or option_id), kind=str(option.get("kind", ""))
                )
            )
    return found


def _describe(prompt: PermissionPrompt, request: Request) -> None:
    """What the v2 draft's request says of itself: its title and description, and a ``command`` subject's command
    and working directory (shown as the agent's text; the answer offers only the agent's options)."""
    subject = _subject(request)
    prompt.title, prompt.description = name(request.get("title")), name(request.get("description"))
    if subject.get("type") == "command":
        prompt.command, prompt.cwd = name(subject.get("command")), name(subject.get("cwd"))


def outcome(option_id: str | None, reason: str = "") -> Outcome:
    """The ``RequestPermissionOutcome``: the option chosen, or cancelled (ACP's answer carries no reason)."""
    if option_id is None:
        return {"outcome": {"outcome": "cancelled"}}
    return {"outcome": {"outcome": "selected", "optionId": option_id}}


def _subject(request: Request) -> Subject:
    return cast(Subject, mapping(request.get("subject")))
