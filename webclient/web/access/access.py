"""Who this server is to a browser: the sign-in token and what is derived from it (the sign-in cookie, the page's
CSRF token, the store's key of token mode's sign-ins), and the names and origins this server answers to.

:class:`webclient.web.access.guard.AccessGuard` checks every request against it.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import logging
import secrets
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlencode, urlsplit

from starlette.datastructures import Headers
from starlette.types import Scope

from webclient.config import Auth, Settings
from webclient.people.person import LOCAL
from webclient.web.access.arrival import WILDCARD_ADDRESSES, arrival_port, listener_name, local_address
from webclient.web.access.browser_origin import browser_origin
from webclient.web.access.trusted_header import PROVEN, TrustedHeader

if TYPE_CHECKING:
    from webclient.web.access.oidc import OidcClient

log = logging.getLogger(__name__)

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
FORWARDED_HEADERS = ("x-forwarded-host", "x-forwarded-proto", "x-forwarded-for", "forwarded")
"""Headers a proxy adds: a request carrying one that was refused its origin may have a proxy in front to trust."""


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or address to listen on) reaches this machine only."""
    host = host.strip("[]").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def host_name(host: str) -> str:
    """The name in a ``Host`` header, lower-cased, without port or IPv6 brackets."""
    host = host.strip().lower()
    if host.startswith("["):
        end = host.find("]")
        return host[1:end] if end > 0 else ""
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def _url_host(name: str) -> str:
    return f"[{name}]" if ":" in name else name


def signin_url(host: str, port: int, token: str | None, root: str = "") -> str:
    """The URL to open to sign in (for a server on every address: its loopback URL), under the path prefix."""
    name = host.strip("[]")
    if name in WILDCARD_ADDRESSES:
        name = "::1" if name == "::" else "127.0.0.1"
    url = f"http://{_url_host(name)}:{port}{root}/"
    return f"{url}?{urlencode({'token': token})}" if token else url


def _derive(secret: bytes, purpose: bytes) -> str:
    return hmac.new(secret, purpose, hashlib.sha256).hexdigest()


