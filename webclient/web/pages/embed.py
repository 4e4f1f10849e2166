"""The embedding API: a session page without the site chrome, for a portal's iframe (``docs/embedding.md``).

``GET /embed?agent=&workspace=&prompt=&theme=&accent=`` changes nothing: it shows what would start, and a Start
button. Only its form's POST (the page token, from our own page) starts the session and sends the first prompt, so
no other site can start an agent or send a prompt by a link; ``static/js/embed.js`` submits it on its own when the
page is framed, and only sites that ``WEBCLIENT_FRAME_ANCESTORS`` names may frame it. The session then shows at
``/embed/sessions/{id}``, whose script tells the host what happens (``postMessage``, to allowed origins only) and
takes its commands (from the parent window of an allowed origin only).

Whatever a query parameter says is checked here, strictly, before a template sees it: a theme is one of two words,
an accent is ``#RRGGBB``, an agent is one of the catalogue's; anything else is refused with 400.
"""

from __future__ import annotations

import contextlib
import re
import secrets
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from starlette.datastructures import FormData, QueryParams
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response

from webclient.agents.catalogue import UnknownAgent, WorkspaceRefused
from webclient.agents.limits import LimitReached
from webclient.render.text import scrub
from webclient.session.agent_entry import AgentEntry
from webclient.session.prompt_queue import PromptRefused
from webclient.web.context import base_context, manager, person, render, session_of, urls
from webclient.web.page_context import SignedInContext
from webclient.web.pages import sessions
from webclient.web.pages.secrets_page import secrets_of

THEMES = frozenset({"light", "dark"})
ACCENT = re.compile(r"#[0-9a-fA-F]{6}")
MAX_PROMPT = 20_000
"""Characters a first prompt may have in the URL (browsers and proxies cap URLs at a few tens of kilobytes)."""
MAX_WORKSPACE = 1_000
MAX_AGENT = 200
_ORIGIN = re.compile(r"https?://[a-z0-9.-]+(:[0-9]{1,5})?")
"""An origin a page can post a message to: no wildcard, no path (``frame-ancestors`` sources may have either)."""


class EmbedRefused(ValueError):
    """A query parameter (or form field) of the embedding API that is not what it must be: its message says why."""


@dataclass(frozen=True)
class Embedding:
    """What the host asked for, checked: every field is safe to put in a page (and escaped there all the same)."""

    agent: str | None
    workspace: str
    prompt: str
    theme: str | None
    accent: str | None

    @classmethod
    def parse(cls, fields: QueryParams | FormData, agents: frozenset[str]) -> Embedding:
        """The embedding ``fields`` ask for.

        Raises:
            EmbedRefused: a theme, accent or agent that is not one of what is allowed, or a field too long.
        """
        agent = _text(fields, "agent", MAX_AGENT) or None
        if agent is not None and agent not in agents:
            raise EmbedRefused(f"No agent is called {agent!r} here.")
        theme = _text(fields, "theme", 10) or None
        if theme is not None and theme not in THEMES:
            raise EmbedRefused("theme must be light or dark.")
        accent = _text(fields, "accent", 7) or None
        if accent is not None and not ACCENT.fullmatch(accent):
            raise EmbedRefused("accent must be a colour written #RRGGBB.")
        return cls(agent, _text(fields, "workspace", MAX_WORKSPACE), _text(fields, "prompt", MAX_PROMPT), theme, accent)

    @property
    def look(self) -> dict[str, str]:
        """The theme and accent, as query parameters (the session's page is dressed as the start page was)."""
        return {key: value for key, value in (("theme", self.theme), ("accent", self.accent)) if value}


def _text(fields: QueryParams | FormData, name: str, limit: int) -> str:
    value = fields.get(name)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise EmbedRefused(f"{name} must be text.")
    if len(value) > limit:
        raise EmbedRefused(f"{name} is too long (at most {limit:,} characters).")
    return scrub(value)


