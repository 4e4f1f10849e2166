"""``WEBCLIENT_AUTH=trusted-header``: a portal or proxy in front signs people in and names them in a header.

The header (and the proxy's ``X-Forwarded-Prefix``/``-Proto``, `web.access.root_path`) is believed only from the
proxy, and an address does not prove that: on Linux any program may connect from any ``127.x.y.z``. So the proxy
proves itself (`webclient.proxy_proof`):

- ``WEBCLIENT_UDS``: the server listens on a unix socket that only the proxy's user may open; a connection that
  arrived on it is the proxy's (it has no address, and ``WEBCLIENT_TRUSTED_PROXIES`` plays no part).
- ``WEBCLIENT_PROXY_SECRET_FILE``: the connection comes from one of ``WEBCLIENT_TRUSTED_PROXIES`` (or the socket)
  *and* carries the secret in ``WEBCLIENT_PROXY_SECRET_HEADER``, compared in constant time. The header is taken out
  of the request before anything further in sees it, so it is never logged or echoed.
- Neither: the address alone, which trusted-header mode refuses at start for a loopback address or a network
  holding one (a proxy on another machine may still be trusted by its address).
"""

from __future__ import annotations

import hmac
import ipaddress
import stat
from dataclasses import dataclass, field
from pathlib import Path

from starlette.datastructures import Headers
from starlette.types import Scope

from webclient.config import Settings
from webclient.people.person import Person
from webclient.web.access.arrival import unix_socket_of

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
MAX_NAME = 200
"""Characters of a person's id: the store's column (longer is a proxy's mistake, refused)."""
LOOPBACK = (
    ipaddress.ip_network("127.0.0.0/8"),
    ipaddress.ip_network("::1/128"),
    ipaddress.ip_network("::ffff:127.0.0.0/104"),  # loopback as a dual-stack socket reports it
)
MAX_SECRET = 4096
PROVEN = "webclient.from_proxy"
"""The scope's key for what :meth:`TrustedHeader.from_proxy` said, set by `web.access.root_path` (outermost) as it
takes the secret out."""


def on_this_machine(network: Network) -> bool:
    """Whether ``network`` holds a loopback address (``0.0.0.0/0`` and ``::/0`` do)."""
    return any(network.version == loopback.version and network.overlaps(loopback) for loopback in LOOPBACK)


def read_secret(path: Path) -> bytes:
    """The proxy's secret, from ``path``; raises ValueError (never naming the secret) when the file cannot be read,
    is empty, or every user of this machine may read it."""
    try:
        mode = path.stat().st_mode
        secret = path.read_bytes().strip()
    except OSError as error:
        raise ValueError(f"WEBCLIENT_PROXY_SECRET_FILE: cannot read {str(path)!r} ({error.strerror})") from None
    if mode & stat.S_IROTH:
        raise ValueError(f"WEBCLIENT_PROXY_SECRET_FILE: every user can read {str(path)!r}; chmod o-r it")
    if not secret or len(secret) > MAX_SECRET or b"\n" in secret:
        raise ValueError(f"WEBCLIENT_PROXY_SECRET_FILE: {str(path)!r} must hold one line of up to {MAX_SECRET} bytes")
    return secret


@dataclass(frozen=True)
class TrustedHeader:
    """Where the person's name, email and groups come from, and from whom they are believed."""

    user: str
    email: str | None
    groups: str | None
    proxies: tuple[Network, ...]
    admin_group: str
    uds: str | None = None
    """The unix socket the server listens on: a connection that arrived there is the proxy's."""
    secret: bytes | None = field(default=None, repr=False)
    """What the proxy sends in :attr:`secret_header` (None: it sends nothing)."""
    secret_header: str = "x-webclient-proxy-secret"

    @classmethod
    def from_settings(cls, settings: Settings) -> TrustedHeader:
        """Raises ValueError naming a trusted proxy that is neither an address nor a network, a secret file that will
        not do, or (trusted-header mode) a proxy on this machine that has nothing but its address to prove itself."""
        proxies = []
        for proxy in settings.trusted_proxies:
            try:
                proxies.append(ipaddress.ip_network(proxy.strip("[]"), strict=False))
            except ValueError:
                raise ValueError(f"WEBCLIENT_TRUSTED_PROXIES: {proxy!r} is not an address or network") from None
        proof = settings.proxy_proof
        local = [str(network) for network in proxies if on_this_machine(network)]
        if settings.auth == "trusted-header" and local and not proof.any:
            raise ValueError(
                f"WEBCLIENT_TRUSTED_PROXIES names {', '.join(local)}, on this machine, where any program can connect "
                "from it and name anyone: set WEBCLIENT_UDS (a unix socket only the proxy can open) or "
                "WEBCLIENT_PROXY_SECRET_FILE (see docs/deployment.md)"
            )
        return cls(
            user=settings.trusted_header,
            email=settings.trusted_email_header,
            groups=settings.trusted_groups_header,
            proxies=tuple(proxies),
            admin_group=settings.admin_group,
            uds=str(proof.uds) if proof.uds is not None else None,
            secret=read_secret(proof.secret_file) if proof.secret_file is not None else None,
            secret_header=proof.secret_header.lower(),
        )

    @property
    def configured(self) -> bool:
        """Whether any proxy is trusted at all."""
        return bool(self.proxies) or self.uds is not None

    def from_proxy(self, scope: Scope) -> bool:
        """Whether this connection comes straight from the proxy, and proves it."""
        if self.uds is not None:
            if unix_socket_of(scope) != self.uds:
                return False
        elif not self._from_trusted_address(scope):
            return False
        if self.secret is None:
            return True
        wanted = self.secret_header.encode("latin-1")
        sent = [value for name, value in scope.get("headers", ()) if name.lower() == wanted]
        return len(sent) == 1 and hmac.compare_digest(sent[0].strip(), self.secret)

    def _from_trusted_address(self, scope: Scope) -> bool:
        client = scope.get("client")
        if not client:
            return False
        try:
            address = ipaddress.ip_address(str(client[0]))
        except ValueError:
            return False
        return any(address in network for network in self.proxies)

    def without_secret(self, scope: Scope) -> Scope:
        """``scope`` without the secret's header, so that nothing further in can log or echo it."""
        if self.secret is None:
            return scope
        wanted = self.secret_header.encode("latin-1")
        kept = [(name, value) for name, value in scope.get("headers", ()) if name.lower() != wanted]
        return {**scope, "headers": kept}

    def person(self, scope: Scope, headers: Headers, proven: bool | None = None) -> Person | None:
        """The person the proxy names, or None (not the proxy, no name, or a name no store can hold). ``proven``:
        what :meth:`from_proxy` said of this connection before its secret was taken out."""
        if not (self.from_proxy(scope) if proven is None else proven):
            return None
        user = headers.get(self.user, "").strip()
        if not user or len(user) > MAX_NAME or any(ord(c) < 0x20 for c in user):
            return None
        email = headers.get(self.email, "").strip() or None if self.email else None
        listed = headers.get(self.groups, "") if self.groups else ""
        groups = frozenset(g.strip() for g in listed.split(",") if g.strip())
        return Person(id=user, name=user, email=email, groups=groups, admin=self.admin_group in groups)
