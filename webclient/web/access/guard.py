"""Who may reach the server, and what the browser may do with its pages: the access guard.

One ASGI middleware, :class:`AccessGuard`, sees every HTTP request and every web socket handshake before
routing, so a route added later gets every check without doing anything:

1. **Host.** The ``Host`` header must name this server (a loopback name, the listen address, the address
   the connection arrived on, or ``WEBCLIENT_ALLOWED_HOSTS``). A page on a name the attacker controls that
   resolves to us (DNS rebinding) is refused before it learns anything.
2. **Sign-in.** ``WEBCLIENT_AUTH=token``: the sign-in token (random each start, or ``WEBCLIENT_TOKEN``) comes
   as ``?token=`` once or in the sign-in page's form (either signs the browser in and redirects), or as
   ``Authorization: token T`` (scripts). ``oidc``: the sign-in page sends the browser to the company's OpenID
   provider and back (`webclient.web.access.signin_flow`). Either way a browser is signed in by a cookie naming a
   signed-in session kept on the server (`webclient.web.access.signins`; ended by sign-out or an admin's Revoke, its
   web sockets too). ``trusted-header``: the proxy in front names the person (`webclient.web.access.trusted_header`).
   Without any: a sign-in page for a browser, 401 otherwise. Static files stay public: they are the same for
   everyone and hold nothing secret; so do the health probes ``/healthz`` and ``/readyz`` (ok or not, one word
   why). Whoever passes is ``scope["person"]``.
3. **Cross-site.** A request the browser makes on its own (signed in by the cookie, or every request when
   sign-in is off) that changes something (any method but GET, HEAD, OPTIONS, and every web socket) must
   come from one of our origins: ``Origin`` equal to an allowed origin, else ``Sec-Fetch-Site:
   same-origin``, else (a browser that sends neither) the page's CSRF token in the form field ``csrf`` or
   the header ``X-CSRF-Token``. ``Origin`` is never compared with the request's own ``Host``.

The token and what is derived from it, and the names this server answers to, are
:class:`webclient.web.access.access.Access`; :mod:`webclient.web.access.security_headers` adds Content-Security-Policy
and friends to every response, the guard's included.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl

from starlette.datastructures import Headers
from starlette.requests import cookie_parser
from starlette.responses import PlainTextResponse
from starlette.status import WS_1008_POLICY_VIOLATION
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from webclient.people.person import LOCAL, Person, is_reserved
from webclient.render.urls import ROUTES
from webclient.web.access import signin_flow
from webclient.web.access.access import Access, host_name, is_loopback
from webclient.web.access.arrival import local_address
from webclient.web.access.page_token import token_matches
from webclient.web.access.request_body import buffer_body
from webclient.web.access.signin_flow import SIGNIN_PATHS
from webclient.web.access.trusted_header import PROVEN

if TYPE_CHECKING:
    from webclient.web.access.signins import SignIns

log = logging.getLogger(__name__)

MAX_ADVICE = 16
"""Distinct pieces of advice on refused origins logged per process: the refused requests' senders choose them."""
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
PUBLIC_PREFIX = ROUTES["static"] + "/"
PROBES = frozenset({ROUTES["healthz"], ROUTES["readyz"]})
"""The health probes (`webclient.web.readiness`): a load balancer's or Kubernetes' requests, signed in by no one; they
say ok or not, and one word why."""