def message_origins(frame_ancestors: str) -> list[str]:
    """The origins that ``WEBCLIENT_FRAME_ANCESTORS`` names exactly, to which the embedded page posts its messages
    and from which it takes commands (besides its own origin). A source with a wildcard (``https://*.corp``), a
    scheme alone (``https:``) or a keyword may frame the page but is never written to: a message goes to an origin
    the operator wrote out."""
    origins: list[str] = []
    for source in frame_ancestors.split():
        parts = urlsplit(source.lower())
        origin = f"{parts.scheme}://{parts.netloc}"
        if parts.scheme and parts.netloc and _ORIGIN.fullmatch(origin) and origin not in origins:
            origins.append(origin)
    return origins


def _agents(request: Request) -> frozenset[str]:
    return frozenset(manager(request).catalogue.entries)


async def embed(request: Request) -> Response:
    """``GET``: the start page (changes nothing). ``POST``: start the session, send the first prompt, show it."""
    fields = await request.form() if request.method == "POST" else request.query_params
    try:
        asked = Embedding.parse(fields, _agents(request))
    except EmbedRefused as refused:
        return PlainTextResponse(str(refused), status_code=400)
    if request.method != "POST":
        return _start_page(request, asked)
    owner = person(request)
    kept = secrets_of(request)
    env = await kept.env(owner.id) if kept is not None else None  # the person's secrets, for their agent only
    try:
        session = await manager(request).start(asked.agent, asked.workspace, owner=owner, env=env)
    except (UnknownAgent, WorkspaceRefused) as refused:
        return _start_page(request, asked, str(refused.args[0]), 400)
    except LimitReached as limit:
        return _start_page(request, asked, str(limit.args[0]), limit.status)
    if asked.prompt.strip():
        with contextlib.suppress(PromptRefused):  # too long: the session's page says so
            session.submit_prompt(asked.prompt, secrets.token_urlsafe(16), by=owner)
    url = urls(request).for_("embed_session", session_id=session.id, created="1", **asked.look)
    return RedirectResponse(url, status_code=303)


@dataclass(frozen=True, kw_only=True)
class EmbedContext(SignedInContext):
    """``embed.html``: the embedded start page (what a portal's iframe opens), which starts the session asked for."""

    template = "embed.html"
    asked: Embedding
    """What the host asked for (agent, folder, first prompt, look), checked."""
    agent: AgentEntry
    """The catalogue's agent it asked for."""
    refused: str | None
    """Why the session did not start, if it did not."""


def _start_page(request: Request, asked: Embedding, refused: str | None = None, status: int = 200) -> HTMLResponse:
    entry = manager(request).catalogue.get(asked.agent)  # checked by Embedding.parse
    context = EmbedContext(**base_context(request), asked=asked, agent=entry, refused=refused, **_dress(request, asked))
    return render(request, context, status)


def _dress(request: Request, asked: Embedding) -> dict[str, Any]:
    """What an embedded page's templates need: no chrome, the host's theme, who it talks to."""
    origins = message_origins(request.app.state.settings.frame_ancestors)
    return {"embedded": True, "theme": asked.theme, "accent": asked.accent, "message_origins": origins}


async def embed_session(request: Request) -> Response:
    """A session's page without the site chrome, dressed in the host's theme."""
    try:
        asked = Embedding.parse(request.query_params, _agents(request))
    except EmbedRefused as refused:
        return PlainTextResponse(str(refused), status_code=400)
    return await sessions.session_page(request, **_dress(request, asked), look=asked.look)


async def embed_end(request: Request) -> Response:
    """End the session from its embedded page, and come back to it (not to the site's page)."""
    session = await session_of(request, "drive")
    await manager(request).end(session, person(request))
    form = await request.form()
    try:
        asked = Embedding.parse(form, _agents(request))
    except EmbedRefused:
        asked = Embedding(None, "", "", None, None)
    # ``ended=1``: the page that comes back tells its host the session ended (then drops the flag, as ``created``).
    url = urls(request).for_("embed_session", session_id=session.id, ended="1", **asked.look)
    return RedirectResponse(url, status_code=303)
