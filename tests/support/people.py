"""Two or more people on one test server: trusted-header mode, with the test itself as the trusted proxy.

A server started with :data:`TEAM` believes ``X-Forwarded-User`` from loopback, so a test names a person by a
header (:func:`as_person`); the tests of the proxy itself put a real nginx in front (``tests/support/nginx.py``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import httpx

from tests.support.servers import Server

TEAM = {
    "WEBCLIENT_AUTH": "trusted-header",
    "WEBCLIENT_TRUSTED_PROXIES": "127.0.0.1,::1",
    "WEBCLIENT_TRUSTED_EMAIL_HEADER": "X-Forwarded-Email",
    "WEBCLIENT_TRUSTED_GROUPS_HEADER": "X-Forwarded-Groups",
}
"""The environment of a server for a team, behind (what it takes for) a trusted proxy: ``start_server(**TEAM)``."""


def as_person(name: str, groups: Iterable[str] = ()) -> dict[str, str]:
    """The headers a trusted proxy sends for ``name``, in ``groups`` (``admins`` makes an admin)."""
    headers = {"X-Forwarded-User": name, "X-Forwarded-Email": f"{name}@example.com"}
    listed = ",".join(groups)
    if listed:
        headers["X-Forwarded-Groups"] = listed
    return headers


def person_client(server: Server, name: str, groups: Iterable[str] = ()) -> httpx.Client:
    """An HTTP client that is ``name`` on ``server``, its requests from the server's own origin (as its pages
    make them); closed with the server."""
    client = httpx.Client(base_url=server.url, headers={**as_person(name, groups), "Origin": server.url})
    server.clients.append(client)
    return client


def person_context(browser: Any, name: str, groups: Iterable[str] = ()) -> Any:
    """A browser context (Playwright) whose every request, web sockets too, the proxy says is ``name``'s."""
    return browser.new_context(extra_http_headers=as_person(name, groups))