def until_ended(receive: Receive, send: Send, ended: asyncio.Event) -> Receive:
    """``receive`` for the app, but once ``ended`` is set the socket is closed with 1008 (policy violation), which the
    page takes for "signed out" (``static/js/socket-status.js``), and the app hears it disconnect."""

    async def receive_until_ended() -> Message:
        waiting = asyncio.ensure_future(receive())
        signed_out = asyncio.ensure_future(ended.wait())
        try:
            await asyncio.wait({waiting, signed_out}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            signed_out.cancel()
        if waiting.done():
            return waiting.result()
        waiting.cancel()
        with contextlib.suppress(Exception):  # the connection went meanwhile: disconnected either way
            await send({"type": "websocket.close", "code": WS_1008_POLICY_VIOLATION, "reason": "Signed out."})
        return {"type": "websocket.disconnect", "code": WS_1008_POLICY_VIOLATION}

    return receive_until_ended


def _route_path(scope: Scope) -> str:
    path: str = scope.get("path", "")
    root: str = scope.get("root_path", "")
    return path[len(root) :] if root and path.startswith(root) else path


class AccessGuard:
    """Host allowlist, sign-in and cross-site checks in front of every route and web socket."""

    def __init__(self, app: ASGIApp, access: Access) -> None:
        self.app = app
        self.access = access
        self.advised: set[str] = set()
        """The advice already logged (:meth:`_advise`)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        websocket = scope["type"] == "websocket"
        method = "WEBSOCKET" if websocket else scope["method"]
        path = _route_path(scope)
        name = host_name(headers.get("host", ""))
        if not self.access.host_allowed(scope, name):
            reason = f"This server does not answer to the name {name!r}; add it to WEBCLIENT_ALLOWED_HOSTS."
            await self._refuse(scope, receive, send, 400, reason)
            return
        if path in PROBES and method in ("GET", "HEAD"):  # before sign-in and the proxy's header: a probe has neither
            await self.app(scope, receive, send)
            return
        if self.access.trusted is not None:
            await self._through_proxy(scope, receive, send, headers, method, path)
            return
        if self.access.signin_off and not is_loopback(local_address(scope) or ""):
            await self._refuse(scope, receive, send, 403, "Sign-in is off, so this server answers on loopback only.")
            return
        if path in SIGNIN_PATHS and not websocket:
            await signin_flow.answer(self.access, scope, receive, send, path, method)
            return
        if path.startswith(PUBLIC_PREFIX) and method in ("GET", "HEAD"):
            await self.app(scope, receive, send)
            return
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True))
        if "token" in query and method in ("GET", "HEAD") and self.access.token is not None:
            await signin_flow.token_in_url(self.access, scope, receive, send, query)
            return
        signed_in = await self._signed_in(scope, headers)
        if signed_in is None:
            await self._refuse(scope, receive, send, 401, "Sign in first.")
            return
        how, person, key = signed_in
        scope["person"] = person
        scope["signin"] = key
        signins = signin_flow.signins_of(scope)
        if websocket and key is not None and signins is not None:
            await self._until_signed_out(scope, receive, send, headers, signins, key)
            return
        await self._from_our_pages(scope, receive, send, headers, how == "ambient")

    async def _through_proxy(
        self, scope: Scope, receive: Receive, send: Send, headers: Headers, method: str, path: str
    ) -> None:
        """Trusted-header mode: the proxy's header names the person; static files stay public."""
        if path.startswith(PUBLIC_PREFIX) and method in ("GET", "HEAD"):
            await self.app(scope, receive, send)
            return
        trusted = self.access.trusted
        person = trusted.person(scope, headers, scope.get(PROVEN)) if trusted else None
        if person is None:
            reason = "Sign in through the portal in front of this server: this request did not come through it."
            await self._refuse(scope, receive, send, 403, reason)
            return
        scope["person"] = person
        if is_reserved(person.id):  # token mode's person: their sessions stay the operator's, whatever a proxy says
            await self._refuse(scope, receive, send, 403, f"{person.id!r} is a name this server keeps for itself.")
            return
        signins = signin_flow.signins_of(scope)
        if signins is not None:
            await signins.seen(person)
        await self._from_our_pages(scope, receive, send, headers, True)

    async def _from_our_pages(
        self, scope: Scope, receive: Receive, send: Send, headers: Headers, ambient: bool
    ) -> None:
        """On to the app, once a request the browser makes on its own that changes something is from our pages."""
        if ambient and (scope["type"] == "websocket" or scope["method"] not in SAFE_METHODS):
            receive, refusal = await self._cross_site(scope, receive, headers)
            if refusal is not None:
                await self._refuse(scope, receive, send, 403, f"Refused: {refusal}.")
                return
        await self.app(scope, receive, send)

    async def _until_signed_out(
        self, scope: Scope, receive: Receive, send: Send, headers: Headers, signins: SignIns, key: str
    ) -> None:
        """A web socket signed in by a signed-in session: closed (1008) when that session ends (sign-out, Revoke),
        as the next request of its page would be refused."""
        ended = signins.watch(key)
        try:
            await self._from_our_pages(scope, until_ended(receive, send, ended), send, headers, True)
        finally:
            signins.unwatch(key, ended)

    async def _signed_in(self, scope: Scope, headers: Headers) -> tuple[str, Person, str | None] | None:
        """How this request is signed in, by whom, and its signed-in session's id (None for a script's token or
        token mode without a store); None if it is not. How: ``"header"`` (a script sent the token: nothing a
        foreign page can do) or ``"ambient"`` (the browser's cookie, or sign-in is off: any page could make the
        browser send it)."""
        access = self.access
        if access.signin_off:
            return "ambient", LOCAL, None
        scheme, _, value = headers.get("authorization", "").partition(" ")
        if scheme.lower() == "token" and access.token is not None:  # other schemes (a proxy's Basic) are not ours
            if hmac.compare_digest(value.strip().encode(), access.token.encode()):
                return "header", LOCAL, None
            return None
        # Starlette's lenient parser: other programs on localhost set cookies SimpleCookie would choke on.
        cookie = cookie_parser(headers.get("cookie", "")).get(access.cookie_name(scope))
        if cookie is None:
            return None
        signins = signin_flow.signins_of(scope)
        if signins is not None:
            found = await signins.person(cookie)
            return ("ambient", found[0], found[1]) if found is not None else None
        if access.token is not None and hmac.compare_digest(cookie.encode(), access.cookie_value.encode()):
            return "ambient", LOCAL, None
        return None

    async def _cross_site(self, scope: Scope, receive: Receive, headers: Headers) -> tuple[Receive, str | None]:
        """Why this request is not from one of our pages (None: it is), and the ``receive`` to go on with."""
        site = headers.get("sec-fetch-site")
        origin = headers.get("origin")
        if site in ("cross-site", "same-site"):
            return receive, f"this request comes from another site (Sec-Fetch-Site: {site})"
        if origin is not None:
            if self.access.origin_allowed(scope, origin) or site == "same-origin":
                return receive, None
            self._advise(scope, origin)
            return receive, f"this request comes from {origin}, which is not one of this server's origins"
        if site == "same-origin":
            return receive, None
        token = headers.get("x-csrf-token")
        content_type = headers.get("content-type", "")
        if token is None and scope["type"] == "http" and content_type.startswith("application/x-www-form-urlencoded"):
            body, receive = await buffer_body(receive)
            if body is not None:
                token = dict(parse_qsl(body.decode("latin-1"), keep_blank_values=True)).get("csrf")
        if token is not None and token_matches(token, self.access.csrf_for(scope)):  # masked on the page
            return receive, None
        return receive, "the browser said neither where this request comes from (Origin) nor sent the page's token"

    def _advise(self, scope: Scope, origin: str) -> None:
        """Log what to set for a refused origin that came through a proxy, once per sentence (a bounded few)."""
        advice = self.access.origin_advice(scope, origin)
        if advice is not None and advice not in self.advised and len(self.advised) < MAX_ADVICE:
            self.advised.add(advice)
            log.warning("refused an origin: %s", advice)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send, status: int, reason: str) -> None:
        """A refusal: a closed handshake for a web socket, the sign-in page for a browser's navigation,
        a sentence in plain text otherwise."""
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": WS_1008_POLICY_VIOLATION, "reason": reason[:120]})
            return
        headers = Headers(scope=scope)
        navigation = scope["method"] in ("GET", "HEAD") and "text/html" in headers.get("accept", "")
        if status == 401 and navigation:
            error = reason if reason != "Sign in first." else None
            await signin_flow.refuse_with_page(self.access, scope, receive, send, 401, error)
            return
        if status == 401:
            reason += (
                " Open the sign-in URL the server printed at start, or send 'Authorization: token TOKEN'."
                if self.access.auth == "token"
                else " Open this server's page in a browser to sign in."
            )
        response = PlainTextResponse(reason, status_code=status)
        if status == 401:
            response.headers["www-authenticate"] = "token"
        await response(scope, receive, send)
