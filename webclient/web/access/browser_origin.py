"""The origin the browser addressed (``scheme://host[:port]``): this server as the browser sees it.

Straight from a browser, it is the request's scheme and its ``Host`` header. Through the trusted proxy (the one
`webclient.web.access.root_path` recognised: ``scope[PROVEN]``), it is the host the proxy forwards
(``X-Forwarded-Host``, else ``Forwarded: host=``, else the ``Host`` it passed: ``proxy_set_header Host $http_host``)
with the scheme it said (``X-Forwarded-Proto`` or ``Forwarded: proto=``, made the request's scheme by ``RootPath``).
From anyone else the forwarded headers are ignored: anyone can write them. A value that is not one plain host (several,
a path, odd characters) is ignored too.

N instances of one service behind one proxy all see the same origin, whichever of them a request reaches: the
sign-in cookie is named after it (`webclient.web.access.access.Access.cookie_name`), and it is an origin a request may
come from (`Access.origin_allowed`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from starlette.datastructures import Headers
from starlette.types import Scope

from webclient.web.access.trusted_header import PROVEN

DEFAULT_PORTS = {"http": 80, "https": 443}
HOST = re.compile(r"(?:\[(?P<v6>[0-9a-f:.]+)\]|(?P<name>[a-z0-9_.-]+))(?::(?P<port>[0-9]{1,5}))?")
"""A ``Host`` header's value, lower-cased: a name or IPv4 address, or an IPv6 address in brackets, and a port."""
MAX_FORWARDED = 1000
"""Characters of a ``Forwarded`` header read (a proxy's is far shorter)."""


@dataclass(frozen=True)
class BrowserOrigin:
    """``scheme://host:port`` as the browser addressed this server."""

    scheme: str
    """``http`` or ``https``."""
    host: str
    """The name or address, lower-cased, without IPv6's brackets."""
    port: int

    def __str__(self) -> str:
        """As a browser writes it in ``Origin``: the default port left out."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        port = "" if self.port == DEFAULT_PORTS[self.scheme] else f":{self.port}"
        return f"{self.scheme}://{host}{port}"


def parse_host(value: str, scheme: str) -> BrowserOrigin | None:
    """``value`` (a ``Host`` header's) reached over ``scheme``, or None when it is not one plain host."""
    found = HOST.fullmatch(value.strip().lower())
    if found is None:
        return None
    port = int(found["port"]) if found["port"] else DEFAULT_PORTS[scheme]
    if not 0 < port < 65536:
        return None
    return BrowserOrigin(scheme, found["v6"] or found["name"], port)


def forwarded_pairs(headers: Headers) -> dict[str, str]:
    """The parameters of a ``Forwarded`` header (RFC 7239) of one element (one proxy), lower-case names, quotes
    taken off; empty when there is none, several, or more than one element."""
    values = headers.getlist("forwarded")
    if len(values) != 1 or "," in values[0] or len(values[0]) > MAX_FORWARDED:
        return {}
    pairs: dict[str, str] = {}
    for pair in values[0].split(";"):
        name, equals, value = pair.strip().partition("=")
        if equals:
            pairs[name.strip().lower()] = value.strip().strip('"')
    return pairs


def forwarded_proto(headers: Headers) -> str | None:
    """The scheme a proxy says the browser used: ``X-Forwarded-Proto``, else ``Forwarded: proto=``; None if neither."""
    proto = headers.get("x-forwarded-proto", "").strip().lower() or forwarded_pairs(headers).get("proto", "").lower()
    return proto or None


def forwarded_host(headers: Headers) -> str | None:
    """The host a proxy says the browser asked for: ``X-Forwarded-Host`` (exactly one), else ``Forwarded: host=``."""
    values = headers.getlist("x-forwarded-host")
    if values:
        return values[0] if len(values) == 1 and "," not in values[0] else None
    return forwarded_pairs(headers).get("host")


def browser_origin(scope: Scope) -> BrowserOrigin | None:
    """This request's :class:`BrowserOrigin` (see the module's docstring), or None when its host is not plain."""
    headers = Headers(scope=scope)
    scheme = "https" if scope.get("scheme") in ("https", "wss") else "http"
    host = forwarded_host(headers) if scope.get(PROVEN) else None
    if host is None and scope.get(PROVEN) and "x-forwarded-host" in headers:
        return None  # the proxy named several hosts: none of them is known to be the browser's
    return parse_host(host if host is not None else headers.get("host", ""), scheme)


def site(scope: Scope) -> str:
    """``scheme://host[:port]`` of this server as the browser addressed it (`browser_origin`), else as the request's
    own ``Host`` says: what a whole URL the page holds starts with (its socket's, a share link)."""
    seen = browser_origin(scope)
    if seen is not None:
        return str(seen)
    host = Headers(scope=scope).get("host", "")
    return f"{'https' if scope.get('scheme') in ('https', 'wss') else 'http'}://{host}"
