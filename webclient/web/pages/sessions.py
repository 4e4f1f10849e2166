"""The pages people open: the list of sessions, a session, and what a session's page links to as a whole."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from webclient.agents.catalogue import UnknownAgent, WorkspaceRefused
from webclient.agents.limits import LimitReached
from webclient.people.roles import Role
from webclient.render.dom import PAGE_IDS
from webclient.render.export import export_filename, session_markdown
from webclient.render.message_docs import MessageView, Progress
from webclient.session.agent import AgentSession
from webclient.session.agent_entry import AgentEntry
from webclient.session.core import Session
from webclient.session.mcp_servers import McpServer
from webclient.viewmodel.entries import Entry, MessageEntry
from webclient.web.access.browser_origin import site
from webclient.web.context import base_context, manager, person, render, renderer, session_of, small_int, urls
from webclient.web.live.live_view import LiveView, composer_nonce
from webclient.web.live.page_holds import page_stamps
from webclient.web.live.presence import Presence
from webclient.web.live.session_docs import session_docs
from webclient.web.page_context import SignedInContext
from webclient.web.pages import history, new_session_mcp, shares
from webclient.web.pages.history import human_time
from webclient.web.pages.secrets_page import secrets_of

if TYPE_CHECKING:
    from webclient.store.shares import StoredShare


@dataclass(frozen=True, kw_only=True)
class IndexContext(SignedInContext):
    """``index.html``: the sessions, and the agents to start one of."""

    template = "index.html"
    history: history.History
    """The page of sessions shown (its search, its archived ones), newest first."""
    when: Callable[[datetime], str]
    """A time → how long ago, in words."""
    agents: list[AgentEntry]
    """The catalogue's agents, each a button that starts a session."""
    lists_own: set[str]
    """The agents whose own sessions can be listed (a link to their sessions page)."""
    refused: str | None
    """Why the last start was refused, if it was."""
    workspace: str
    """The folder the last start asked for (kept in the form after a refusal)."""
    mcp_offered: dict[str, list[McpServer]] = field(default_factory=dict)
    """By agent name: the MCP servers New session may give it, to tick (`webclient.web.pages.new_session_mcp`)."""


@dataclass(frozen=True, kw_only=True)
class SessionPageContext(SignedInContext):
    """``session.html``: a session's page (the live view's pushes render its blocks with the socket's context)."""

    template = "session.html"
    session: Session
    """The session shown."""
    message: None = None
    """No message of the composer's own (the block that shows one is pushed by the live view)."""
    message_view: Callable[[Entry], MessageView | None]
    """An entry → its Markdown as rendered so far (messages only)."""
    nonce: str
    """The prompt form's fresh token: a send replayed after a reconnect is recognised by it."""
    oob: None = None
    """Not an out-of-band fragment: the blocks render in place."""
    window: list[Entry]
    """The newest entries, shown first (older ones load as the page scrolls up)."""
    earlier: int | None
    """The sequence number of the first entry shown, if there are older ones to load."""
    later: int | None = None
    """The sequence number of the last entry shown, if there are newer ones to load (a page opened on an older
    entry: ``?at=SEQ``)."""
    ws_url: str
    """The page's socket."""
    role: Role | None
    """What this person may do with the session: own it, drive it or watch it."""
    watching: bool
    """This person only watches: no composer, no buttons that act."""
    presence: Presence
    """Who has the session open (the header)."""
    may_share: bool = False
    """The owner's Share panel is shown."""
    shares_listed: list[StoredShare] = field(default_factory=list)
    """The session's shares, for its owner."""
    known_people: list[tuple[str, str]] = field(default_factory=list)
    """The people to share with (id, name), for its owner."""
    site: str = ""
    """This server's origin as the browser reached it (a share link to copy is a whole URL)."""
    look: dict[str, str] = field(default_factory=dict)
    """An embedded page's look (theme, accent), kept in its forms."""


async def index(request: Request) -> Response:
    return await _index(request)


async def _index(request: Request, refused: str | None = None, workspace: str = "", status: int = 400) -> Response:
    """The sessions (`web.pages.history`) and the catalogue's agents to start; `refused` says why the last try did
    not start. A search from htmx (``HX-Target: history``) gets the sessions' block alone."""
    sessions = await history.history(request)
    # One URL, two bodies (the page, or its sessions for htmx): a cache must tell them apart.
    vary = {"vary": "HX-Request, HX-Target"}
    if request.headers.get("hx-request") == "true" and request.headers.get("hx-target") == PAGE_IDS.history:
        context = {"history": sessions, "when": human_time}
        block = renderer(request).block(IndexContext.template, "history", **base_context(request), **context)
        return HTMLResponse(block, headers=vary)
    entries = manager(request).catalogue.entries.values()
    index = IndexContext(
        **base_context(request),
        history=sessions,
        when=human_time,
        agents=list(entries),
        lists_own=manager(request).listings.offered(entries, manager(request).sessions.values()),
        refused=refused,
        workspace=workspace,
        mcp_offered=await new_session_mcp.offered_by_agent(request, entries),
    )
    response = render(request, index, status if refused is not None else 200)
    response.headers.update(vary)
    return response


