"""The settings page where a person keeps their secrets (API keys) for their agents: listed by name, added,
replaced and deleted; a value is never shown again (`webclient.store.secrets`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from webclient.web.context import page, person, urls

if TYPE_CHECKING:  # the store (and SQLAlchemy, cryptography) only when the server keeps one
    from webclient.store.secrets import Secrets


def secrets_of(request: Request) -> Secrets | None:
    kept: Secrets | None = getattr(request.app.state, "secrets", None)
    return kept


async def _form(request: Request) -> dict[str, str]:
    form = await request.form()
    return {key: value for key, value in form.items() if isinstance(value, str)}


async def secrets_page(request: Request) -> Response:
    """The person's secrets by name, and the form that adds or replaces one."""
    return await _page(request, saved=request.query_params.get("saved", "")[:200] or None)


async def _page(request: Request, refused: str | None = None, saved: str | None = None, name: str = "") -> Response:
    kept = secrets_of(request)
    names = await kept.names(person(request).id) if kept is not None else []
    stored = kept is not None
    response = page(request, "secrets.html", names=names, refused=refused, saved=saved, name=name, stored=stored)
    if refused is not None:
        response.status_code = 400
    return response


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
