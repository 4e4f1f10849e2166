"""The attributes of the cookies the server sets (sign-in, the OpenID binding, a share link's token).

As a rule ``HttpOnly; SameSite=Lax``, ``Secure`` over HTTPS. A browser does not send a ``Lax`` cookie inside a
frame whose page is of another site, so a portal of another site that frames the client
(``WEBCLIENT_FRAME_ANCESTORS`` naming other origins) would sign people in for nothing. There, for a request that
came over HTTPS (straight, or ``X-Forwarded-Proto`` from a trusted proxy: `webclient.web.access.root_path`), the cookies
are ``SameSite=None; Secure; Partitioned``: sent inside the frame, and kept apart per top-level site (CHIPS), so
what is signed in inside the portal is not signed in elsewhere, nor the other way round.

``SameSite=None`` lets other sites' requests carry the cookie; the access guard (`webclient.web.access.access`) still
refuses any of them that changes something or opens a web socket (``Sec-Fetch-Site``, ``Origin``, the page token).
Starlette writes ``Partitioned`` only on Python 3.14 and later, so it is added to the header here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from starlette.responses import Response
from starlette.types import Scope

SameSite = Literal["lax", "none"]
KEYWORDS = frozenset({"'self'", "'none'"})


def frames_other_sites(frame_ancestors: str) -> bool:
    """Whether ``WEBCLIENT_FRAME_ANCESTORS`` lets a page of another origin than ours frame the client."""
    return any(source.lower() not in KEYWORDS for source in frame_ancestors.split())


@dataclass(frozen=True)
class CookiePolicy:
    """How this server's cookies are marked; one per app (``app.state.cookies``)."""

    framed: bool = False
    """Other origins may frame the client: over HTTPS, cookies are sent inside their frames."""

    def cross_site(self, scope: Scope) -> bool:
        """Whether this request's cookies are ``SameSite=None; Secure; Partitioned``."""
        return self.framed and secure(scope)

    def set(self, scope: Scope, response: Response, key: str, value: str, path: str, max_age: int | None) -> None:
        """Make ``response`` set cookie ``key``, for ``path``, as this request's cookies are marked."""
        cross = self.cross_site(scope)
        response.set_cookie(
            key,
            value,
            max_age=max_age,
            path=path,
            httponly=True,
            samesite="none" if cross else "lax",
            secure=cross or secure(scope),
        )
        if cross:
            _partitioned(response)

    def delete(self, scope: Scope, response: Response, key: str, path: str) -> None:
        """Make ``response`` remove cookie ``key`` (marked as it was set: a partitioned one is removed in its
        partition only)."""
        cross = self.cross_site(scope)
        samesite: SameSite = "none" if cross else "lax"
        response.delete_cookie(key, path=path, httponly=True, samesite=samesite, secure=cross or secure(scope))
        if cross:
            _partitioned(response)


def secure(scope: Scope) -> bool:
    """Whether the browser reached us over HTTPS (as the scheme says, a trusted proxy's word included)."""
    return scope.get("scheme") in ("https", "wss")


def policy(scope: Scope) -> CookiePolicy:
    """The app's cookie policy (the plain one for an app made without it)."""
    app = scope.get("app")
    found = getattr(app.state, "cookies", None) if app is not None else None
    return found if isinstance(found, CookiePolicy) else CookiePolicy()


def _partitioned(response: Response) -> None:
    name, value = response.raw_headers[-1]
    assert name == b"set-cookie", f"expected the cookie just set, got {name!r}"
    response.raw_headers[-1] = (name, value + b"; Partitioned")
