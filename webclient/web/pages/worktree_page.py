"""A session's own git worktree (`webclient.agents.session_worktrees`): its branch's diff since it started, Commit
and Discard.

The view answers htmx with a fragment for the side panel (beside Changes), and a plain link with a page of its own.
Commit and Discard are a driver's, never during a turn (the agent may be writing), and each is put on record
(`webclient.session.attribution.record_action`: the journal and the audit log) and told on the thread. Pushing the
branch and pull requests are left to the person's own tools.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from markupsafe import Markup
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from webclient.agents.session_worktrees import worktree_folder
from webclient.config import Settings
from webclient.people.person import Person
from webclient.render.diffs import DiffView, build_diff
from webclient.session.attribution import record_action
from webclient.session.core import Session
from webclient.viewmodel.entries import MessageEntry
from webclient.web.context import base_context, person, render, renderer, role_in, session_of, urls
from webclient.web.pages.panels import PanelPageContext
from webclient.workspace import worktrees
from webclient.workspace.worktrees import GitFailed, Worktree

MAX_MESSAGE_CHARS = 5000
"""Longest commit message taken from the form."""
DEFAULT_MESSAGE_CHARS = 200
"""Longest default message: the first lines of the agent's last message, up to this."""


@dataclass(frozen=True, slots=True)
class BranchView:
    """What the worktree view shows: the files the branch changed since its base (drawn, or listed only), how many
    in all, and its uncommitted files."""

    diffs: list[DiffView]
    listed_only: list[str]
    total: int
    uncommitted: list[str]


def branch_view(worktree: Worktree) -> BranchView:
    """The branch's diff against its base, read off the worktree (blocking: run it in a thread)."""
    files, total = worktrees.branch_files(worktree)
    diffs = [build_diff(file.old, file.new, file.path) for file in files if file.shown]
    return BranchView(diffs, [file.path for file in files if not file.shown], total, worktrees.status(worktree))


def default_message(session: Session) -> str:
    """The first lines of the agent's last message, bounded: what Commit's message starts as."""
    for entry in reversed(session.thread.latest(200)):
        if isinstance(entry, MessageEntry) and entry.kind == "agent-message":
            text = "".join(entry.parts).strip()
            if text:
                lines = [line.strip() for line in text.splitlines()[:3] if line.strip()]
                return " ".join(lines)[:DEFAULT_MESSAGE_CHARS]
    return f"Work of session {session.title or session.id}"[:DEFAULT_MESSAGE_CHARS]


def _worktree_of(session: Session) -> Worktree:
    if session.worktree is None:
        raise HTTPException(404, "This session does not work in a worktree of its own")
    return session.worktree


async def worktree_view(request: Request) -> Response:
    """The session's branch: its diff since it started, its uncommitted files, Commit and Discard."""
    session = await session_of(request)
    return await _view(request, session, _worktree_of(session))


async def _view(
    request: Request, session: Session, worktree: Worktree, said: str | None = None, status: int = 200
) -> Response:
    error = None
    view = None
    if worktree.path.is_dir():
        try:
            view = await asyncio.to_thread(branch_view, worktree)
        except GitFailed as failed:
            error = str(failed)
    else:
        error = f"The worktree {worktree.path} is gone."
    html = renderer(request).page(
        "_worktree.html",
        **base_context(request),
        session=session,
        worktree=worktree,
        view=view,
        error=error,
        said=said,
        message=default_message(session),
        watching=role_in(request, session) == "watch",  # no Commit or Discard for one who only watches
    )
    if request.headers.get("hx-request") and request.method == "GET":
        return HTMLResponse(html, status)
    page = PanelPageContext(**base_context(request), session=session, title="Branch", fragment=Markup(html))
    return render(request, page, status)


def _busy(session: Session) -> str | None:
    """Why the worktree may not be changed now (a turn runs: the agent may be writing), or None."""
    if session.turns.turn_running:  # a question the agent asks is inside its turn too
        return "A turn is running: the agent may be writing to the worktree. Wait until it ends, or stop it."
    return None


def _author(who: Person) -> tuple[str, str]:
    return who.label, who.email or f"{who.id.replace(':', '-')}@webclient"


async def commit(request: Request) -> Response:
    """Commit all the worktree's changes on the session's branch, with the person's message, by them."""
    session = await session_of(request, "drive")
    worktree = _worktree_of(session)
    form = await request.form()
    message = str(form.get("message") or "").strip()[:MAX_MESSAGE_CHARS]
    if not message:
        return await _view(request, session, worktree, "A commit needs a message.", 400)
    busy = _busy(session)
    if busy is not None:
        return await _view(request, session, worktree, busy, 409)
    who = person(request)
    try:
        made = await asyncio.to_thread(worktrees.commit, worktree, message, _author(who))
    except GitFailed as failed:
        return await _view(request, session, worktree, str(failed), 409)
    if made is None:
        return await _view(request, session, worktree, "Nothing to commit: the worktree has no changes.", 409)
    record_action(session.recorder, "worktree-commit", who, branch=worktree.branch, commit=made, message=message)
    session.shown.notice("info", f"Committed {made[:10]} on {worktree.branch}", message.splitlines()[0])
    return RedirectResponse(urls(request).for_("worktree", session_id=session.id), status_code=303)


async def discard(request: Request) -> Response:
    """Put the worktree back to its last commit, its untracked files removed (once the person confirmed)."""
    session = await session_of(request, "drive")
    worktree = _worktree_of(session)
    form = await request.form()
    if form.get("confirm") != "yes":
        return await _view(request, session, worktree, "Tick the box to confirm: discarded work is lost.", 400)
    busy = _busy(session)
    if busy is not None:
        return await _view(request, session, worktree, busy, 409)
    who = person(request)
    try:
        await asyncio.to_thread(worktrees.discard, worktree)
    except GitFailed as failed:
        return await _view(request, session, worktree, str(failed), 409)
    record_action(session.recorder, "worktree-discard", who, branch=worktree.branch)
    session.shown.notice("info", f"Discarded the uncommitted work on {worktree.branch}")
    return RedirectResponse(urls(request).for_("worktree", session_id=session.id), status_code=303)


async def kept_note(session: Session | None) -> str | None:
    """What the delete confirmation says of the session's worktree when it holds uncommitted work (deleting the
    session keeps it), else None."""
    worktree = session.worktree if session is not None else None
    if worktree is None or not worktree.path.is_dir():
        return None
    try:
        uncommitted = await asyncio.to_thread(worktrees.status, worktree)
    except GitFailed:
        return None
    if not uncommitted:
        return None
    files = f"{len(uncommitted)} file{'' if len(uncommitted) == 1 else 's'}"
    return (
        f"Its worktree {worktree.path} has uncommitted work ({files}): it is kept, with its branch {worktree.branch}. "
        "Commit or discard it first (Branch, on the session's page) to have it removed."
    )


def stored_worktree_note(settings: Settings, session_id: str) -> str | None:
    """What the delete confirmation says of the worktree of a session not running here (not rebuilt to ask git: its
    journal is what names the worktree's repository), if its folder is there."""
    folder = worktree_folder(settings, session_id)
    if not folder.is_dir():
        return None
    return f"Its worktree {folder} is kept, with its branch, if it holds uncommitted work when the session is deleted."
