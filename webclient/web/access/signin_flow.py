"""The ways in that the access guard (`webclient.web.access.guard`) answers itself, before routing, since they are for
someone not signed in yet: the sign-in page (``/signin``) and its token form, ``?token=`` in any URL (token mode), and
the OpenID provider's round trip (``/signin/oidc``: off to the provider; ``/signin/oidc/callback``: back, signed in).

Signing in makes a signed-in session on the server (`web.access.signins`) whose random id is the cookie; with no
store (token mode, ``WEBCLIENT_STORE=off``) the cookie is derived from the token as before, and lasts as long as it.

The callback is bound to the browser that started the sign-in (a short-lived cookie whose value the pending sign-in
remembers), so a link to someone else's callback cannot sign a person in as someone else.
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

from starlette.datastructures import Headers
from starlette.requests import cookie_parser
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.types import Receive, Scope, Send

from webclient.config import Auth
from webclient.people.person import LOCAL, Person, is_reserved
from webclient.render.urls import OIDC_CALLBACK_PATH, OIDC_START_PATH, SIGN_IN_PATH, Urls
from webclient.web.access import cookies, server_audit
from webclient.web.access.access import Access
from webclient.web.access.browser_origin import browser_origin
from webclient.web.access.request_body import buffer_body
from webclient.web.page_context import BaseContext

if TYPE_CHECKING:
    from webclient.web.access.signins import SignIns

SIGNIN_PATHS = frozenset({SIGN_IN_PATH, OIDC_START_PATH, OIDC_CALLBACK_PATH})


def signins_of(scope: Scope) -> SignIns | None:
    """The server's signed-in sessions (None without a store: token mode's derived cookie then)."""
    app = scope.get("app")
    return getattr(app.state, "signins", None) if app is not None else None


def _root(scope: Scope) -> str:
    root: str = scope.get("root_path", "")
    return root


def _query(scope: Scope) -> dict[str, str]:
    return dict(parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True))


async def answer(access: Access, scope: Scope, receive: Receive, send: Send, path: str, method: str) -> None:
    """One of :data:`SIGNIN_PATHS`."""
    if path == SIGN_IN_PATH:
        await signin_form(access, scope, receive, send, method)
    elif access.oidc is None or method not in ("GET", "HEAD"):
        await PlainTextResponse("Not found", status_code=404)(scope, receive, send)
    elif path == OIDC_START_PATH:
        await oidc_start(access, scope, receive, send)
    else:
        await oidc_callback(access, scope, receive, send)


async def signin_form(access: Access, scope: Scope, receive: Receive, send: Send, method: str) -> None:
    """``/signin``: the page (the token to paste, or the provider's button), and the token form's POST."""
    index = Urls(_root(scope)).for_("index")
    if method in ("GET", "HEAD"):
        target = local_path(_query(scope).get("next", ""), index)
        await signin_page(access, scope, receive, send, 200, None, target)
        return
    if method != "POST" or access.token is None:
        await PlainTextResponse("Method not allowed", status_code=405)(scope, receive, send)
        return
    body, receive = await buffer_body(receive)
    form = dict(parse_qsl((body or b"").decode("utf-8", "replace"), keep_blank_values=True))
    target = local_path(form.get("next", ""), index)
    if not hmac.compare_digest(form.get("token", "").strip().encode(), access.token.encode()):
        await signin_page(access, scope, receive, send, 401, "That token is not right.", target)
        return
    await signed_in_redirect(access, scope, receive, send, target, LOCAL, "token")


async def token_in_url(access: Access, scope: Scope, receive: Receive, send: Send, query: dict[str, str]) -> None:
    """``?token=T``: the right token signs the browser in and redirects to the same URL without it."""
    assert access.token is not None
    if not hmac.compare_digest(query["token"].encode(), access.token.encode()):
        await refuse_with_page(access, scope, receive, send, 401, "That sign-in token is not right.")
        return
    index = Urls(_root(scope)).for_("index")
    await signed_in_redirect(access, scope, receive, send, local_path(browser_url(scope), index), LOCAL, "token")


async def signed_in_redirect(
    access: Access, scope: Scope, receive: Receive, send: Send, target: str, person: Person, method: str
) -> None:
    """Sign the browser in as ``person`` (a signed-in session on the server, its id the cookie) and go on."""
    response = RedirectResponse(target, status_code=303, headers={"cache-control": "no-store"})
    signins = signins_of(scope)
    if signins is None:
        value, max_age = access.cookie_value, None
    else:
        value = await signins.start(person, method, Headers(scope=scope).get("user-agent", ""))
        max_age = int(signins.lasts.total_seconds())
        server_audit.record(scope, person, "sign-in", {"method": method})
    cookies.policy(scope).set(scope, response, access.cookie_name(scope), value, _root(scope) or "/", max_age)
    await response(scope, receive, send)


def signed_out(access: Access, scope: Scope, response: Response) -> None:
    """Make ``response`` remove the sign-in cookie."""
    cookies.policy(scope).delete(scope, response, access.cookie_name(scope), _root(scope) or "/")


def _binding_cookie(access: Access, scope: Scope) -> str:
    return access.cookie_name(scope) + "-oidc"


async def oidc_start(access: Access, scope: Scope, receive: Receive, send: Send) -> None:
    """``/signin/oidc?next=PATH``: off to the provider, with a new state, nonce and PKCE verifier."""
    from webclient.web.access.oidc import PENDING_SECONDS, SignInFailed

    assert access.oidc is not None
    urls = Urls(_root(scope))
    target = local_path(_query(scope).get("next", ""), urls.for_("index"))
    binding = secrets.token_urlsafe(24)
    try:
        url = await access.oidc.start(callback_url(scope), target, binding)
    except SignInFailed as failed:
        await signin_page(access, scope, receive, send, 502, str(failed), target)
        return
    response = RedirectResponse(url, status_code=303, headers={"cache-control": "no-store"})
    path = _root(scope) + SIGN_IN_PATH
    cookies.policy(scope).set(scope, response, _binding_cookie(access, scope), binding, path, PENDING_SECONDS)
    await response(scope, receive, send)


async def oidc_callback(access: Access, scope: Scope, receive: Receive, send: Send) -> None:
    """``/signin/oidc/callback``: the provider's answer; the person is signed in, their row kept up to date."""
    from webclient.web.access.oidc import SignInFailed, groups_of

    assert access.oidc is not None
    index = Urls(_root(scope)).for_("index")
    binding = cookie_parser(Headers(scope=scope).get("cookie", "")).get(_binding_cookie(access, scope), "")
    try:
        claims, target = await access.oidc.finish(_query(scope), binding)
    except SignInFailed as failed:
        await signin_page(access, scope, receive, send, 401, str(failed), index)
        return
    if is_reserved(str(claims["sub"])):  # token mode's person's id: never a person of the provider's
        await signin_page(access, scope, receive, send, 401, "This account's id is one this server keeps.", index)
        return
    groups = groups_of(claims, access.oidc_groups_claim)
    email = verified_email(claims)
    named = {**claims, "email": email}  # an address the provider did not check is not even shown as a name
    name = next((str(named[k]) for k in ("name", "preferred_username", "email") if named.get(k)), "")
    person = Person(
        id=str(claims["sub"]), name=name[:200], email=email, groups=groups, admin=access.admin_group in groups
    )
    await signed_in_redirect(access, scope, receive, send, local_path(target, index), person, "oidc")


def verified_email(claims: dict[str, Any]) -> str | None:
    """The person's e-mail address, if their provider says it checked it (``email_verified``): sharing by e-mail
    names people by it, and a provider that lets anyone type any address would let them take another's shares. Some
    providers' userinfo says ``"true"``, a string."""
    email = claims.get("email")
    return email if isinstance(email, str) and email and claims.get("email_verified") in (True, "true") else None


def callback_url(scope: Scope) -> str:
    """Where the provider sends the browser back: this server as the browser reached it (its origin, through the
    trusted proxy the one it forwards, and the prefix)."""
    seen = browser_origin(scope)
    scheme = "https" if cookies.secure(scope) else "http"
    origin = str(seen) if seen is not None else f"{scheme}://{Headers(scope=scope).get('host', '')}"
    return f"{origin}{_root(scope)}{OIDC_CALLBACK_PATH}"


def browser_url(scope: Scope) -> str:
    """The path and query the browser asked for (prefix included), without a ``token`` parameter."""
    raw = scope.get("raw_path")
    path = raw.decode("latin-1") if raw else quote(scope.get("path", "/"))
    query = [(k, v) for k, v in parse_qsl(scope.get("query_string", b"").decode("latin-1"), True) if k != "token"]
    return path + (f"?{urlencode(query)}" if query else "")


def local_path(value: str, fallback: str) -> str:
    """``value`` if it is a path of this site (never another host: no open redirect), else ``fallback``."""
    parts = urlsplit(value)
    if (
        not value.startswith("/")
        or value.startswith("//")
        or "\\" in value
        or parts.scheme
        or parts.netloc
        or any(ord(c) < 0x20 or ord(c) == 0x7F for c in value)
    ):
        return fallback
    return value


async def refuse_with_page(
    access: Access, scope: Scope, receive: Receive, send: Send, status: int, error: str | None
) -> None:
    """The sign-in page in answer to a browser's navigation, to come back to where it was going."""
    await signin_page(access, scope, receive, send, status, error, browser_url(scope))


@dataclass(frozen=True, kw_only=True)
class SigninContext(BaseContext):
    """``signin.html``: the sign-in page (the token to paste, or the provider's button), for one not signed in yet."""

    template = "signin.html"
    error: str | None
    """Why the last try failed, or why this page is shown instead of the one asked for."""
    next_path: str
    """Where the browser goes once signed in (a path of this site)."""
    auth: Auth
    """How people sign in (``WEBCLIENT_AUTH``)."""
    signin_off: bool
    """Sign-in is off (``--no-token``): nothing to sign in with."""
    oidc_url: str
    """The OpenID provider's button: off to the provider, to come back to ``next_path``."""


async def signin_page(
    access: Access, scope: Scope, receive: Receive, send: Send, status: int, error: str | None, next_path: str
) -> None:
    urls = Urls(_root(scope), scope["app"].state.assets.versions)  # the page's styles by their hashed URLs
    context = SigninContext(
        urls=urls,
        static=urls.static,
        csrf="",  # nobody signed in: no page token
        error=error,
        next_path=next_path,
        auth=access.auth,
        signin_off=access.signin_off,
        oidc_url=urls.root + OIDC_START_PATH + "?" + urlencode({"next": next_path}),
    )
    html = scope["app"].state.renderer.page(context.template, **context.as_dict())
    response: Response = HTMLResponse(html, status_code=status, headers={"cache-control": "no-store"})
    await response(scope, receive, send)
