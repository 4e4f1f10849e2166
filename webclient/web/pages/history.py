"""The history on the index page: the sessions the store keeps (or, without a store, those live in this server), a
page at a time, found by the words of their transcripts; and the forms that archive and delete them.

A stored session that is live in this server shows its live turn state, title and turns; one that is not says
``ended`` (it was ended), ``sleeping`` (its idle agent was put to sleep) or ``stopped`` (the server stopped while it
ran).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from webclient.people.person import Person
from webclient.people.roles import role_of
from webclient.render.dom import thread_entry_id
from webclient.session.core import Session
from webclient.store.matching import query_words, word_pattern
from webclient.web.context import allowed, base_context, manager, owned, person, render, role_in, small_int, urls
from webclient.web.live.presence import presence
from webclient.web.page_context import SignedInContext
from webclient.web.pages.worktree_page import kept_note, stored_worktree_note

if TYPE_CHECKING:  # the store (and SQLAlchemy) is imported only when the server keeps one
    from webclient.store.history import HistoryPage, SessionRow
    from webclient.store.store import Store

PAGE_SIZE = 25
"""Sessions on a page of the index."""

Marked = list[tuple[str, bool]]
"""A line cut into its parts, each with whether it is a word the search looked for."""


@dataclass(frozen=True)
class MarkedHit:
    """A search's hit (`webclient.store.matching.Hit`) as the index shows it: its line cut into the words looked for
    and the rest, and a link to its entry."""

    parts: Marked
    entry_seq: int | None
    """The thread's entry it was said in: its link opens the session's page on it (``?at=N#entry-N``). None: not
    known (said before entries were noted), the link opens the session."""

    @property
    def fragment(self) -> str:
        """The link's ``#entry-N`` ("" without an entry)."""
        return f"#{thread_entry_id(self.entry_seq)}" if self.entry_seq else ""


@dataclass(frozen=True)
class HistoryRow:
    """One session as the index lists it."""

    id: str
    title: str | None
    agent: str
    """Its name in the catalogue ("" when not known: a live session without a store)."""
    agent_name: str | None
    workspace: str
    created: datetime
    last_activity: datetime
    state: str
    turns: int
    archived: bool
    live: bool
    lines: list[MarkedHit] = field(default_factory=list)
    mine: bool = True
    """Whether the person may archive and delete it (theirs, or they are an admin): else it was shared with them."""
    owner: str | None = None
    """Whose it is (a person's id; None: from before people)."""


@dataclass(frozen=True)
class History:
    """What the index shows of the sessions."""

    rows: list[HistoryRow]
    total: int
    page: int
    pages: int
    query: str
    """The search, as typed ("" for none)."""
    archived: bool
    """Whether archived sessions are shown too (``?archived=1``)."""
    stored: bool
    """Whether there is a store (without one there is no search, no archive)."""

    def params(self, **change: object) -> dict[str, object]:
        """The index's query for this view with `change` applied (``urls.for_('index', **history.params(page=2))``)."""
        params: dict[str, object] = {"q": self.query or None, "archived": 1 if self.archived else None}
        params.update(change)
        if params.get("page") == 1:
            params["page"] = None
        return params


def store_of(request: Request) -> Store | None:
    store: Store | None = getattr(request.app.state, "store", None)
    return store


def marked(line: str, pattern: re.Pattern[str]) -> Marked:
    """`line` cut into the words `pattern` matches (marked) and what is between them."""
    parts: Marked = []
    end = 0
    for match in pattern.finditer(line):
        if match.start() > end:
            parts.append((line[end : match.start()], False))
        parts.append((match.group(0), True))
        end = match.end()
    if end < len(line):
        parts.append((line[end:], False))
    return parts


def human_time(when: datetime, now: datetime | None = None) -> str:
    """``just now``, ``5 min ago``, ``3 h ago``, ``2 days ago``, else the date (the page's ``<time>`` has it all)."""
    seconds = ((now or datetime.now(UTC)) - when).total_seconds()
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{int(seconds // 60)} min ago"
    if seconds < 86400:
        return f"{int(seconds // 3600)} h ago"
    if seconds < 7 * 86400:
        days = int(seconds // 86400)
        return "yesterday" if days == 1 else f"{days} days ago"
    return f"{when.day} {when:%b %Y}"


def _agent_name(session: Session) -> str | None:
    name = session.lifecycle.agent_info.get("title") or session.lifecycle.agent_info.get("name")
    return name if isinstance(name, str) else None


def _stored_row(
    stored: SessionRow, live: Session | None, pattern: re.Pattern[str] | None, viewer: Person
) -> HistoryRow:
    lines = [MarkedHit(marked(hit.line, pattern), hit.entry_seq) for hit in stored.lines] if pattern is not None else []
    if live is None:
        state = stored.state if stored.state in ("ended", "sleeping") else "stopped"
        title, agent_name, turns = stored.title, stored.agent_name, stored.turns
    else:
        state, turns = live.shown_state, live.thread.turn
        title, agent_name = live.title or stored.title, _agent_name(live) or stored.agent_name
    return HistoryRow(
        id=stored.id,
        title=title,
        agent=stored.agent,
        agent_name=agent_name,
        workspace=stored.workspace,
        created=stored.created,
        last_activity=stored.last_activity,
        state=state,
        turns=turns,
        archived=stored.archived,
        live=live is not None,
        lines=lines,
        mine=role_of(viewer, stored.owner) == "owner",
        owner=stored.owner,
    )


def live_row(session: Session, viewer: Person) -> HistoryRow:
    """A session live in this server, as the index lists it without a store."""
    created = datetime.fromtimestamp(session.created, UTC)
    return HistoryRow(
        id=session.id,
        title=session.title,
        agent="",
        agent_name=_agent_name(session),
        workspace=str(session.spec.cwd),
        created=created,
        last_activity=created,
        state=session.shown_state,
        turns=session.thread.turn,
        archived=False,
        live=True,
        mine=role_of(viewer, session.owner) == "owner",
        owner=session.owner,
    )


async def history(request: Request) -> History:
    """The sessions the index shows for its query: ``page``, ``q`` (a search), ``archived=1``."""
    number = small_int(request.query_params.get("page")) or 1
    query = request.query_params.get("q", "").strip()[:500]
    archived = request.query_params.get("archived") == "1"
    store = store_of(request)
    live = manager(request)
    viewer = person(request)
    if store is None:  # the sessions live in this server, as they are (those the person may see)
        mine = [s for s in live.sessions.values() if role_in(request, s) is not None]
        every = sorted(mine, key=lambda s: s.created, reverse=True)
        rows = [live_row(s, viewer) for s in every[(number - 1) * PAGE_SIZE : number * PAGE_SIZE]]
        pages = max(1, -(-len(every) // PAGE_SIZE))
        return History(rows, len(every), number, pages, "", False, stored=False)
    words = query_words(query)
    query = query if words else ""  # nothing to look for (punctuation only): the list

    async def read(number: int) -> HistoryPage:
        if words:
            return await store.search(query, number, archived, PAGE_SIZE, viewer)
        return await store.history(number, archived, PAGE_SIZE, viewer)

    found = await read(number)
    if not found.sessions and number > found.pages:  # past the end (sessions went meanwhile): the last page
        found = await read(found.pages)
    pattern = word_pattern(words) if words else None
    rows = [_stored_row(stored, live.get(stored.id), pattern, viewer) for stored in found.sessions]
    return History(rows, found.total, found.page, found.pages, query, archived, stored=True)


def _back(request: Request, form: dict[str, str]) -> RedirectResponse:
    """Back to the index as it was (its page, search and archived choice, from the form's hidden fields)."""
    number = small_int(form.get("page")) or 1
    params = {
        "page": number if number > 1 else None,
        "q": form.get("q") or None,
        "archived": 1 if form.get("archived_shown") == "1" else None,
    }
    return RedirectResponse(urls(request).for_("index", **params), status_code=303)


async def _form(request: Request) -> dict[str, str]:
    form = await request.form()
    return {key: value for key, value in form.items() if isinstance(value, str)}


def _stored_store(request: Request) -> Store:
    store = store_of(request)
    if store is None:
        raise HTTPException(404, "The store is off: sessions are not kept")
    return store


async def archive_session(request: Request) -> Response:
    """Archive a session (``archived=1``) or bring it back (``archived=0``)."""
    store = _stored_store(request)
    try:
        await owned(request)
    except HTTPException as refused:
        return refusal(request, refused, "Not yours to archive")
    form = await _form(request)
    if not await store.set_archived(request.path_params["session_id"], form.get("archived") == "1"):
        raise HTTPException(404, "No such session")
    return _back(request, form)


async def confirm_delete(request: Request) -> Response:
    """The page that asks before a session is deleted (a form that posts to this URL); to one it was shared with, a
    page that says only its owner may (403)."""
    session_id = request.path_params["session_id"]
    store = store_of(request)
    try:
        await owned(request)
    except HTTPException as refused:
        return refusal(request, refused, "Not yours to delete")
    viewer = person(request)
    live = manager(request).get(session_id)
    stored = await store.session_row(session_id) if store is not None else None
    if stored is not None:
        row = _stored_row(stored, live, None, viewer)
    elif live is not None:
        row = live_row(live, viewer)
    else:
        raise HTTPException(404, "No such session")
    back = {key: request.query_params.get(key, "") for key in ("page", "q", "archived_shown")}
    if live is not None:
        kept = await kept_note(live)
    else:  # not rebuilt to be asked about: its worktree's folder, if it has one, is named, its state not read
        kept = stored_worktree_note(manager(request).settings, session_id)
    context = ConfirmDeleteContext(**base_context(request), row=row, back=back, when=human_time, kept_worktree=kept)
    return render(request, context)


@dataclass(frozen=True, kw_only=True)
class ConfirmDeleteContext(SignedInContext):
    """``confirm_delete.html``: "Delete this session?", for a browser without scripts (one with them asks in place)."""

    template = "confirm_delete.html"
    row: HistoryRow
    """The session to delete, as the index lists it."""
    back: dict[str, str]
    """The index's page, search and archived switch to go back to (``page``, ``q``, ``archived_shown``)."""
    when: Callable[[datetime], str]
    """A time → how long ago, in words."""
    kept_worktree: str | None = None
    """Why its git worktree will be kept (it holds uncommitted work: `webclient.web.pages.worktree_page`), if so."""


@dataclass(frozen=True, kw_only=True)
class RefusedContext(SignedInContext):
    """``refused.html``: what this person may not do with a session they may see (403), and the way back."""

    template = "refused.html"
    heading: str
    """What was refused, as the page's heading."""
    reason: str
    """Why."""


def refusal(request: Request, refused: HTTPException, heading: str) -> Response:
    """A refusal of one who may see the session but not do this (403), as a page of the site with the reason and the
    way back to the index. Anything else (404: no such session, or not theirs to see) is raised as it came: it must
    read exactly as for an id never used, on every route."""
    if refused.status_code != 403:
        raise refused
    context = RefusedContext(**base_context(request), heading=heading, reason=refused.detail)
    return render(request, context, refused.status_code)


async def delete_session(request: Request) -> Response:
    """Delete a session, live or stored (`SessionManager.delete`: the agent deletes its own if it can, the session
    ends, the store forgets it with its journal and words). Deleting twice (a form sent again) is not an error."""
    form = await _form(request)
    session = await manager(request).open(request.path_params["session_id"])
    if session is not None and role_in(request, session) is not None:  # another person's: as if already gone
        try:
            allowed(request, session, "owner")  # 403 for one it was shared with
        except HTTPException as refused:
            return refusal(request, refused, "Not yours to delete")
        await manager(request).delete(session.id)
        await presence(request).deleted(session.id)  # its open pages say it was deleted
    return _back(request, form)  # a session already gone is what was asked for
