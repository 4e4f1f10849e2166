"""The approval inbox: every open permission question and agent question across the live sessions a person owns or
may drive, on one page, answerable there (the answer goes to its session as if given on the session's page).

The page polls its list (htmx, every few seconds) and `static/js/inbox-notify.js` tells the person of a new question
with the browser notifications they turned on (`static/js/notify.js`). Nothing here runs per streamed chunk: the
list is read when the page asks.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from dataclasses import dataclass

from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from webclient.people.person import Person
from webclient.people.roles import may_drive, role_of
from webclient.session.answers import threads
from webclient.session.core import Session
from webclient.viewmodel.entries import PermissionPrompt, ToolCall
from webclient.viewmodel.questions import Question
from webclient.web.cluster.peers import ClusterHolder
from webclient.web.context import base_context, manager, person, render, renderer, session_of, urls
from webclient.web.page_context import SignedInContext

RECENT_ENTRIES = 200
"""How far back in a thread an open agent question is looked for (as `webclient.session.answers` does)."""


@dataclass(frozen=True)
class Open:
    """One open question of one session: a permission on a tool call's card, or an agent's form or link."""

    session: Session
    call: ToolCall | None = None
    prompt: PermissionPrompt | None = None
    question: Question | None = None

    @property
    def key(self) -> str:
        """Stable across polls (the page notifies of keys it has not seen)."""
        request_id = self.prompt.request_id if self.prompt is not None else self.question.request_id  # type: ignore[union-attr]
        return f"{self.session.id}:{request_id}"


def drivable(who: Person, sessions: Iterator[Session]) -> Iterator[Session]:
    for session in sessions:
        if may_drive(role_of(who, session.owner, session.shares)):
            yield session


def open_questions(who: Person, sessions: list[Session]) -> list[Open]:
    """The open questions of the sessions ``who`` owns or may drive, oldest session first."""
    found: list[Open] = []
    for session in drivable(who, iter(sorted(sessions, key=lambda s: s.created))):
        for thread in threads(session.thread, session.subagents):  # a subagent's questions wait for the person too
            for prompt in thread.pending_permissions:
                if prompt.rule is not None:  # a rule answered it: the answer is on its way
                    continue
                found.append(Open(session, thread.tool_call_for_permission(prompt.request_id), prompt))
        for entry in session.thread.latest(RECENT_ENTRIES):
            if isinstance(entry, Question) and entry.state == "pending":
                found.append(Open(session, question=entry))
    return found


@dataclass(frozen=True, kw_only=True)
class InboxContext(SignedInContext):
    """``inbox.html``: every open question of the sessions this person may drive (its blocks are polled alone)."""

    template = "inbox.html"
    found: list[Open]
    """The open questions, each with its session."""
    elsewhere_count: int = 0
    """How many questions wait in the sessions the other instances of one service run."""
    elsewhere_items: Markup = Markup("")
    """Those questions' items, as the instances that run them rendered them."""


async def inbox_page(request: Request) -> Response:
    """GET: the page; ``?part=list``: its list, as the page polls it; ``?part=count``: the index's link;
    ``?part=here``: this instance's questions alone (JSON: their count and items), which the other instances of one
    service gather into theirs (`elsewhere`). POST: an answer (`answer`)."""
    if request.method == "POST":
        form = await request.form()
        return await answer(request, str(form.get("session_id", "")))
    found = open_questions(person(request), list(manager(request).sessions.values()))
    part = request.query_params.get("part")
    if part == "here":
        items = renderer(request).block(InboxContext.template, "inbox_items", found=found, **base_context(request))
        return JSONResponse({"count": len(found), "items": items})
    count, items = await elsewhere(request)
    context = {**base_context(request), "found": found, "elsewhere_count": count, "elsewhere_items": items}
    if part in ("list", "count"):
        block = "inbox_list" if part == "list" else "inbox_count"
        return HTMLResponse(renderer(request).block(InboxContext.template, block, **context))
    return render(request, InboxContext(**context))


async def elsewhere(request: Request) -> tuple[int, Markup]:
    """The person's open questions in the sessions the other instances of one service run (none with one instance):
    how many, and their items as those instances rendered them (each answers to its session's own URL)."""
    holder: ClusterHolder | None = getattr(request.app.state, "cluster_holder", None)
    if holder is None or holder.instance is None:
        return 0, Markup("")
    count, items = 0, list[str]()
    for answer_text in await holder.ask_the_others(request.scope, "/inbox?part=here"):
        with contextlib.suppress(ValueError, KeyError, TypeError):
            here = json.loads(answer_text)
            count, items = count + int(here["count"]), [*items, str(here["items"])]
    return count, Markup("".join(items))


async def inbox_answer(request: Request) -> Response:
    """POST to a session's own URL (so that the instance that runs it answers, `webclient.web.cluster`): as `answer`;
    404 to a person who may not see the session, 403 to one who only watches it (`session_of`)."""
    session = await session_of(request, "drive")
    return await answer(request, session.id)


async def answer(request: Request, session_id: str) -> Response:
    """Answer one question of one session (a permission's option, or decline / cancel an agent's question), if the
    person may drive it; then back to the inbox."""
    form = await request.form()
    session = manager(request).get(session_id)
    request_id = str(form.get("request_id", ""))
    if session is not None and may_drive(role_of(person(request), session.owner, session.shares)):
        option_id, action = form.get("option_id"), form.get("answer")
        if isinstance(option_id, str) and option_id:
            session.answers.permission(request_id, option_id, by=person(request))
        elif action in ("decline", "cancel"):
            session.answers.question(request_id, str(action), {}, by=person(request))
    return RedirectResponse(urls(request).for_("inbox"), status_code=303)
