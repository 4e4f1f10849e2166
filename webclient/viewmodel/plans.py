"""Plans by id (the v2 draft's ``plan_update`` and ``plan_removed``): a session may keep several plans, each
replaced whole by its updates, as items, Markdown, a file, or a kind this client does not know.

The thread's `set_plan` keeps v1's one plan per turn; a plan with an id is found among the thread's entries (plans
are few, and updated rarely) and changed in place within a turn. A later turn's update shows it anew in that turn
(claude-agent-acp keeps one plan, ``plan``, for the whole session): the earlier card stays as that turn left it.
"""

from __future__ import annotations

from typing import Any

from webclient.viewmodel.content import PlanItem
from webclient.viewmodel.entries import Plan
from webclient.viewmodel.events import Region
from webclient.viewmodel.thread import Thread

SEARCHED = 2000
"""How many of the newest entries are searched for a plan's id (an older plan's update starts a new card)."""


def find_plan(thread: Thread, plan_id: str) -> Plan | None:
    for entry in reversed(thread.latest(SEARCHED)):
        if isinstance(entry, Plan) and entry.plan_id == plan_id:
            return entry
    return None


def update_plan(
    thread: Thread,
    plan_id: str,
    form: str,
    *,
    items: list[PlanItem] | None = None,
    markdown: str = "",
    uri: str = "",
    raw: dict[str, Any] | None = None,
) -> Plan:
    """Replace the plan ``plan_id`` (created on first sight, in a new turn, or again after it was removed) with this
    content."""
    plan = find_plan(thread, plan_id)
    if plan is None or plan.removed or plan.turn != thread.turn:
        plan = thread.add_entry(Plan(seq=0, turn=thread.turn, plan_id=plan_id))
    plan.form, plan.items, plan.markdown, plan.uri, plan.raw = form, items or [], markdown, uri, raw or {}
    plan.stopped = False
    thread.listener(plan.change)
    thread.listener(Region.PLAN)
    return plan


def remove_plan(thread: Thread, plan_id: str) -> Plan | None:
    """The agent removed the plan: its cards (one per turn that updated it) stay where they were in the thread, marked
    removed, and it leaves the view. None when no card of it is shown (or all are removed already)."""
    cards = [
        entry
        for entry in thread.latest(SEARCHED)
        if isinstance(entry, Plan) and entry.plan_id == plan_id and not entry.removed
    ]
    for plan in cards:
        plan.removed = True
        thread.listener(plan.change)
    if not cards:
        return None
    thread.listener(Region.PLAN)
    return cards[-1]
