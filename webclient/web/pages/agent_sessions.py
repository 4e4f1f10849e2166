"""The page of an agent's own sessions (those it lists), each of which a person may continue here.

Listing them starts the agent (unless a session of the person's runs it), so a request that lists must come from
our own pages, as every request that changes something must (`webclient.web.access.access`): a link followed on our page
(``Sec-Fetch-Site: same-origin``), an address the person typed (``none``), a script with the token, or the POST of
the page's button. Any other GET (another site's link, image or frame) gets that button, and starts nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from webclient.agents.agent_sessions import CannotList, Listed, listed_for
from webclient.agents.catalogue import UnknownAgent, WorkspaceRefused
from webclient.agents.limits import LimitReached
from webclient.session.agent_entry import AgentEntry
from webclient.web.context import base_context, manager, person, render
from webclient.web.page_context import SignedInContext
from webclient.web.pages.secrets_page import secrets_of

OUR_PAGES = frozenset({"same-origin", "none"})
"""The ``Sec-Fetch-Site`` of a request that a person made on our pages or by typing the address."""


@dataclass(frozen=True, kw_only=True)
class AgentSessionsContext(SignedInContext):
    """``agent_sessions.html``: an agent's own sessions of this person, as the agent lists them, to continue one."""

    template = "agent_sessions.html"
    agent: AgentEntry
    """The catalogue's agent."""
    confirm: bool
    """Not asked from our pages: a button to ask for the list (listing starts the agent)."""
    listed: Listed = None
    """What the agent listed; None when not asked or it could not."""
    problem: str | None = None
    """Why the agent could not list its sessions."""


def from_our_pages(request: Request) -> bool:
    """Whether this request may start an agent: a POST (the access guard checked where it came from), a browser's
    request from our pages or its address bar, or a script's (the sign-in token in its header, checked by the guard)."""
    if request.method == "POST" or request.headers.get("sec-fetch-site") in OUR_PAGES:
        return True
    scheme, _, _ = request.headers.get("authorization", "").partition(" ")
    access = request.app.state.access
    return scheme.lower() == "token" and access.auth == "token" and access.token is not None


async def agent_sessions_page(request: Request) -> Response:
    sessions = manager(request)
    try:
        entry = sessions.catalogue.get(request.path_params["agent"])
    except UnknownAgent:
        raise HTTPException(404, "No such agent") from None
    if not from_our_pages(request):
        return render(request, AgentSessionsContext(**base_context(request), agent=entry, confirm=True))
    listed, problem, status = None, None, 200
    owner = person(request)
    kept = secrets_of(request)
    try:
        # As the person's own agents run: in their folder, with their home (where an agent keeps its sessions) and
        # their secrets.
        theirs = entry.for_person(owner.id)
        env = await kept.env(owner.id) if kept is not None else {}
        probe = sessions.agent_spec(theirs, theirs.workspace or theirs.roots[0], owner.id, env)
        listed = await listed_for(
            theirs, owner.id, sessions.sessions.values(), sessions.listings, sessions.agent, probe, sessions.settings
        )
    except CannotList as cannot:
        problem, status = str(cannot), 502
    except WorkspaceRefused as refused:
        problem, status = str(refused), 403
    except LimitReached as limit:
        problem, status = str(limit.args[0]), 429
    context = AgentSessionsContext(**base_context(request), agent=entry, listed=listed, problem=problem, confirm=False)
    return render(request, context, status)
