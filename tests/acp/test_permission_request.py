"""Tests for webclient.acp.permission_request (and the PermissionQuestions it asks through): the agent's questions
shown on the thread's cards, the thread's prompts the one record of which are open, and each answer reaching the
agent once."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from webclient.acp import permission_request
from webclient.viewmodel.entries import ToolCall
from webclient.viewmodel.events import Change, Region
from webclient.viewmodel.permission_questions import PermissionQuestions
from webclient.viewmodel.thread import Thread

OPTIONS = [
    {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
    {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
]
SELECTED = {"outcome": {"outcome": "selected", "optionId": "allow"}}
CANCELLED = {"outcome": {"outcome": "cancelled"}}


def question(call_id: str = "c1", **extra: Any) -> dict[str, Any]:
    return {"sessionId": "s", "toolCall": {"toolCallId": call_id, "title": "Write a file"}, "options": OPTIONS, **extra}


class Asked:
    """The adapter's side of the questions: asked as ``session/request_permission`` asks them."""

    def __init__(self, questions: PermissionQuestions) -> None:
        self.questions = questions
        self.answer = questions.answer
        self.settle = questions.settle

    def ask(self, params: dict[str, Any], *, refuse: bool) -> asyncio.Future[dict[str, Any]]:
        return permission_request.ask(self.questions, params, refuse=refuse)


def permissions() -> tuple[Asked, Thread, list[int | str]]:
    changes: list[Change] = []
    thread = Thread()
    return Asked(PermissionQuestions(thread, changes.append)), thread, changes


@pytest.mark.asyncio
async def test_a_click_answers_the_agent_once_and_closes_the_question() -> None:
    asked, thread, changes = permissions()
    answer = asked.ask(question(), refuse=False)
    (prompt,) = thread.pending_permissions
    call = thread.tool_call_for_permission(prompt.request_id)
    assert isinstance(call, ToolCall) and call.title == "Write a file" and call.permission is prompt
    assert changes == [Region.STATUS]
    asked.answer(prompt.request_id, "allow")
    assert await answer == SELECTED
    assert thread.pending_permissions == [] and prompt.state == "selected"
    asked.answer(prompt.request_id, "reject")  # a late click in another tab: the card is shown again, settled
    assert changes == [Region.STATUS, Region.STATUS, call.change]
    assert await answer == SELECTED and prompt.chosen == "allow"


@pytest.mark.asyncio
async def test_an_option_not_offered_leaves_the_question_open() -> None:
    asked, thread, _ = permissions()
    answer = asked.ask(question(), refuse=False)
    (prompt,) = thread.pending_permissions
    asked.answer(prompt.request_id, "allow-always")
    assert isinstance(answer, asyncio.Future) and not answer.done()
    assert thread.pending_permissions == [prompt]


@pytest.mark.asyncio
async def test_settle_answers_every_open_question_cancelled() -> None:
    asked, thread, _ = permissions()
    first, second = asked.ask(question("c1"), refuse=False), asked.ask(question("c2"), refuse=False)
    answered = asked.ask(question("c3"), refuse=False)
    asked.answer(thread.pending_permissions[2].request_id, "allow")
    asked.settle()
    assert (await first, await second, await answered) == (CANCELLED, CANCELLED, SELECTED)
    assert thread.pending_permissions == []


@pytest.mark.asyncio
async def test_a_question_replaced_by_a_newer_one_on_its_card_is_answered_at_the_settling() -> None:
    asked, thread, _ = permissions()
    older = asked.ask(question("c1"), refuse=False)
    newer = asked.ask(question("c1"), refuse=False)
    (prompt,) = thread.pending_permissions  # only the newer question shows
    assert isinstance(older, asyncio.Future) and not older.done()
    asked.answer(prompt.request_id, "allow")
    assert await newer == SELECTED
    asked.settle()
    assert await older == CANCELLED


@pytest.mark.asyncio
async def test_refused_or_optionless_questions_are_answered_cancelled_at_once() -> None:
    asked, thread, changes = permissions()
    assert await asked.ask(question(), refuse=True) == CANCELLED
    assert await asked.ask(question("c2", options=[]), refuse=False) == CANCELLED
    assert thread.pending_permissions == [] and changes == []
    assert [call.title for call in thread if isinstance(call, ToolCall)] == ["Write a file", "Write a file"]


@pytest.mark.asyncio
async def test_a_question_about_no_tool_call_gets_a_card_of_its_own() -> None:
    asked, thread, _ = permissions()
    answer = asked.ask({"sessionId": "s", "title": "Run `make`?", "options": OPTIONS}, refuse=False)
    (prompt,) = thread.pending_permissions
    call = thread.tool_call_for_permission(prompt.request_id)
    assert call is not None and call.title == "Run `make`?" and call.tool_call_id == f"permission-{prompt.request_id}"
    asked.answer(prompt.request_id, "allow")
    assert await answer == SELECTED


@pytest.mark.asyncio
async def test_a_v2_command_request_shows_its_title_description_command_and_cwd() -> None:
    asked, thread, _ = permissions()
    thread.upsert_tool_call("run-1", {"title": "Run the build"}, {})
    params = {
        "sessionId": "s",
        "title": "Allow this command?",
        "description": "It **deletes** `build/`.",
        "subject": {"type": "command", "command": "rm -rf build", "cwd": "/work", "toolCallId": "run-1"},
        "options": [*OPTIONS, {"optionId": "later", "name": "Later", "kind": "_defer"}],
    }
    answer = asked.ask(params, refuse=False)
    (prompt,) = thread.pending_permissions
    # About the tool call the agent named: asked on its card, not on a card of its own.
    assert thread.tool_call_for_permission(prompt.request_id) is thread.tool_call("run-1") and len(thread) == 1
    assert (prompt.title, prompt.description) == ("Allow this command?", "It **deletes** `build/`.")
    assert (prompt.command, prompt.cwd) == ("rm -rf build", "/work")
    assert [option.kind for option in prompt.options] == ["allow_once", "reject_once", "_defer"]
    asked.answer(prompt.request_id, "later")
    assert await answer == {"outcome": {"outcome": "selected", "optionId": "later"}}


@pytest.mark.asyncio
async def test_a_v2_tool_call_subject_is_applied_like_an_update_and_unknown_subjects_get_a_card() -> None:
    asked, thread, _ = permissions()
    subject = {"type": "tool_call", "toolCall": {"toolCallId": "c9", "title": "Edit", "status": "pending"}}
    asked.ask({"sessionId": "s", "title": "Edit main.py?", "subject": subject, "options": OPTIONS}, refuse=False)
    asked.ask(
        {"sessionId": "s", "title": "Spend $3?", "subject": {"type": "_budget"}, "options": OPTIONS}, refuse=False
    )
    first, second = thread.pending_permissions
    assert thread.tool_call_for_permission(first.request_id) is thread.tool_call("c9")
    assert first.title == "Edit main.py?" and first.command is None
    call = thread.tool_call_for_permission(second.request_id)
    assert call is not None and call.title == "Spend $3?" and call.raw["subject"] == {"type": "_budget"}


@pytest.mark.asyncio
async def test_a_selected_answer_is_only_ever_an_option_the_agent_offered() -> None:
    asked, thread, _ = permissions()
    answer = asked.ask(question(), refuse=False)
    (prompt,) = thread.pending_permissions
    for forged in ("allow_always", "", "ALLOW", "reject "):
        asked.answer(prompt.request_id, forged)
    assert not answer.done() if isinstance(answer, asyncio.Future) else False
    asked.settle()
    assert await answer == CANCELLED
