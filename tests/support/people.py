"""Two or more people on one test server: trusted-header mode, with the test itself as the trusted proxy.

A server started with :data:`TEAM` believes ``X-Forwarded-User`` from loopback when the proxy's secret comes with it
(an address on this machine proves nothing), so a test names a person by headers, the secret's included
(:func:`as_person`); the tests of the proxy itself put a real nginx in front (``tests/support/nginx.py``).
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import httpx

from tests.support.servers import Server

PROXY_SECRET = "the-test-proxys-secret"
SECRET_HEADER = "X-Webclient-Proxy-Secret"


def _secret_file() -> Path:
    """The file the server reads the proxy's secret from (readable by its owner only, as the server insists)."""
    folder = Path(tempfile.mkdtemp(prefix="webclient-proxy-"))
    atexit.register(shutil.rmtree, folder, True)
    path = folder / "secret"
    path.write_text(PROXY_SECRET + "\n")
    path.chmod(0o600)
    return path


SECRET_FILE = _secret_file()

TEAM = {
    "WEBCLIENT_AUTH": "trusted-header",
    "WEBCLIENT_TRUSTED_PROXIES": "127.0.0.1,::1",
    "WEBCLIENT_PROXY_SECRET_FILE": str(SECRET_FILE),
    "WEBCLIENT_TRUSTED_EMAIL_HEADER": "X-Forwarded-Email",
    "WEBCLIENT_TRUSTED_GROUPS_HEADER": "X-Forwarded-Groups",
}
"""The environment of a server for a team, behind (what it takes for) a trusted proxy: ``start_server(**TEAM)``."""


def as_person(name: str, groups: Iterable[str] = ()) -> dict[str, str]:
    """The headers a trusted proxy sends for ``name``, in ``groups`` (``admins`` makes an admin), its secret too."""
    return {**naming(name, groups), SECRET_HEADER: PROXY_SECRET}


def naming(name: str, groups: Iterable[str] = ()) -> dict[str, str]:
    """The headers that name ``name`` (in ``groups``), without the proxy's secret: what anyone else can write."""
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
