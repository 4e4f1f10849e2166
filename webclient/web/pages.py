"""The pages people open: the list of sessions, a session, and what a session's page links to as a whole."""

from __future__ import annotations

import time

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from webclient.agents.catalogue import UnknownAgent, WorkspaceRefused
from webclient.agents.limits import LimitReached
from webclient.render.export import export_filename, session_markdown
from webclient.session.agent import AgentSession
from webclient.viewmodel.entries import MessageEntry
from webclient.web import history, shares
from webclient.web.context import base_context, manager, page, person, renderer, session_of, urls
from webclient.web.history import human_time
from webclient.web.live import LiveView, composer_nonce
from webclient.web.secrets_page import secrets_of
from webclient.web.session_docs import session_docs


async def index(request: Request) -> Response:
    return await _index(request)


async def _index(request: Request, refused: str | None = None, workspace: str = "", status: int = 400) -> Response:
    """The sessions (`webclient.web.history`) and the catalogue's agents to start; `refused` says why the last try did
    not start. A search from htmx (``HX-Target: history``) gets the sessions' block alone."""
    context = {"history": await history.history(request), "when": human_time}
    # One URL, two bodies (the page, or its sessions for htmx): a cache must tell them apart.
    vary = {"vary": "HX-Request, HX-Target"}
    if request.headers.get("hx-request") == "true" and request.headers.get("hx-target") == "history":
        block = renderer(request).block("index.html", "history", **base_context(request), **context)
        return HTMLResponse(block, headers=vary)
    response = page(
        request,
        "index.html",
        agents=list(manager(request).catalogue.entries.values()),
        lists_own=manager(request).listings.offered(
            manager(request).catalogue.entries.values(), manager(request).sessions.values()
        ),
        refused=refused,
        workspace=workspace,
        **context,
    )
    response.headers.update(vary)
    if refused is not None:
        response.status_code = status
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
        session = await manager(request).start(agent, workspace, own, owner=owner, env=env)
    except (UnknownAgent, WorkspaceRefused) as refused:
        return await _index(request, str(refused.args[0]), workspace)
    except LimitReached as limit:  # too many: 429, the page saying which limit
        return await _index(request, str(limit.args[0]), workspace, status=429)
    return RedirectResponse(urls(request).for_("session", session_id=session.id), status_code=303)


async def session_page(request: Request, **extra: object) -> Response:
    """A session's page; ``extra`` adds to its template's context (the embedded page's, `webclient.web.embed`)."""
    session = await session_of(request)
    docs = session_docs(request).of(session)
    now = time.monotonic()
    window = session.thread.latest(LiveView.WINDOW)  # older entries load as the page scrolls up
    ws_scheme = "wss" if request.url.scheme == "https" else "ws"
    embedded = "1" if extra.get("embedded") else None  # its socket's pushes leave the chrome out too
    socket_path = urls(request).for_("socket", session_id=session.id, embedded=embedded)
    response = page(
        request,
        "session.html",
        session=session,
        message=None,
        message_view=lambda entry: docs.view(entry, now) if isinstance(entry, MessageEntry) else None,
        nonce=composer_nonce(),
        oob=None,
        window=window,
        earlier=window[0].seq if window and window[0].seq > session.thread.first_seq else None,
        ws_url=f"{ws_scheme}://{request.url.netloc}{socket_path}",
        **await shares.panel_context(request, session),
        **extra,
    )
    shares.remember_link(request, response, session)
    return response


async def end_session(request: Request) -> Response:
    session = await session_of(request, "drive")
    await manager(request).end(session, person(request))
    return RedirectResponse(urls(request).for_("session", session_id=session.id), status_code=303)


async def export_session(request: Request) -> Response:
    """The whole session as a Markdown file."""
    session = await session_of(request)
    headers = {"content-disposition": f'attachment; filename="{export_filename(session.title)}"'}
    return Response(session_markdown(session), media_type="text/markdown; charset=utf-8", headers=headers)
