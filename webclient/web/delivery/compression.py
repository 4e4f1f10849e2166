"""Pages and other text answers compressed for the browser that asks (``Accept-Encoding``): brotli, else gzip.

What is left as it is:

- web sockets: they have their own compression (permessage-deflate, negotiated by uvicorn), never this;
- an answer already coded (the static files come compressed from `webclient.web.delivery.assets`), one marked
  ``Cache-Control: no-transform``, a 304 or 204, one that is not text (images, downloads), a HEAD;
- a body under :data:`~webclient.web.delivery.encodings.MIN_SIZE` bytes.

A streamed answer (more than one body message) stays streamed: each piece is compressed and flushed as it comes.

BREACH. A compressed answer's length tells someone who watches the wire how well the page compressed; if the page
holds a secret and reflects what an attacker chose (a query parameter, a form field, another person's prompt in a
shared session), the attacker can guess the secret a character at a time from the lengths of pages it makes the
victim's browser load. Our pages hold one secret of that kind, the page token for forms (CSRF, the same on every
page of a person); the prompt nonce is new on every page, and shares' links are shown only on their owner's session
page, which reflects nothing a request chooses. Rather than leave every page uncompressed (most of what is sent),
the token is masked afresh on every page (`webclient.web.access.page_token`): its bytes differ each time, so no
length says anything about it. So every text answer may be compressed here, and the compression knows nothing of
the pages.
"""

from __future__ import annotations

import anyio.to_thread
from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from webclient.web.delivery.encodings import MIN_SIZE, Coding, StreamPacker, chosen_coding, compressed, compressible

NOT_COMPRESSED_STATUS = frozenset({204, 206, 304})
IN_THREAD_SIZE = 256 * 1024
"""Bytes above which a body is compressed in a worker thread (about 2 ms per 100 kB at brotli's level 5)."""


class Compression:
    """Compresses HTTP answers that are text, for the browsers that accept it."""

    def __init__(self, app: ASGIApp, minimum_size: int = MIN_SIZE) -> None:
        self.app = app
        self.minimum_size = minimum_size

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] == "HEAD":
            await self.app(scope, receive, send)
            return
        coding = chosen_coding(Headers(scope=scope).get("accept-encoding", ""))
        if coding is None:
            await self.app(scope, receive, send)
            return
        await _Responder(coding, self.minimum_size, send).run(self.app, scope, receive)


def _wanted(start: Message) -> bool:
    """Whether an answer with these headers is one to compress (before seeing its body)."""
    headers = Headers(raw=start.get("headers", []))
    return (
        start["status"] not in NOT_COMPRESSED_STATUS
        and "content-encoding" not in headers
        and "no-transform" not in headers.get("cache-control", "")
        and compressible(headers.get("content-type", ""))
    )


class _Responder:
    """One answer on its way: its start held until the first body piece says whether it streams."""

    def __init__(self, coding: Coding, minimum_size: int, send: Send) -> None:
        self.coding = coding
        self.minimum_size = minimum_size
        self.send = send
        self.start: Message | None = None
        self.packer: StreamPacker | None = None
        self.passing = False

    async def run(self, app: ASGIApp, scope: Scope, receive: Receive) -> None:
        await app(scope, receive, self.on_message)

    async def on_message(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            if _wanted(message):
                self.start = message  # until the body says how big it is
            else:
                self.passing = True
                await self.send(message)
            return
        if message["type"] != "http.response.body" or self.passing:
            await self.send(message)
            return
        if self.packer is not None:  # streaming
            body = self.packer.piece(message.get("body", b""))
            if not message.get("more_body", False):
                body += self.packer.end()
            await self.send({**message, "body": body})
            return
        assert self.start is not None, "a body before the start of the answer"
        start, self.start = self.start, None
        body = message.get("body", b"")
        if message.get("more_body", False):
            self.packer = StreamPacker(self.coding)
            await self.send(self._coded_start(start, None))
            await self.send({**message, "body": self.packer.piece(body)})
            return
        if len(body) < self.minimum_size:
            self.passing = True
            await self.send(start)
            await self.send(message)
            return
        if len(body) > IN_THREAD_SIZE:  # a long session's page: some tens of ms, not on the event loop
            packed = await anyio.to_thread.run_sync(lambda: compressed(body, self.coding, best=False))
        else:
            packed = compressed(body, self.coding, best=False)
        await self.send(self._coded_start(start, len(packed)))
        await self.send({**message, "body": packed})

    def _coded_start(self, start: Message, length: int | None) -> Message:
        coded = {**start, "headers": list(start.get("headers", []))}
        headers = MutableHeaders(scope=coded)
        headers["content-encoding"] = self.coding
        headers.add_vary_header("Accept-Encoding")
        if "etag" in headers and not headers["etag"].startswith("W/"):
            headers["etag"] = "W/" + headers["etag"]  # the coded bytes are not the ones the tag named
        del headers["content-length"]
        if length is not None:
            headers["content-length"] = str(length)
        return coded
