"""What every route module needs from a request: the session it names, the template context, a page."""

from __future__ import annotations

from typing import Any, Literal

from starlette.exceptions import HTTPException
from starlette.requests import HTTPConnection, Request
from starlette.responses import HTMLResponse

from webclient.agents.manager import SessionManager
from webclient.people.person import Person
from webclient.people.roles import Role, may_drive, role_of
from webclient.render.diffs import diff_layout
from webclient.render.rendering import Renderer
from webclient.render.urls import Urls
from webclient.session.core import Session
from webclient.web.access.access import is_loopback
from webclient.web.access.page_token import masked
from webclient.web.page_context import BaseContext


def manager(conn: HTTPConnection) -> SessionManager:
    sessions: SessionManager = conn.app.state.sessions
    return sessions


Need = Literal["watch", "drive", "owner"]
"""What a route does with a session: read it (``watch``), change it (``drive``: prompt, answer, Stop, upload), or
what only its owner may (``owner``: archive, delete)."""

SHARE_PARAM = "share"
"""The query parameter, or cookie, a share link's token comes as (the sharing feature sets it)."""


def link_token(conn: HTTPConnection) -> str | None:
    """The share link's token this request came with, if any (the query's ``share``, else the cookie)."""
    token = conn.query_params.get(SHARE_PARAM) or conn.cookies.get(SHARE_PARAM)
    return token[:200] if token else None


def role_in(conn: HTTPConnection, session: Session) -> Role | None:
    """What the person this request comes from may do with ``session`` (None: nothing; it does not exist for them)."""
    return role_of(person(conn), session.owner, session.shares, link_token(conn))


def allowed(conn: HTTPConnection, session: Session, need: Need = "watch") -> Session:
    """``session``, if the person may do what ``need`` says with it.

    Raises:
        HTTPException: 404 when the session is not theirs to see (as if it did not exist), 403 when they may see it
            but not do this (a watcher that tries to change it, a driver that tries to delete it).
    """
    role = role_in(conn, session)
    if role is None:
        raise HTTPException(404, "No such session")
    if (need == "drive" and not may_drive(role)) or (need == "owner" and role != "owner"):
        why = "You may watch this session, not change it." if need == "drive" else "Only its owner may do this."
        raise HTTPException(403, why)
    return session


async def session_of(conn: HTTPConnection, need: Need = "watch") -> Session:
    """The session named in the URL (in memory, or rebuilt from the store), if the person may ``need`` it; else 404
    (another person's session does not exist for them) or 403 (see `allowed`). Every route and web socket of a
    session comes through here."""
    session_id: str = conn.path_params["session_id"]
    sessions = manager(conn)
    if sessions.get(session_id) is None and not await _may_rebuild(conn, session_id):
        raise HTTPException(404, "No such session")
    session = await sessions.open(session_id)
    if session is None:
        raise HTTPException(404, "No such session")
    return allowed(conn, session, need)


async def owned(conn: HTTPConnection) -> None:
    """Check that the person owns the session named in the URL (or is an admin), without rebuilding a stored one
    (a share never makes someone its owner, so its row says): for archiving and deleting from the index.

    Raises:
        HTTPException: 404 (no such session, or not theirs to see), 403 (shared with them, not theirs).
    """
    session_id: str = conn.path_params["session_id"]
    live = manager(conn).get(session_id)
    store = getattr(conn.app.state, "store", None)
    if live is not None or store is None:
        await session_of(conn, "owner")
        return
    row = await store.session_row(session_id)
    viewer = person(conn)
    if row is None:
        raise HTTPException(404, "No such session")
    if role_of(viewer, row.owner) != "owner":
        if not await store.visible(session_id, viewer, link_token(conn)):
            raise HTTPException(404, "No such session")
        raise HTTPException(403, "Only its owner may do this.")


async def _may_rebuild(conn: HTTPConnection, session_id: str) -> bool:
    """Whether a stored session may be rebuilt for this person: one that is not theirs to see is not (reading its
    journal costs what its size does; another person could otherwise make the server read every one)."""
    store = getattr(conn.app.state, "store", None)
    viewer = person(conn)
    if store is None or viewer.admin or len(session_id) > 64:
        return True  # nothing to rebuild, or everything is theirs to see
    visible: bool = await store.visible(session_id, viewer, link_token(conn))
    return visible


def urls(conn: HTTPConnection) -> Urls:
    """The app's URLs under the path prefix this connection came through (``root_path``, set by a reverse proxy)."""
    return Urls(conn.scope.get("root_path", ""), conn.app.state.assets.versions)


def base_context(conn: HTTPConnection) -> dict[str, Any]:
    """What every template needs, without assuming an HTTP request (web socket pushes use it too): the fields of
    :class:`webclient.web.page_context.SignedInContext` that every page fills from it."""
    builder = urls(conn)
    diff_mode = diff_layout(conn.cookies.get("diff_mode"))
    # Every form our pages post carries it (web.access), masked afresh on every page: pages are compressed (BREACH).
    csrf = masked(conn.app.state.access.csrf_for(conn.scope))
    settings = getattr(conn.app.state, "settings", None)
    # The server listens on this machine only: a browser it opens (an agent's sign-in) is the user's own.
    server_local = settings is not None and is_loopback(settings.host)
    local = {"server_local": server_local, "person": conn.scope.get("person")}
    # Signed in by a signed-in session of ours (it can sign out), and whether the store keeps them (the people page).
    local |= {"signin": conn.scope.get("signin"), "signin_store": getattr(conn.app.state, "signins", None) is not None}
    readiness = getattr(conn.app.state, "readiness", None)
    local["restarting"] = readiness is not None and readiness.draining
    return {"urls": builder, "static": builder.static, "diff_mode": diff_mode, "csrf": csrf, **local}


def renderer(conn: HTTPConnection) -> Renderer:
    shared: Renderer = conn.app.state.renderer
    return shared


def render(conn: Request, context: BaseContext, status_code: int = 200) -> HTMLResponse:
    """A page: its template rendered with its typed context (`webclient.web.page_context`)."""
    return HTMLResponse(renderer(conn).page(context.template, **context.as_dict()), status_code=status_code)


def small_int(value: str | None) -> int | None:
    """A non-negative integer from a query parameter, or None."""
    return int(value) if value and value.isdigit() and len(value) < 10 else None


def person(conn: HTTPConnection) -> Person:
    """Who this request comes from: the access guard (`webclient.web.access.access`) put them in the scope."""
    signed_in: Person = conn.scope["person"]
    return signed_in
