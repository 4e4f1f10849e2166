"""A request for a session another instance runs goes there: the page, its socket, its fragments, export, log and
files, whichever instance the proxy sent the browser to. A new session goes to the least loaded instance.

`Forwarding` sits just inside `webclient.web.access.root_path.RootPath`, so that it knows the browser's origin, scheme
and path prefix, and outside everything else: the instance that runs the session checks the person, the origin and
the page token itself, exactly as for a request from the browser. It sees the forwarding instance as the trusted
proxy (`webclient.web.access.instance_proof`) and the browser's origin, scheme and prefix in ``X-Forwarded-*``, which
`webclient.web.cluster.peers` writes afresh from what it believes (never from what the browser sent). The person a
trusted proxy names (``WEBCLIENT_AUTH=trusted-header``) goes on only if the request came through that proxy.

HTTP goes through httpx, streamed both ways, its body as it came (compressed by the owner, never decoded here); a
socket through the ``websockets`` client, frame by frame. An owner that does not answer (it died and its lease has
not expired yet) gets a page that retries; a socket's handshake waits until an instance takes the session up (this one
or another), or closes with 1013 (try again) after `OWNER_WAIT` seconds, which the page reconnects.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING
from urllib.parse import parse_qs

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from webclient.web.access.instance_proof import FORWARDED
from webclient.web.cluster.peers import ClusterHolder, forwarded_headers

if TYPE_CHECKING:
    from websockets.asyncio.client import ClientConnection

log = logging.getLogger(__name__)

RESPONSE_HOP_BY_HOP = frozenset({"connection", "keep-alive", "transfer-encoding", "upgrade", "trailer"})
MAX_SESSION_ID = 64
MAX_FORM = 64 * 1024
"""Bytes of a New session form read for its agent's name before it is passed on (one is far smaller)."""
TRY_AGAIN = 1013
"""A socket's close code when the session's instance does not answer: the page reconnects."""
OWNER_WAIT = 12.0
"""Seconds a socket's handshake waits for the session's instance to answer or another to take the session up: longer
than a dead instance's lease lasts (`webclient.web.cluster.instance.TTL`), well within a proxy's read timeout."""
OWNER_ASKED_EVERY = 0.5
"""Seconds between two tries while it waits."""
RETRY_PAGE = (
    b"<!doctype html><meta charset=utf-8><meta http-equiv=refresh content=3><title>Moving</title>"
    b"<p>The instance that runs this session does not answer: it moves to another within seconds. This page reloads."
)


def session_in(path: str) -> str | None:
    """The session a path below the prefix is about (``/sessions/ID...``, ``/embed/sessions/ID...``), or None."""
    parts = path.split("/")
    if len(parts) >= 3 and parts[1] == "sessions":
        found = parts[2]
    elif len(parts) >= 4 and parts[1] == "embed" and parts[2] == "sessions":
        found = parts[3]
    else:
        return None
    return found if 0 < len(found) <= MAX_SESSION_ID else None


def starts_session(scope: Scope, path: str) -> bool:
    """New session (the index's form, or an embed's start): a POST to ``/sessions`` or ``/embed``."""
    return scope["type"] == "http" and scope["method"] == "POST" and path in ("/sessions", "/embed")


