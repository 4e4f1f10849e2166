"""How large a request's body may be, route by route, in one place: an ASGI middleware in front of every route.

A body that says its length (``Content-Length``) and is over its route's limit is refused (413) before a byte of it
is read; one that does not (chunked) is counted as it comes and refused as soon as it passes the limit, so neither
is ever held whole, parsed or spooled to disk. Each route takes what it needs (:func:`body_limits`): a form is small,
the prompt as large as a prompt may be, an attachment as large as a file may be; and a multipart body (files) is
taken only where a file is expected (:data:`FILE_ROUTES`), so no form route spools a file part.

The sign-in pages that the access guard answers before routing are not routes: they have the small default.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse
from starlette.routing import BaseRoute, Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from webclient.config import Settings
from webclient.render.urls import ROUTES
from webclient.session.uploads import MAX_UPLOAD_BYTES

FORM_BYTES = 64 * 1024
"""A form's body (a rule, a secret, a share, an answer): a few fields; also the default of every route."""

MULTIPART_OVERHEAD = 64 * 1024
"""Bytes a multipart body may hold beyond its file (boundaries, part headers, the file's name)."""

FILE_ROUTES = frozenset({"attachments"})
"""The routes that take a file (a multipart body): every other one refuses one (415)."""

ENCODING_FACTOR = 3
"""How much a text grows when a form or the page's JSON carries it (``%E2%82%AC`` for one 3-byte character)."""


def prompt_body_bytes(settings: Settings) -> int:
    """The body (or web socket message) that carries one prompt as long as ``WEBCLIENT_MAX_PROMPT_MB`` allows,
    encoded, with the form's other fields; without a prompt limit, uvicorn's default for a message (16 MiB)."""
    prompt = int(settings.max_prompt_mb * 1024 * 1024)
    return ENCODING_FACTOR * prompt + FORM_BYTES if prompt else 16 * 1024 * 1024


def body_limits(settings: Settings) -> dict[str, int]:
    """Every route's limit in bytes, by route name (:data:`~webclient.render.urls.ROUTES`)."""
    limits = dict.fromkeys(ROUTES, FORM_BYTES)
    limits.update(
        prompt=prompt_body_bytes(settings),  # the page without its script posts the prompt
        embed=prompt_body_bytes(settings),  # an embedding portal's first prompt
        attachments=MAX_UPLOAD_BYTES + MULTIPART_OVERHEAD,
    )
    return limits


TOO_LARGE: dict[str, str] = {"attachments": f"The file is too large (at most {MAX_UPLOAD_BYTES:,} bytes)."}
"""What a refusal says, for a route whose limit is a thing the person chose (a file); others say the bytes."""


class _TooLarge(Exception):
    """The body grew past its limit while the app was reading it."""


class BodyLimits:
    """Refuses a body over its route's limit (413), or a file where none is expected (415), before it is read."""

    def __init__(self, app: ASGIApp, routes: Sequence[BaseRoute], limits: Mapping[str, int]) -> None:
        self.app = app
        self.routes = routes
        self.limits = limits

    def route_name(self, scope: Scope) -> str | None:
        """The name of the route this request is for (its path, whatever the method), None for no route."""
        partial = None
        for route in self.routes:
            match, _ = route.matches(scope)
            if match is Match.FULL:
                return getattr(route, "name", None)
            if match is Match.PARTIAL and partial is None:
                partial = getattr(route, "name", None)
        return partial

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # a web socket's messages are bounded by the server (uvicorn's ws_max_size)
            await self.app(scope, receive, send)
            return
        name = self.route_name(scope)
        limit = self.limits.get(name or "", FORM_BYTES)
        headers = Headers(scope=scope)
        refusal = TOO_LARGE.get(name or "", f"The request is too large: this address takes at most {limit:,} bytes.")
        if headers.get("content-type", "").lower().startswith("multipart/") and name not in FILE_ROUTES:
            await PlainTextResponse("This address takes no files.", status_code=415)(scope, receive, send)
            return
        declared = headers.get("content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > limit):
            await PlainTextResponse(refusal, status_code=413)(scope, receive, send)
            return
        seen = 0
        started = False

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > limit:
                raise _TooLarge
            return message

        async def watched(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted, watched)
        except _TooLarge:
            if started:  # the answer is on its way: nothing to say but to end the connection
                raise
            await PlainTextResponse(refusal, status_code=413)(scope, receive, send)
