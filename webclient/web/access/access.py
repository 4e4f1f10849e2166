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

from starlette.types import Scope

from webclient.config import Auth, Settings
from webclient.people.person import LOCAL
from webclient.web.access.arrival import WILDCARD_ADDRESSES, arrival_port, listener_name, local_address
from webclient.web.access.trusted_header import TrustedHeader

if TYPE_CHECKING:
    from webclient.web.access.oidc import OidcClient

log = logging.getLogger(__name__)

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})


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
    def from_settings(cls, settings: Settings) -> Access:
        """Refuses ``no_token`` unless the server listens on loopback only; makes up a token if none is set."""
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
        listen = settings.host.strip("[]").lower()
        names = LOOPBACK_NAMES | {h.strip("[]").lower() for h in settings.allowed_hosts}
        if listen not in WILDCARD_ADDRESSES:
            names |= {listen}
        return cls(
            token=token,
            secret=token.encode() if token else secrets.token_bytes(32),
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
        """One cookie per port (or unix socket): cookies ignore ports, and two servers on one host must not sign each
        other out."""
        return f"webclient-{listener_name(scope, self.port)}"

    def host_allowed(self, scope: Scope, name: str) -> bool:
        return name in self.allowed_hosts or name == local_address(scope)

    def origin_allowed(self, scope: Scope, origin: str) -> bool:
        """``origin`` (scheme included) is one of ours: an allowed host on the port and scheme we answer on,
        or a configured origin."""
        if origin in self.allowed_origins:
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
