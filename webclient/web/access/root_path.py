"""The path prefix the app is served under (``WEBCLIENT_ROOT_PATH``, or a trusted proxy's ``X-Forwarded-Prefix``),
and the scheme a trusted proxy says the browser used (``X-Forwarded-Proto``).

:class:`RootPath` is the outermost middleware: it sets the ASGI ``root_path`` and makes ``path`` carry it, as the
ASGI spec has it, before the access guard and the routes look. Every URL, redirect, cookie path and web socket URL
is then built from ``root_path`` (`webclient.render.urls.Urls`), and Starlette routes the path below it.

- ``WEBCLIENT_ROOT_PATH=/agents``: a path that starts with the prefix carries it (a proxy that passes the path as
  the browser sent it, ``proxy_pass http://127.0.0.1:8000;``); any other path is taken as one the proxy stripped the
  prefix from. A stripped path that itself begins with the prefix (``/agents/claude/sessions`` under ``/agents``)
  reads as one that carries it, so a proxy in front of a prefix should pass the path whole.
- ``X-Forwarded-Prefix: /agents``, from the proxy (`webclient.web.access.trusted_header.TrustedHeader.from_proxy`: a
  connection on ``WEBCLIENT_UDS``, or from one of ``WEBCLIENT_TRUSTED_PROXIES``, never ``X-Forwarded-For``, which
  anyone can write; with the proxy's secret when ``WEBCLIENT_PROXY_SECRET_FILE`` is set): the prefix the proxy
  stripped, so the path is below it. It wins over ``WEBCLIENT_ROOT_PATH``. A value that is not a plain path
  (`webclient.path_prefix`) is ignored, as is the header from anyone but the proxy.
- ``X-Forwarded-Proto: https`` (or ``Forwarded: proto=https``) from a trusted proxy makes the request's scheme
  ``https`` (``wss`` for a web socket): the cookies are then ``Secure`` (`webclient.web.access.cookies`), and the
  OpenID redirect URI is ``https``. The host it forwards is the browser's origin (`web.access.browser_origin`).

Without a prefix from either, the ``root_path`` uvicorn was given (``--root-path``) stays as it is.

Being outermost, it is also where the proxy's secret header is taken out of the request (after it was checked), so
that nothing further in can log or echo it; what the check said goes on in ``scope[PROVEN]`` for the access guard.
"""

from __future__ import annotations

from urllib.parse import quote

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from webclient.path_prefix import path_prefix
from webclient.web.access import instance_proof as proof
from webclient.web.access.browser_origin import forwarded_proto
from webclient.web.access.trusted_header import PROVEN, TrustedHeader

SCHEMES = {"http": {"http": "http", "https": "https"}, "websocket": {"http": "ws", "https": "wss"}}
"""Connection type → what the proxy says → the ASGI scheme."""


def below(root: str, path: str) -> str | None:
    """``path`` without ``root`` when it starts with it (as a whole segment), else None."""
    if path == root:
        return ""
    return path[len(root) :] if path.startswith(root + "/") else None


def forwarded_prefix(headers: Headers) -> str | None:
    """The prefix in ``X-Forwarded-Prefix`` (``""`` for the top of the host), or None: absent, several, or not a
    plain path."""
    values = headers.getlist("x-forwarded-prefix")
    if len(values) != 1 or "," in values[0]:
        return None
    return path_prefix(values[0])


class RootPath:
    """Sets ``root_path`` (and ``path`` under it) from the setting or a trusted proxy, and the scheme a trusted
    proxy reports."""

    def __init__(self, app: ASGIApp, root: str, proxies: TrustedHeader, instances: bytes | None = None) -> None:
        self.app = app
        self.root = root
        self.proxies = proxies
        self.instances = instances
        """The token another instance forwarding a request proves itself with (`instance_proof`)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        forwarded = proof.proven(scope, self.instances)
        trusted = forwarded or (self.proxies.configured and self.proxies.from_proxy(scope))
        headers = Headers(scope=scope)
        prefix = forwarded_prefix(headers) if trusted else None
        scope = dict(proof.without_token(self.proxies.without_secret(scope)))
        scope[PROVEN] = trusted  # for the access guard, which can no longer check the secret
        scope[proof.FORWARDED] = forwarded
        if trusted:
            proto = forwarded_proto(headers) or ""
            scope["scheme"] = SCHEMES[scope["type"]].get(proto, scope.get("scheme", "http"))
        if prefix is None and not self.root:
            await self.app(scope, receive, send)
            return
        # What the browser asked for below any root_path uvicorn added (``--root-path``).
        given: str = scope.get("root_path", "")
        sent: str = scope["path"]
        raw: bytes | None = scope.get("raw_path")
        if given and (under := below(given, sent)) is not None:
            sent = under
            raw = raw[len(given) :] if raw is not None and raw.startswith(given.encode()) else None
        if prefix is None:
            prefix = self.root
            carried = below(prefix, sent)
            if carried is not None:  # the proxy passed the path whole: it carries the prefix already
                raw = raw[len(prefix) :] if raw is not None and raw.startswith(prefix.encode()) else None
                sent = carried
        scope["root_path"] = prefix
        scope["path"] = prefix + sent
        scope["raw_path"] = prefix.encode() + (raw if raw is not None else quote(sent).encode())
        await self.app(scope, receive, send)
