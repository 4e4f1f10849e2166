"""What the side panel shows, and the parts of the thread loaded when opened: workspace files, the session's
changes and their diffs, embedded resources, the bodies of large diffs.

Each answers htmx with a fragment, and a plain link (or a new tab) with the same fragment in a page of its own.
"""

from __future__ import annotations

import asyncio
import base64
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from markupsafe import Markup
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from webclient.people.roles import may_drive
from webclient.render.diffs import DiffView, parse_gap
from webclient.render.dom import PAGE_IDS, entry_diff_id
from webclient.render.panels import FilePanel, embedded_resource, entry_diff, file_panel, resource_panel
from webclient.render.review import all_digest, review_files, review_panel
from webclient.render.text import scrub
from webclient.session.core import Session
from webclient.session.review import Since
from webclient.web.context import base_context, render, role_in, session_of, small_int, urls
from webclient.web.context import renderer as web_renderer
from webclient.web.page_context import SignedInContext


async def file_page(request: Request) -> Response:
    """A workspace file at a line: where a tool call's location link leads, and what "follow" shows."""
    session = await session_of(request)
    path = request.query_params.get("path", "")
    line = small_int(request.query_params.get("line"))
    panel = await asyncio.to_thread(file_panel, session, path, line)
    lines_url = urls(request).for_("file", session_id=session.id, path=path, line=line or "")
    return _file_panel_response(request, session, panel, lines_url)


async def resource_page(request: Request) -> Response:
    """An embedded resource of a message or tool call: shown as a file in the side panel, or downloaded."""
    session = await session_of(request)
    seq, index = request.path_params["seq"], request.path_params["index"]
    resource = embedded_resource(session, seq, index)
    if resource is None:
        raise HTTPException(404, "No such resource")
    if "download" in request.query_params:
        data = scrub(resource.text).encode() if resource.text is not None else _base64(resource.blob or "")
        name = quote(scrub(resource.uri).rstrip("/").rsplit("/", 1)[-1] or "resource", safe="")
        # Never rendered by the browser as what the agent claims it is: always a download.
        headers = {"content-disposition": f"attachment; filename*=UTF-8''{name}"}
        return Response(data, media_type="application/octet-stream", headers=headers)
    panel = await asyncio.to_thread(resource_panel, resource)
    lines_url = urls(request).for_("resource", session_id=session.id, seq=seq, index=index)
    return _file_panel_response(request, session, panel, lines_url)


async def changes_page(request: Request) -> Response:
    """Every file the session changed."""
    session = await session_of(request)
    await session.changes.look_if_not_watching()
    since = _since(request, session)
    changes = await asyncio.to_thread(review_files, session, since)
    digest = await asyncio.to_thread(all_digest, session, since)
    may_review = may_drive_session(request, session)
    review = {"review_digest": digest, "may_review": may_review, "since": since}
    return _fragment(request, session, "_changes.html", "Changes", changes=changes, **review)


async def change_diff_page(request: Request) -> Response:
    """One changed file as a diff against the session's start."""
    session = await session_of(request)
    display = request.query_params.get("path", "")
    since = _since(request, session)
    panel = await asyncio.to_thread(review_panel, session, display, since)
    if panel is None:
        raise HTTPException(404, "This file has not changed in this session")
    prompt = "prompt" if since == "prompt" else None
    url = urls(request).for_("change_diff", session_id=session.id, path=display, since=prompt)
    gap = _gap(request)
    if gap is not None and panel.diff is not None:
        return _diff_block(request, "gap_rows", panel.diff, PAGE_IDS.change_diff, url, gap)
    may_review = may_drive_session(request, session)
    review = {"may_review": may_review, "since": since}
    return _fragment(request, session, "_change_panel.html", display, panel=panel, url=url, **review)


async def diff_body(request: Request) -> Response:
    """The body of a large diff in the thread (loaded when the user opens it), or rows of a gap."""
    session = await session_of(request)
    seq, index = request.path_params["seq"], request.path_params["index"]
    diff = await asyncio.to_thread(entry_diff, session, seq, index)
    if diff is None:
        raise HTTPException(404, "No such diff")
    entry = session.thread.entry(seq)
    url = urls(request).for_("diff_body", session_id=session.id, seq=seq, index=index)
    return _diff_block(request, "diff_body", diff, entry_diff_id(entry, index), url, _gap(request))


def _since(request: Request, session: Session) -> Since:
    """Which baseline Changes compares with: ``?since=prompt`` the last prompt's (once there was one), else the
    session's start."""
    offered = session.review.prompt.offered
    return "prompt" if request.query_params.get("since") == "prompt" and offered else "session"


def may_drive_session(request: Request, session: Session) -> bool:
    """Whether this person may Keep and Undo (drive the session); a watcher sees the review without its buttons."""
    role = role_in(request, session)
    return role is not None and may_drive(role)


@dataclass(frozen=True, kw_only=True)
class PanelPageContext(SignedInContext):
    """``panel_page.html``: a side panel's fragment in a page of its own, when its link is followed without htmx."""

    template = "panel_page.html"
    session: Session
    """The session the panel belongs to."""
    title: str
    """The panel's title (Changes, a file's name, ...)."""
    fragment: Markup
    """The panel, rendered."""


def _fragment(request: Request, session: Session, template: str, title: str, **context: Any) -> Response:
    """A side-panel fragment for htmx, or the same inside a page of its own when followed as a plain link."""
    renderer = web_renderer(request)
    html = renderer.page(template, session=session, **base_context(request), **context)
    if request.headers.get("hx-request"):
        return HTMLResponse(html)
    return render(
        request, PanelPageContext(**base_context(request), session=session, title=title, fragment=Markup(html))
    )


def _gap(request: Request) -> tuple[int, int] | None:
    gap = request.query_params.get("gap")
    if gap is None:
        return None
    try:
        return parse_gap(gap)
    except ValueError:
        raise HTTPException(400, "gap must be START-END") from None


def _base64(data: str) -> bytes:
    try:
        return base64.b64decode(data, validate=False)
    except ValueError:
        raise HTTPException(422, "The agent sent this resource with broken base64") from None


def _file_panel_response(request: Request, session: Session, panel: FilePanel, lines_url: str) -> Response:
    """A file in the side panel, or (with ``?gap=``) the lines of it that were hidden at first."""
    gap = _gap(request)
    if gap is not None:
        if panel.view is None:
            raise HTTPException(404, panel.error or "No such file")
        renderer = web_renderer(request)
        html = renderer.block(
            "_file_view.html",
            "file_lines",
            view=panel.view,
            view_id=PAGE_IDS.panel_file,
            lines_url=lines_url,
            gap_start=gap[0],
            gap_end=gap[1],
            **base_context(request),
        )
        return HTMLResponse(html)
    return _fragment(
        request,
        session,
        "_file_panel.html",
        panel.display,
        display=panel.display,
        line=panel.line,
        view=panel.view,
        error=panel.error,
        lines_url=lines_url,
        following=False,
    )


def _diff_block(
    request: Request, block: str, diff: DiffView, diff_id: str, url: str, gap: tuple[int, int] | None
) -> Response:
    renderer = web_renderer(request)
    extra = {"gap_start": gap[0], "gap_end": gap[1]} if gap is not None else {}
    html = renderer.block(
        "_diff.html",
        "gap_rows" if gap is not None else block,
        diff=diff,
        diff_id=diff_id,
        body_url=url,
        expanded=True,
        **base_context(request),
        **extra,
    )
    return HTMLResponse(html)