class Forwarding:
    """Sends a request to the instance that runs its session, or a new session to the least loaded instance."""

    def __init__(self, app: ASGIApp, cluster: ClusterHolder) -> None:
        self.app = app
        self.cluster = cluster

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        instance, token = self.cluster.instance, self.cluster.token
        if scope["type"] not in ("http", "websocket") or instance is None or token is None or scope.get(FORWARDED):
            await self.app(scope, receive, send)
            return
        root: str = scope.get("root_path", "")
        path = scope["path"][len(root) :] if scope["path"].startswith(root) else scope["path"]
        address: str | None = None
        session_id = session_in(path)
        if session_id is not None:
            held = await instance.holder(session_id)
            if held is None:
                await self.app(scope, receive, send)
                return
            address = held.address
        elif starts_session(scope, path):
            agent, receive = await agent_asked(scope, receive)
            other = await instance.elsewhere(agent)
            if other is None:
                await self.app(scope, receive, send)
                return
            address = other.address
        else:
            await self.app(scope, receive, send)
            return
        headers = forwarded_headers(scope, token, self.cluster.person_headers)
        if scope["type"] == "websocket" and session_id is not None:
            await self._socket(scope, receive, send, session_id, address, path, headers)
        else:
            await self._http(scope, receive, send, address, path, headers)

    # -- HTTP ----------------------------------------------------------------------------------------------------

    async def _http(
        self, scope: Scope, receive: Receive, send: Send, address: str | None, path: str, headers: list[tuple[str, str]]
    ) -> None:
        import httpx

        if address is None:
            await _retry_later(send)
            return
        query = scope.get("query_string", b"").decode("latin-1")
        url = f"{address}{path}" + (f"?{query}" if query else "")
        client = self.cluster.client()
        request = client.build_request(scope["method"], url, headers=headers, content=_body(receive))
        try:
            response = await client.send(request, stream=True)
        except httpx.TransportError as error:
            log.warning("forwarding to %s failed: %s", address, error.__class__.__name__)
            await _retry_later(send)
            return
        try:
            passed = [
                (name, value)
                for name, value in response.headers.raw
                if name.decode("latin-1").lower() not in RESPONSE_HOP_BY_HOP
            ]
            await send({"type": "http.response.start", "status": response.status_code, "headers": passed})
            async for chunk in response.aiter_raw():
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        except httpx.TransportError:
            log.warning("forwarding from %s broke off", address)
        finally:
            await response.aclose()

    # -- web sockets ---------------------------------------------------------------------------------------------

    async def _socket(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        session_id: str,
        address: str | None,
        path: str,
        headers: list[tuple[str, str]],
    ) -> None:
        """Pass a page's socket on to the instance that runs its session. While that instance does not answer (it
        died and its lease has not expired yet) the handshake waits, asking again who runs the session, up to
        `OWNER_WAIT` seconds: a page refused would back off for up to a minute, a page held is served by whichever
        instance takes the session up, this one included, the moment it does."""
        from websockets.exceptions import ConnectionClosed

        first = await receive()
        if first["type"] != "websocket.connect":
            return
        instance = self.cluster.instance
        assert instance is not None  # only an instance among others forwards
        deadline = asyncio.get_running_loop().time() + OWNER_WAIT
        while True:
            upstream = await self._connect(scope, address, path, headers) if address is not None else None
            if isinstance(upstream, int):  # refused for good (the person): the page stops trying
                await send({"type": "websocket.close", "code": upstream})
                return
            if upstream is not None:
                break
            if asyncio.get_running_loop().time() >= deadline:
                await send({"type": "websocket.close", "code": TRY_AGAIN})
                return
            await asyncio.sleep(OWNER_ASKED_EVERY)
            held = await instance.holder(session_id)
            if held is None:  # taken up here: answered as if it had come here first
                replayed: list[Message] = [first]

                async def again() -> Message:
                    return replayed.pop() if replayed else await receive()

                await self.app(scope, again, send)
                return
            address = held.address
        await send({"type": "websocket.accept", "subprotocol": upstream.subprotocol})

        async def down() -> int:
            """The owner's frames to the browser; its close code."""
            try:
                async for frame in upstream:
                    if isinstance(frame, str):
                        await send({"type": "websocket.send", "text": frame})
                    else:
                        await send({"type": "websocket.send", "bytes": frame})
            except ConnectionClosed:
                pass
            close = upstream.close_code
            return TRY_AGAIN if close in (None, 1006) else close

        async def up() -> None:
            """The browser's frames to the owner, until it goes."""
            while True:
                message: Message = await receive()
                if message["type"] == "websocket.disconnect":
                    return
                data = message.get("text") if message.get("text") is not None else message.get("bytes")
                if data is not None:
                    await upstream.send(data)

        downward, upward = asyncio.ensure_future(down()), asyncio.ensure_future(up())
        try:
            done, _ = await asyncio.wait({downward, upward}, return_when=asyncio.FIRST_COMPLETED)
            if downward in done and not downward.cancelled() and downward.exception() is None:
                with contextlib.suppress(Exception):
                    await send({"type": "websocket.close", "code": downward.result()})
            elif upward in done and not upward.cancelled() and upward.exception() is not None:
                # The owner went as the page spoke: the page reconnects (a plain end would leave it for gone).
                with contextlib.suppress(Exception):
                    await send({"type": "websocket.close", "code": TRY_AGAIN})
        finally:
            for task in (downward, upward):
                task.cancel()
            await asyncio.gather(downward, upward, return_exceptions=True)
            await upstream.close()

    async def _connect(
        self, scope: Scope, address: str, path: str, headers: list[tuple[str, str]]
    ) -> ClientConnection | int | None:
        """A socket to the same path at ``address``; a close code when the owner refused the person (the page stops
        trying); None when it did not answer or refused for another reason (the page may try again)."""
        from websockets.asyncio.client import connect
        from websockets.exceptions import InvalidHandshake

        query = scope.get("query_string", b"").decode("latin-1")
        url = "ws" + address.removeprefix("http") + path + (f"?{query}" if query else "")
        origin = Headers(scope=scope).get("origin")
        protocols = [p for p in scope.get("subprotocols", ())] or None
        try:
            return await connect(
                url,
                additional_headers=headers,
                origin=origin,  # type: ignore[arg-type]
                subprotocols=protocols,
                max_size=None,
                open_timeout=5,
                ping_interval=None,
                compression=None,
            )
        except (OSError, InvalidHandshake, TimeoutError) as refused:
            status = getattr(getattr(refused, "response", None), "status_code", None)
            log.info("forwarding a socket to %s: %s", address, status or refused.__class__.__name__)
            return 1008 if status in (401, 403) else None


async def agent_asked(scope: Scope, receive: Receive) -> tuple[str | None, Receive]:
    """The agent a New session form asks for (its ``agent`` field; None: the default, or a form too large to be
    one), and a ``receive`` that gives the body again to whoever answers it."""
    if Headers(scope=scope).get("content-type", "").split(";")[0].strip() != "application/x-www-form-urlencoded":
        return None, receive
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        size += len(chunks[-1])
        if size > MAX_FORM or not message.get("more_body"):
            break
    replayed = [{"type": "http.request", "body": b"".join(chunks), "more_body": size > MAX_FORM}]

    async def again() -> Message:
        return replayed.pop(0) if replayed else await receive()

    if size > MAX_FORM:
        return None, again
    asked = parse_qs(b"".join(chunks).decode("latin-1")).get("agent", [""])[0]
    return asked or None, again


async def _body(receive: Receive) -> AsyncIterator[bytes]:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return
        yield message.get("body", b"")
        if not message.get("more_body"):
            return


async def _retry_later(send: Send) -> None:
    headers = [(b"content-type", b"text/html; charset=utf-8"), (b"retry-after", b"3"), (b"cache-control", b"no-store")]
    await send({"type": "http.response.start", "status": 503, "headers": headers})
    await send({"type": "http.response.body", "body": RETRY_PAGE})