@dataclass(frozen=True)
class Access:
    """The sign-in token and what is derived from it, and the names this server answers to."""

    token: str | None
    """None when sign-in is off (``--no-token``)."""
    secret: bytes
    host: str
    port: int
    allowed_hosts: frozenset[str]
    allowed_origins: frozenset[str]
    trusted: TrustedHeader | None = None
    """Set in trusted-header mode: the proxy in front names the person, and the token plays no part."""
    auth: Auth = "token"
    oidc: OidcClient | None = None
    """Set in oidc mode: the provider people sign in with."""
    oidc_groups_claim: str = "groups"
    admin_group: str = "admins"

    @classmethod
    def from_settings(cls, settings: Settings, shared_secret: bytes | None = None) -> Access:
        """Refuses ``no_token`` unless the server listens on loopback only; makes up a token if none is set.
        ``shared_secret``: what page tokens derive from without a token, the same on every instance of one service
        (a page one rendered posts to another); None: made up now."""
        if settings.no_token and settings.token:
            raise ValueError("WEBCLIENT_NO_TOKEN and WEBCLIENT_TOKEN are both set: choose one")
        if settings.no_token and settings.proxy_proof.uds is not None:
            raise ValueError("--no-token is refused on a unix socket: the proxy in front would let anyone in")
        if settings.no_token and not is_loopback(settings.host):
            raise ValueError(
                f"--no-token (WEBCLIENT_NO_TOKEN) is refused on {settings.host}: without sign-in, anyone who can "
                "reach that address could run commands as you; listen on 127.0.0.1 or keep the token"
            )
        trusted = TrustedHeader.from_settings(settings) if settings.auth == "trusted-header" else None
        oidc = None
        if settings.auth == "oidc":
            from webclient.web.access.oidc import OidcClient  # here: Authlib is for this mode only

            assert settings.oidc_issuer and settings.oidc_client_id  # Settings.from_env refuses oidc without them
            secret = settings.oidc_client_secret or ""
            oidc = OidcClient(settings.oidc_issuer, settings.oidc_client_id, secret, settings.oidc_scopes)
        tokenless = settings.no_token or settings.auth != "token"
        token = None if tokenless else settings.token or secrets.token_urlsafe(32)
        if token is not None and not settings.token:
            # Only the server knows the port it listens on (uvicorn --factory --port): name just the token.
            log.warning("no sign-in token was set, so one was made: open the server's URL with ?token=%s", token)
        proxied = settings.trusted_proxies or settings.proxy_proof.uds is not None
        if not proxied and not settings.allowed_origins and not is_loopback(settings.host):
            log.info(
                "behind a proxy, set WEBCLIENT_TRUSTED_PROXIES to its address (or listen on WEBCLIENT_UDS) so that "
                "the origin it forwards (X-Forwarded-Host/-Proto, Forwarded) is this server's; else its pages' "
                "posts and sockets are refused until WEBCLIENT_ALLOWED_ORIGINS names that origin"
            )
        listen = settings.host.strip("[]").lower()
        names = LOOPBACK_NAMES | {h.strip("[]").lower() for h in settings.allowed_hosts}
        if listen not in WILDCARD_ADDRESSES:
            names |= {listen}
        return cls(
            token=token,
            secret=token.encode() if token else shared_secret or secrets.token_bytes(32),
            host=settings.host,
            port=settings.port,
            allowed_hosts=frozenset(names),
            allowed_origins=frozenset(settings.allowed_origins),
            trusted=trusted,
            auth=settings.auth,
            oidc=oidc,
            oidc_groups_claim=settings.oidc_groups_claim,
            admin_group=settings.admin_group,
        )

    @property
    def signin_key(self) -> bytes | None:
        """Token mode: the key its sign-ins are kept under in the store, derived from the token (a new token ends
        them); None in the other modes."""
        return _derive(self.secret, b"webclient sign-ins").encode() if self.auth == "token" and self.token else None

    @property
    def signin_off(self) -> bool:
        """``--no-token``: token mode without a token (loopback only)."""
        return self.auth == "token" and self.token is None

    @property
    def csrf(self) -> str:
        """The token our pages put in every form they post (for browsers that send no Origin), in token mode."""
        return _derive(self.secret, b"webclient csrf")

    def csrf_for(self, scope: Scope) -> str:
        """The page token of whoever this request is from: one per person (never one another person could read
        off their own page and send from someone else's browser); token mode's one person has :attr:`csrf`."""
        person = scope.get("person")
        if person is None or person is LOCAL:
            return self.csrf
        return _derive(self.secret, b"webclient csrf for " + person.id.encode())

    @property
    def cookie_value(self) -> str:
        """The sign-in cookie's value: derived from the token, so the cookie never holds the token itself."""
        return _derive(self.secret, b"webclient sign-in cookie")

    def cookie_name(self, scope: Scope) -> str:
        """Named after the port of the origin the browser sees (`webclient.web.access.browser_origin`), and the path
        prefix when there is one: cookies ignore ports, so two servers on one host must not sign each other out, nor
        two under one proxy at ``/`` and ``/agents`` (the browser sends both cookies there), while N instances of one
        service behind one proxy share one cookie, and so one sign-in. The name is no secret: its value is checked.
        """
        seen = browser_origin(scope)
        port = seen.port if seen is not None else listener_name(scope, self.port)
        root: str = scope.get("root_path", "")
        return f"webclient-{port}-{hashlib.sha256(root.encode()).hexdigest()[:8]}" if root else f"webclient-{port}"

    def host_allowed(self, scope: Scope, name: str) -> bool:
        return name in self.allowed_hosts or name == local_address(scope)

    def origin_allowed(self, scope: Scope, origin: str) -> bool:
        """``origin`` (scheme included) is one of ours: a configured origin, the one the trusted proxy forwarded for a
        request through it (its host one we answer to), or an allowed host on the port and scheme we answer on."""
        if origin in self.allowed_origins:
            return True
        if scope.get(PROVEN):  # through the trusted proxy: the origin it says the browser addressed is ours
            seen = browser_origin(scope)
            if seen is not None and origin == str(seen) and self.host_allowed(scope, seen.host):
                return True
        port = arrival_port(scope, self.port)
        if port is None:  # a unix socket: the browser's origin is the proxy's, named in WEBCLIENT_ALLOWED_ORIGINS
            return False
        parts = urlsplit(origin)
        scheme = "https" if scope.get("scheme") in ("https", "wss") else "http"
        try:
            origin_port = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError:
            return False
        name = (parts.hostname or "").lower()
        return (
            parts.scheme == scheme
            and origin_port == port
            and self.host_allowed(scope, name)
            and origin == f"{scheme}://{parts.netloc.lower()}"
        )

    def origin_advice(self, scope: Scope, origin: str) -> str | None:
        """What to set so that ``origin``, just refused, is taken for ours, when this request looks like it came
        through a proxy: its host, if the trusted proxy forwarded it; the proxy's address, if it is not trusted.
        None for a request that shows no proxy (another site's, as like as not: nothing to set)."""
        headers = Headers(scope=scope)
        seen = browser_origin(scope)
        if scope.get(PROVEN):
            if seen is not None and origin == str(seen):
                return f"the proxy forwards the host {seen.host!r}: add it to WEBCLIENT_ALLOWED_HOSTS"
            return None
        if not any(name in headers for name in FORWARDED_HEADERS):
            return None
        client = scope.get("client")
        peer = str(client[0]) if client else "the proxy"
        return (
            f"a request through a proxy at {peer} came from another origin than this server's: if {peer} is your "
            f"proxy, set WEBCLIENT_TRUSTED_PROXIES={peer} (or listen on WEBCLIENT_UDS) so that the origin it forwards "
            "is believed, else name the browser's origin in WEBCLIENT_ALLOWED_ORIGINS (see docs/deployment.md)"
        )
