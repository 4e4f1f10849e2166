"""The app's URLs for tests, built by the app's own URL builder (``webclient.render.urls``): a test never spells a
route's path, so a route that moves moves in its tests too."""

from __future__ import annotations

from webclient.render.urls import Urls

URLS = Urls()
"""The app's paths, served at the top of its host (as every test server serves it)."""


def at(server_url: str, name: str, /, **params: object) -> str:
    """The whole URL of the route ``name`` on the server at ``server_url`` (``http://host:port``)."""
    return server_url.rstrip("/") + URLS.for_(name, **params)


def socket_at(server_url: str, session: str, /, **query: object) -> str:
    """The ``ws://`` URL of a session's socket on the server at ``server_url`` (``http://host:port``); ``session`` is
    its id or the path of its page (the ``location`` a ``POST /sessions`` answers)."""
    return at(server_url.replace("http", "ws", 1), "socket", session_id=session.rsplit("/", 1)[-1], **query)
