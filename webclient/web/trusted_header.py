"""``WEBCLIENT_AUTH=trusted-header``: a portal or proxy in front signs people in and names them in a header.

The header is believed only from the proxy's own addresses (``WEBCLIENT_TRUSTED_PROXIES``): from anywhere else
anyone could write it, so there it is ignored, and the request is not signed in.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from starlette.datastructures import Headers
from starlette.types import Scope

from webclient.config import Settings
from webclient.people.person import Person

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
MAX_NAME = 200
"""Characters of a person's id: the store's column (longer is a proxy's mistake, refused)."""


@dataclass(frozen=True)
class TrustedHeader:
    """Where the person's name, email and groups come from, and from whom they are believed."""

    user: str
    email: str | None
    groups: str | None
    proxies: tuple[Network, ...]
    admin_group: str

    @classmethod
    def from_settings(cls, settings: Settings) -> TrustedHeader:
        """Raises ValueError naming a trusted proxy that is neither an address nor a network."""
        proxies = []
        for proxy in settings.trusted_proxies:
            try:
                proxies.append(ipaddress.ip_network(proxy.strip("[]"), strict=False))
            except ValueError:
                raise ValueError(f"WEBCLIENT_TRUSTED_PROXIES: {proxy!r} is not an address or network") from None
        return cls(
            user=settings.trusted_header,
            email=settings.trusted_email_header,
            groups=settings.trusted_groups_header,
            proxies=tuple(proxies),
            admin_group=settings.admin_group,
        )

    def from_proxy(self, scope: Scope) -> bool:
        """Whether this connection comes straight from one of the trusted proxies."""
        client = scope.get("client")
        if not client:
            return False
        try:
            address = ipaddress.ip_address(str(client[0]))
        except ValueError:
            return False
        return any(address in network for network in self.proxies)

    def person(self, scope: Scope, headers: Headers) -> Person | None:
        """The person the proxy names, or None (no trusted proxy, no name, or a name no store can hold)."""
        if not self.from_proxy(scope):
            return None
        user = headers.get(self.user, "").strip()
        if not user or len(user) > MAX_NAME or any(ord(c) < 0x20 for c in user):
            return None
        email = headers.get(self.email, "").strip() or None if self.email else None
        listed = headers.get(self.groups, "") if self.groups else ""
        groups = frozenset(g.strip() for g in listed.split(",") if g.strip())
        return Person(id=user, name=user, email=email, groups=groups, admin=self.admin_group in groups)
