"""The settings page where a person keeps their secrets (API keys) for their agents: listed by name, added,
replaced and deleted; a value is never shown again (`webclient.store.secrets`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from webclient.web.context import base_context, person, render, urls
from webclient.web.page_context import SignedInContext

if TYPE_CHECKING:  # the store (and SQLAlchemy, cryptography) only when the server keeps one
    from webclient.store.secrets import Secrets


def secrets_of(request: Request) -> Secrets | None:
    kept: Secrets | None = getattr(request.app.state, "secrets", None)
    return kept


async def _form(request: Request) -> dict[str, str]:
    form = await request.form()
    return {key: value for key, value in form.items() if isinstance(value, str)}


@dataclass(frozen=True, kw_only=True)
class SecretsContext(SignedInContext):
    """``secrets.html``: this person's secrets by name (never their values), and the form that adds one."""

    template = "secrets.html"
    names: list[tuple[str, datetime]]
    """The secrets kept: each one's name and when it was last set (never its value)."""
    refused: str | None
    """Why the last secret was not kept, if it was not."""
    saved: str | None
    """The name of the secret just kept."""
    name: str
    """The name typed (kept in the form after a refusal)."""
    stored: bool
    """Whether the server keeps secrets at all (it needs the store)."""


async def secrets_page(request: Request) -> Response:
    """The person's secrets by name, and the form that adds or replaces one."""
    return await _page(request, saved=request.query_params.get("saved", "")[:200] or None)


async def _page(request: Request, refused: str | None = None, saved: str | None = None, name: str = "") -> Response:
    kept = secrets_of(request)
    names = await kept.names(person(request).id) if kept is not None else []
    stored = kept is not None
    context = SecretsContext(
        **base_context(request), names=names, refused=refused, saved=saved, name=name, stored=stored
    )
    return render(request, context, 400 if refused is not None else 200)


async def save_secret(request: Request) -> Response:
    """Add or replace one secret (``name``, ``value``); the page again, saying what was kept (its name)."""
    from webclient.store.secrets import SecretRefused

    form = await _form(request)
    kept = secrets_of(request)
    name = form.get("name", "").strip()[:200]
    if kept is None:
        return await _page(request, "Secrets need the store (WEBCLIENT_STORE): nothing would keep them.", name=name)
    try:
        await kept.put(person(request).id, name, form.get("value", ""))
    except SecretRefused as refused:
        return await _page(request, str(refused), name=name)
    return RedirectResponse(urls(request).for_("secrets", saved=name), status_code=303)


async def delete_secret(request: Request) -> Response:
    form = await _form(request)
    kept = secrets_of(request)
    if kept is not None:
        await kept.delete(person(request).id, form.get("name", ""))
    return RedirectResponse(urls(request).for_("secrets"), status_code=303)
