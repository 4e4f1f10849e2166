"""Tests for webclient.acp.permissions: the agent's questions shown on the thread's cards, the thread's prompts the
one record of which are open, and each answer reaching the agent once."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from webclient.acp.permissions import Permissions
from webclient.viewmodel.changes import Change, Region
from webclient.viewmodel.entries import ToolCall
from webclient.viewmodel.thread import Thread

OPTIONS = [
    {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
    {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
]
SELECTED = {"outcome": {"outcome": "selected", "optionId": "allow"}}
CANCELLED = {"outcome": {"outcome": "cancelled"}}


def question(call_id: str = "c1", **extra: Any) -> dict[str, Any]:
    return {"sessionId": "s", "toolCall": {"toolCallId": call_id, "title": "Write a file"}, "options": OPTIONS, **extra}


def permissions() -> tuple[Permissions, Thread, list[int | str]]:
    changes: list[Change] = []
    thread = Thread()
    return Permissions(thread, changes.append), thread, changes


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
