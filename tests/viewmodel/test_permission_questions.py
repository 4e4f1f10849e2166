"""Tests for webclient.viewmodel.permission_questions: a question to the person as a future on its card, whichever
protocol asked it, answered once and settled at a stop."""

from __future__ import annotations

import asyncio

import pytest

from webclient.viewmodel.content import PermissionOption
from webclient.viewmodel.entries import PermissionPrompt, ToolCall
from webclient.viewmodel.events import Change, Region
from webclient.viewmodel.permission_questions import PermissionQuestions
from webclient.viewmodel.thread import Thread

OPTIONS = [PermissionOption("allow", "Allow", "allow_once"), PermissionOption("deny", "Deny", "reject_once")]


def chosen(option_id: str | None, reason: str) -> tuple[str | None, str]:
    return option_id, reason


def asked() -> tuple[PermissionQuestions, Thread, list[Change]]:
    changes: list[Change] = []
    thread = Thread()
    return PermissionQuestions(thread, changes.append), thread, changes


@pytest.mark.asyncio
async def test_the_first_answer_and_its_reason_reach_the_future_once() -> None:
    questions, thread, _ = asked()
    call = thread.upsert_tool_call("c1", {"title": "Deploy"}, {})
    answer = questions.ask(call, questions.next_id(), OPTIONS, chosen)
    questions.answer("q1", "deny", "not on a Friday")
    questions.answer("q1", "allow", "changed my mind")  # too late: the card is shown again, settled
    assert await answer == ("deny", "not on a Friday")
    assert call.permission is not None and call.permission.chosen == "deny"


@pytest.mark.asyncio
async def test_a_withdrawn_question_says_so_on_its_card() -> None:
    questions, thread, changes = asked()
    call = thread.upsert_tool_call("c1", {}, {})
    answer = questions.ask(call, questions.next_id(), OPTIONS, chosen)
    answer.cancel()
    await asyncio.sleep(0)  # the future's callbacks run
    assert call.permission is not None and call.permission.state == "withdrawn"
    assert changes[-2:] == [call.change, Region.STATUS]


@pytest.mark.asyncio
async def test_a_question_the_hook_settles_on_the_thread_is_answered_at_once() -> None:
    thread = Thread()

    def rule(call: ToolCall, prompt: PermissionPrompt) -> None:
        thread.answer_permission(prompt.request_id, None)  # a rule with nothing to deny with: cancelled

    questions = PermissionQuestions(thread, lambda change: None, rule)
    call = thread.upsert_tool_call("c1", {}, {})
    assert await questions.ask(call, questions.next_id(), OPTIONS, chosen) == (None, "")


@pytest.mark.asyncio
async def test_settle_cancels_the_questions_of_the_thread_and_of_subagents() -> None:
    questions, thread, _ = asked()
    child = Thread()
    mine = questions.ask(thread.upsert_tool_call("c1", {}, {}), questions.next_id(), OPTIONS, chosen)
    theirs = questions.ask(child.upsert_tool_call("c1", {}, {}), questions.next_id(), OPTIONS, chosen, thread=child)
    questions.settle()
    assert (await mine, await theirs) == ((None, ""), (None, ""))
    assert thread.pending_permissions == [] and child.pending_permissions == []
