"""What every route module needs from a request: the session it names, the template context, a page."""

from __future__ import annotations

from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import HTTPConnection, Request
from starlette.responses import HTMLResponse

from webclient.people.person import Person
from webclient.render.diffs import diff_layout
from webclient.render.rendering import Renderer
from webclient.render.urls import Urls
from webclient.session.core import Session
from webclient.session.registry import SessionManager
from webclient.web.access import is_loopback


def manager(conn: HTTPConnection) -> SessionManager:
    sessions: SessionManager = conn.app.state.sessions
    return sessions


async def session_of(conn: HTTPConnection) -> Session:
    """The session named in the URL (in memory, or rebuilt from the store), or 404."""
    session = await manager(conn).open(conn.path_params["session_id"])
    if session is None:
        raise HTTPException(404, "No such session")
    return session


def urls(conn: HTTPConnection) -> Urls:
    """The app's URLs under the path prefix this connection came through (``root_path``, set by a reverse proxy)."""
    return Urls(conn.scope.get("root_path", ""))


def base_context(conn: HTTPConnection) -> dict[str, Any]:
    """What every template needs, without assuming an HTTP request (web socket pushes use it too)."""
    builder = urls(conn)
    diff_mode = diff_layout(conn.cookies.get("diff_mode"))
    csrf: str = conn.app.state.access.csrf_for(conn.scope)  # every form our pages post carries it (web.access)
    settings = getattr(conn.app.state, "settings", None)
    # The server listens on this machine only: a browser it opens (an agent's sign-in) is the user's own.
    server_local = settings is not None and is_loopback(settings.host)
    local = {"server_local": server_local, "person": conn.scope.get("person")}
    # Signed in by a signed-in session of ours (it can sign out), and whether the store keeps them (the people page).
    local |= {"signin": conn.scope.get("signin"), "signin_store": getattr(conn.app.state, "signins", None) is not None}
    return {"urls": builder, "static": builder.static, "diff_mode": diff_mode, "csrf": csrf, **local}


def renderer(conn: HTTPConnection) -> Renderer:
    shared: Renderer = conn.app.state.renderer
    return shared


def page(conn: Request, template: str, **context: Any) -> HTMLResponse:
    return HTMLResponse(renderer(conn).page(template, **base_context(conn), **context))


def small_int(value: str | None) -> int | None:
    """A non-negative integer from a query parameter, or None."""
    return int(value) if value and value.isdigit() and len(value) < 10 else None


def person(conn: HTTPConnection) -> Person:
    """Who this request comes from: the access guard (`webclient.web.access`) put them in the scope."""
    signed_in: Person = conn.scope["person"]
    return signed_in
