"""The page of an agent's own sessions (those it lists), each of which a person may continue here."""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from webclient.session.agent_sessions import CannotList, list_agent_sessions
from webclient.session.catalogue import UnknownAgent
from webclient.session.homes import home_env
from webclient.web.context import manager, page, person
from webclient.web.secrets_page import secrets_of


async def agent_sessions_page(request: Request) -> Response:
    sessions = manager(request)
    try:
        entry = sessions.catalogue.get(request.path_params["agent"])
    except UnknownAgent:
        raise HTTPException(404, "No such agent") from None
    listed, problem = None, None
    owner = person(request)
    kept = secrets_of(request)
    # As the person's own agents run: their home (where an agent keeps its sessions) and their secrets.
    env = {**home_env(sessions.settings, owner.id), **(await kept.env(owner.id) if kept is not None else {})}
    try:
        max_line_bytes = sessions.settings.max_line_mb * 1024 * 1024
        listed = await list_agent_sessions(entry, sessions.agent, max_line_bytes, env, sessions.settings)
    except CannotList as cannot:
        problem = str(cannot)
    response = page(request, "agent_sessions.html", agent=entry, listed=listed, problem=problem)
    if problem is not None:
        response.status_code = 502
    return response
