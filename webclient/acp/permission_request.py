"""``session/request_permission`` asked and answered: the card a question is about, its options, what the v2 draft's
request says of itself, and the outcome sent back. The question itself, a future on its card, is a
`PermissionQuestions`' (as an AAP agent's are). https://agentclientprotocol.com/protocol/tool-calls#requesting-permission
"""

from __future__ import annotations

import asyncio
from typing import Any

from webclient.acp.updates import tool_call_patch
from webclient.viewmodel.content import PermissionOption
from webclient.viewmodel.entries import PermissionPrompt, ToolCall
from webclient.viewmodel.permission_questions import PermissionQuestions
from webclient.viewmodel.thread import Thread

Outcome = dict[str, Any]
"""The answer to ``session/request_permission``: ``{"outcome": RequestPermissionOutcome}``."""


def ask(
    questions: PermissionQuestions, params: dict[str, Any], *, refuse: bool, thread: Thread | None = None
) -> asyncio.Future[Outcome]:
    """Show the question on its tool call's card (a card of its own if it is about none) and return the answer to
    come; ``refuse`` answers ``cancelled`` at once (the person is stopping the turn), as does a question that offers
    no option. ``thread``: a subagent's, when the question is the child session's."""
    request_id = questions.next_id()
    call = _card(thread or questions.thread, params, request_id)
    offered = _options(params)
    if refuse or not offered:
        refused: asyncio.Future[Outcome] = asyncio.get_running_loop().create_future()
        refused.set_result(outcome(None))
        return refused
    describe = lambda prompt: _describe(prompt, params)  # noqa: E731
    return questions.ask(call, request_id, offered, outcome, thread=thread, describe=describe)


def _card(thread: Thread, params: dict[str, Any], request_id: str) -> ToolCall:
    """The tool call card the question is about, updated with what the request says of it; a card of its own for a
    question about no tool call (the v2 draft's ``command`` subjects, or unknown)."""
    tool_call, subject = params.get("toolCall"), _subject(params)
    if not isinstance(tool_call, dict):
        tool_call = subject.get("toolCall")  # the v2 draft's shape
    if not isinstance(tool_call, dict) and isinstance(subject.get("toolCallId"), str):
        tool_call = {"toolCallId": subject["toolCallId"]}  # a command the agent runs for a tool call it showed
    if isinstance(tool_call, dict) and isinstance(tool_call.get("toolCallId"), str):
        raw = {k: v for k, v in tool_call.items() if k != "toolCallId"}
        return thread.upsert_tool_call(tool_call["toolCallId"], tool_call_patch(tool_call), raw)
    title = params.get("title")
    raw = {k: v for k, v in params.items() if k not in ("sessionId", "options")}
    patch: dict[str, Any] = {"title": title if isinstance(title, str) else "The agent asks for permission"}
    return thread.upsert_tool_call(f"permission-{request_id}", patch, raw)


def _options(params: dict[str, Any]) -> list[PermissionOption]:
    """The options offered (unknown kinds are kept; styling is generic)."""
    raw = params.get("options")
    if not isinstance(raw, list):
        return []
    return [
        PermissionOption(
            option_id=item["optionId"], name=str(item.get("name") or item["optionId"]), kind=str(item.get("kind", ""))
        )
        for item in raw
        if isinstance(item, dict) and isinstance(item.get("optionId"), str)
    ]


def _describe(prompt: PermissionPrompt, params: dict[str, Any]) -> None:
    """What the v2 draft's request says of itself: its title and description, and a ``command`` subject's command
    and working directory (shown as the agent's text; the answer offers only the agent's options)."""
    subject = _subject(params)
    prompt.title, prompt.description = _said(params.get("title")), _said(params.get("description"))
    if subject.get("type") == "command":
        prompt.command, prompt.cwd = _said(subject.get("command")), _said(subject.get("cwd"))


def outcome(option_id: str | None, reason: str = "") -> Outcome:
    """The ``RequestPermissionOutcome``: the option chosen, or cancelled (ACP's answer carries no reason)."""
    if option_id is None:
        return {"outcome": {"outcome": "cancelled"}}
    return {"outcome": {"outcome": "selected", "optionId": option_id}}


def _subject(params: dict[str, Any]) -> dict[str, Any]:
    subject = params.get("subject")
    return subject if isinstance(subject, dict) else {}


def _said(value: Any) -> str | None:
    """A text the agent said, unless blank."""
    return value if isinstance(value, str) and value.strip() else None
