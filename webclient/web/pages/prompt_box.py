"""What the prompt box asks the server: file uploads and ``@`` mentions while the user writes, and the prompt
itself when the page runs no script."""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict

from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response

from webclient.session.prompt_queue import PromptRefused
from webclient.session.uploads import UploadRefused
from webclient.web.access.body_limits import prompt_body_bytes
from webclient.web.context import manager, person, session_of, urls
from webclient.web.context import renderer as web_renderer
from webclient.workspace.listing import list_files, match

LISTING_TTL = 10.0
"""Seconds a workspace listing is reused while the user types after ``@``."""

LISTINGS_KEPT = 32
"""Sessions whose listing is kept (the ones people are typing in); older ones are listed again when needed."""

_listings: OrderedDict[str, tuple[float, list[str]]] = OrderedDict()


async def prompt_without_script(request: Request) -> Response:
    """The prompt form's plain HTML fallback (the page normally sends it over its web socket)."""
    session = await session_of(request, "drive")
    # A field may be as long as the route's body (`webclient.web.access.body_limits`), not Starlette's 1 MiB.
    form = await request.form(max_files=0, max_part_size=prompt_body_bytes(manager(request).settings))
    try:
        session.submit_prompt(str(form.get("prompt", "")), str(form.get("nonce", "")), by=person(request))
    except PromptRefused as refused:  # too long, or the queue is full (the session's page shows it too)
        return PlainTextResponse(str(refused), status_code=413)
    return RedirectResponse(urls(request).for_("session", session_id=session.id), status_code=303)


async def upload_attachment(request: Request) -> Response:
    """A file pasted, dropped or picked in the prompt box, posted by htmx as the multipart field ``file``:
    held for the next prompt, shown as a chip."""
    session = await session_of(request, "drive")
    # Its size is bounded before it is read (`webclient.web.access.body_limits`): one file, and nothing else of size.
    async with request.form(max_files=1, max_fields=10) as form:
        file = form.get("file")
        if not isinstance(file, UploadFile):
            return PlainTextResponse("No file came with the request.", status_code=415)
        name, content_type, data = file.filename or "pasted", file.content_type or "", await file.read()
    try:
        upload = session.uploads.add(name, content_type, data, session.lifecycle.prompt_capabilities)
    except UploadRefused as refused:
        return PlainTextResponse(str(refused), status_code=415)
    renderer = web_renderer(request)
    return HTMLResponse(renderer.page("_attachment.html", upload=upload))


async def mention_options(request: Request) -> Response:
    """Workspace files matching what follows ``@`` in the prompt box, as menu items."""
    session = await session_of(request)
    query = request.query_params.get("q", "")[:200]
    now = time.monotonic()
    cached = _listings.get(session.id)
    if cached is None or now - cached[0] > LISTING_TTL:
        cached = (
            now,
            await asyncio.to_thread(list_files, session.workspace.roots, hides=session.workspace.lexically_hides),
        )
        _listings[session.id] = cached
        _listings.move_to_end(session.id)
        while len(_listings) > LISTINGS_KEPT:
            _listings.popitem(last=False)
    renderer = web_renderer(request)
    return HTMLResponse(renderer.page("_mentions.html", paths=match(cached[1], query), query=query))