async def create_session(request: Request) -> Response:
    """A new session of the agent the button names, in the workspace the form says (both optional)."""
    form = await request.form()
    agent, workspace = form.get("agent"), form.get("workspace")
    agent = agent if isinstance(agent, str) else None
    workspace = workspace if isinstance(workspace, str) else ""
    continuing, title = form.get("continue"), form.get("title")
    if isinstance(continuing, str) and continuing:  # one of the agent's own sessions (its sessions page)
        title = title if isinstance(title, str) and title else None
        own = AgentSession(id=continuing[:500], cwd=workspace, title=title)
    else:
        own = None
    owner = person(request)
    kept = secrets_of(request)
    env = await kept.env(owner.id) if kept is not None else None  # the person's secrets, for their agent only
    try:
        servers = await new_session_mcp.picked(request, form, agent)
        worktree = form.get("worktree") == "on"  # "Work in a new worktree" (`webclient.agents.session_worktrees`)
        session = await manager(request).start(
            agent, workspace, own, owner=owner, env=env, mcp_servers=servers, worktree=worktree
        )
    except (UnknownAgent, WorkspaceRefused) as refused:
        return await _index(request, str(refused.args[0]), workspace)
    except LimitReached as limit:  # too many: 429, the page saying which limit (503: the server drains)
        return await _index(request, str(limit.args[0]), workspace, status=limit.status)
    return RedirectResponse(urls(request).for_("session", session_id=session.id), status_code=303)


async def session_page(request: Request, **extra: Any) -> Response:
    """A session's page; ``extra`` adds to its template's context (the embedded page's, `webclient.web.pages.embed`).

    The page gets a stamp in its socket's URL, and what it holds is kept under it (`webclient.web.live.page_holds`):
    its socket's first frame is then only what changed since this render."""
    session = await session_of(request)
    panel = await shares.panel_context(request, session)  # the last await: the page holds the window as read below
    window = page_window(session, small_int(request.query_params.get("at")))
    docs = session_docs(request).of(session, window)
    last = session.thread.last
    embedded = "1" if extra.get("embedded") else None  # its socket's pushes leave the chrome out too
    stamps = page_stamps(request)
    stamp = stamps.new_stamp()
    socket_path = urls(request).for_("socket", session_id=session.id, embedded=embedded, page=stamp)
    shown: dict[int, Progress | None] = {}
    now = time.monotonic()

    def message_view(entry: Entry) -> MessageView | None:
        if not isinstance(entry, MessageEntry):
            return None
        view = docs.view(entry, now)
        shown[entry.seq] = view.progress  # what the page holds of it, for its socket
        return view

    context = SessionPageContext(
        **base_context(request),
        session=session,
        message_view=message_view,
        nonce=composer_nonce(),
        window=window,
        earlier=window[0].seq if window and window[0].seq > session.thread.first_seq else None,
        later=window[-1].seq if window and last is not None and window[-1].seq < last.seq else None,
        # The browser's origin, not this request's Host: another instance may have forwarded the request here.
        ws_url="ws" + site(request.scope).removeprefix("http") + socket_path,
        **panel,
        **extra,
    )
    response = render(request, context)
    stamps.keep(stamp, session, window, shown)  # no await since the render: the page holds exactly this
    shares.remember_link(request, response, session)
    return response


def page_window(session: Session, at: int | None) -> list[Entry]:
    """The entries a session's page opens on: the newest ``LiveView.WINDOW`` (older ones load as it scrolls up), or,
    for a link to an older entry (``?at=SEQ``, a dropped one: the oldest kept), a window around it."""
    thread = session.thread
    window = LiveView.window(thread)
    if not at or not window or at >= window[0].seq:
        return window
    before = LiveView.window(thread, before=max(at, thread.first_seq))[-(LiveView.WINDOW // 3) :]
    after = LiveView.window_after(thread, before[-1].seq if before else at - 1)
    return before + after[: LiveView.WINDOW - len(before)]


async def end_session(request: Request) -> Response:
    session = await session_of(request, "drive")
    await manager(request).end(session, person(request))
    return RedirectResponse(urls(request).for_("session", session_id=session.id), status_code=303)


async def export_session(request: Request) -> Response:
    """The whole session as a Markdown file."""
    session = await session_of(request)
    headers = {"content-disposition": f'attachment; filename="{export_filename(session.title)}"'}
    return Response(session_markdown(session), media_type="text/markdown; charset=utf-8", headers=headers)
