"""Where a connection arrived: the port and address it reached (TCP), or the unix socket (``WEBCLIENT_UDS``).

uvicorn gives a unix socket's connection ``scope["server"] == (PATH, None)`` and no ``client`` address; a port's is
``(ADDRESS, PORT)``. The host and origin checks (`webclient.web.access.access`) follow.
"""

from __future__ import annotations

import hashlib

from starlette.types import Scope

WILDCARD_ADDRESSES = frozenset({"", "0.0.0.0", "::"})


def unix_socket_of(scope: Scope) -> str | None:
    """The path of the unix socket this connection arrived on, or None (a port, or a test client)."""
    server = scope.get("server")
    if not server or server[1] is not None or not server[0]:
        return None
    return str(server[0])


def arrival_port(scope: Scope, default: int) -> int | None:
    """The port this connection arrived on (right however the server was started), else the configured one; None on
    a unix socket, which has no port (nor an origin of its own: the proxy's is the browser's)."""
    if unix_socket_of(scope) is not None:
        return None
    server = scope.get("server")
    return int(server[1]) if server and server[1] is not None else default


def local_address(scope: Scope) -> str | None:
    """The address this connection arrived on (a literal address can never be a rebinding name); None on a unix
    socket."""
    server = scope.get("server")
    if not server or server[1] is None:
        return None
    address = str(server[0]).lower()
    return None if address in WILDCARD_ADDRESSES else address


def listener_name(scope: Scope, default_port: int) -> str:
    """What tells this server's sign-in cookie from another's on the same host (cookies ignore ports) when the
    browser's origin is not known (`web.access.browser_origin`): its port, or for a unix socket a short digest of its
    path (a cookie's name cannot hold a ``/``)."""
    path = unix_socket_of(scope)
    if path is not None:
        return "uds-" + hashlib.sha256(path.encode()).hexdigest()[:12]
    return str(arrival_port(scope, default_port))
