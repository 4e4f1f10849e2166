"""Who is signed in: the admins' page of people and their signed-in sessions, with Revoke, and everyone's sign-out.

The page is for admins only (anyone else gets 404, as for a page that is not theirs); it needs the store, where
people and sign-ins are kept. Revoke ends a signed-in session at once: its cookie gets the sign-in page, and its web
sockets are closed (`webclient.web.access.signins`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from webclient.config import Auth
from webclient.render.urls import SIGN_IN_PATH
from webclient.web.access import server_audit
from webclient.web.access.signin_flow import signed_out, signins_of
from webclient.web.context import base_context, person, render, urls
from webclient.web.page_context import SignedInContext

if TYPE_CHECKING:
    from webclient.store.people import PersonRow
    from webclient.web.access.signins import SignIns

SIGNIN_ID = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True, kw_only=True)
class PeopleContext(SignedInContext):
    """``people.html``: the admins' page of everyone the server has seen and their signed-in sessions."""

    template = "people.html"
    people: list[PersonRow]
    """Everyone, newest first, each with their signed-in sessions."""
    current: str | None
    """The signed-in session this page was asked with (revoking it signs oneself out)."""
    auth: Auth
    """How people sign in (``WEBCLIENT_AUTH``)."""
    admin_group: str
    """The group whose members are admins (``WEBCLIENT_ADMIN_GROUP``)."""


def _signins(request: Request) -> SignIns:
    """The server's signed-in sessions, for an admin; 404 for anyone else or without a store."""
    signins = signins_of(request.scope)
    if signins is None or not person(request).admin:
        raise HTTPException(404, "Not found")
    return signins


async def people_page(request: Request) -> Response:
    """Everyone the server has seen, newest first, each with their signed-in sessions and a Revoke button."""
    from webclient.store import people as stored  # here, as the store itself (web/app.py): SQLAlchemy is slow to import

    signins = _signins(request)
    everyone = await stored.everyone(signins.engine, datetime.now(UTC))
    settings = request.app.state.settings
    context = PeopleContext(
        **base_context(request),
        people=everyone,
        current=request.scope.get("signin"),
        auth=settings.auth,
        admin_group=settings.admin_group,
    )
    return render(request, context)


async def revoke_signin(request: Request) -> Response:
    """End one signed-in session (an admin's Revoke); back to the page. Revoking one's own signs oneself out."""
    from webclient.store import people as stored

    signins = _signins(request)
    signin_id = request.path_params["signin_id"]
    if SIGNIN_ID.fullmatch(signin_id):
        found = await stored.signed_in(signins.engine, signin_id, datetime.now(UTC))
        if await signins.end(signin_id) and found is not None:  # one already gone is what was asked for
            detail = {"of": found[0].id, "name": found[0].label}
            server_audit.record(request.scope, person(request), "revoke-signin", detail)
    if signin_id == request.scope.get("signin"):
        return _to_signin(request)
    return RedirectResponse(urls(request).for_("people"), status_code=303)


async def sign_out(request: Request) -> Response:
    """End this browser's signed-in session and forget its cookie; the sign-in page follows. Behind a trusted
    proxy there is nothing of ours to end: signing out is the portal's."""
    signins = signins_of(request.scope)
    key = request.scope.get("signin")
    if signins is not None and key is not None:
        await signins.end(key)
        server_audit.record(request.scope, person(request), "sign-out", {})
    elif request.app.state.access.trusted is not None:
        return RedirectResponse(urls(request).for_("index"), status_code=303)
    return _to_signin(request)


def _to_signin(request: Request) -> Response:
    response = RedirectResponse(urls(request).root + SIGN_IN_PATH, status_code=303)
    response.headers["cache-control"] = "no-store"
    signed_out(request.app.state.access, request.scope, response)
    return response
