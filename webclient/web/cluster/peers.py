"""How this instance speaks to the others of its service: the HTTP client it forwards with, the headers it passes on
(what it believes of the browser, and its proof), which instance answers at an address, and a question put to all.
`webclient.web.cluster.forwarding` sends requests through it; the inbox asks the others through it."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Collection
from typing import TYPE_CHECKING

from starlette.types import Scope

from webclient.web.access.browser_origin import browser_origin
from webclient.web.access.instance_proof import HEADER, IDENTITY
from webclient.web.access.trusted_header import PROVEN

if TYPE_CHECKING:
    import httpx

    from webclient.web.cluster.instance import ClusterInstance

HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "host",
        "content-length",
        "forwarded",
        "x-forwarded-host",
        "x-forwarded-proto",
        "x-forwarded-prefix",
        "x-forwarded-for",
        HEADER,
    }
)
"""Request headers not passed on: the connection's own, and what only this instance may say."""
WEBSOCKET_OWN = frozenset({"sec-websocket-key", "sec-websocket-version", "sec-websocket-extensions", "origin"})
"""A socket's handshake headers the client library writes itself."""


def forwarded_headers(scope: Scope, token: bytes, person_headers: frozenset[str]) -> list[tuple[str, str]]:
    """A request's headers as the owner gets them: the browser's, less what only a proxy may say (the person a
    trusted proxy names, unless it came through that proxy), plus what this instance believes of the browser's origin
    and prefix, and its proof."""
    dropped = HOP_BY_HOP | (frozenset() if scope.get(PROVEN) else person_headers)
    if scope["type"] == "websocket":
        dropped |= WEBSOCKET_OWN
    kept = [
        (name.decode("latin-1"), value.decode("latin-1"))
        for name, value in scope.get("headers", ())
        if name.decode("latin-1").lower() not in dropped
    ]
    seen = browser_origin(scope)
    if seen is not None:
        host = f"[{seen.host}]" if ":" in seen.host else seen.host
        kept += [("x-forwarded-host", f"{host}:{seen.port}"), ("x-forwarded-proto", seen.scheme)]
    root: str = scope.get("root_path", "")
    if root:
        kept.append(("x-forwarded-prefix", root))
    client = scope.get("client")
    if client:
        kept.append(("x-forwarded-for", str(client[0])))
    kept.append((HEADER, token.decode()))
    return kept


class ClusterHolder:
    """Where the lifespan puts this instance's `ClusterInstance` once the store is open (None: one instance)."""

    def __init__(self, person_headers: Collection[str] = ()) -> None:
        self.instance: ClusterInstance | None = None
        self.token: bytes | None = None
        """What this instance proves itself with to the others (`webclient.web.access.instance_proof`)."""
        self.person_headers = frozenset(h.lower() for h in person_headers if h)
        """The headers a trusted proxy names the person in: passed on only from that proxy."""
        self._client: httpx.AsyncClient | None = None

    def client(self) -> httpx.AsyncClient:
        """The HTTP client requests are forwarded with, made at the first."""
        if self._client is None:
            import httpx  # here: only an instance among others forwards

            timeout = httpx.Timeout(connect=3.0, read=300.0, write=60.0, pool=10.0)
            self._client = httpx.AsyncClient(timeout=timeout, follow_redirects=False, trust_env=False)
        return self._client

    async def who_answers(self, address: str) -> str | None:
        """The id of the instance that answers ``/healthz`` at ``address`` (None: nothing answered)."""
        answer = await self.client().get(address + "/healthz", timeout=1.0)
        found: str | None = answer.headers.get(IDENTITY)
        return found

    async def ask_the_others(self, scope: Scope, path: str) -> list[str]:
        """``GET path`` (below the prefix) of every other instance that takes sessions, as the person of ``scope``
        asks it: the answers that came within a second or two (an instance that does not answer is left out)."""
        instance, token = self.instance, self.token
        if instance is None or token is None:
            return []
        import httpx

        others = [i.address for i in instance.instances if i.id != instance.id and i.address]
        # As this instance reads it, not compressed (the browser's own Accept-Encoding is not this request's).
        headers = [(n, v) for n, v in forwarded_headers(scope, token, self.person_headers) if n != "accept-encoding"]

        async def ask(address: str) -> str | None:
            with contextlib.suppress(httpx.HTTPError):
                answer = await self.client().get(address + path, headers=headers, timeout=2.0)
                if answer.status_code == 200:
                    return answer.text
            return None

        answers = await asyncio.gather(*(ask(address) for address in others))
        return [answer for answer in answers if answer is not None]

    async def close(self) -> None:
        if self._client is not None:
            await self._client.aclose()
