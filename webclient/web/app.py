"""The web layer: pages over HTTP, live fragments over one web socket per page."""

from __future__ import annotations

import asyncio
import base64
import gc
import json
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from markupsafe import Markup
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket, WebSocketDisconnect

from webclient.acp.agent import AcpAgent
from webclient.config import Settings
from webclient.render.diffs import DiffView, parse_gap
from webclient.render.export import export_filename, session_markdown
from webclient.render.panels import FilePanel, change_diff, embedded_resource, entry_diff, file_panel, resource_panel
from webclient.render.rendering import Renderer, dom_id
from webclient.render.text import scrub
from webclient.session.core import Session
from webclient.session.registry import SessionManager
from webclient.viewmodel.entries import MessageEntry
from webclient.web.access import Access, AccessGuard
from webclient.web.context import base_context, manager, page, session_of, small_int
from webclient.web.context import renderer as web_renderer
from webclient.web.live import LiveView, composer_nonce
from webclient.web.log_page import protocol_log_page
from webclient.web.message_docs import SessionDocs, session_docs
from webclient.web.prompt_routes import mention_options, upload_attachment
from webclient.web.security_headers import SecurityHeaders
from webclient.workspace import process_group
from webclient.workspace.reaper import STOP_SECONDS, Reaper

log = logging.getLogger(__name__)

STATIC_DIR = Path(__file__).resolve().parents[2] / "static"
WS_POLICY_VIOLATION = 1008


async def index(request: Request) -> Response:
    settings: Settings = request.app.state.settings
    sessions = sorted(manager(request).sessions.values(), key=lambda s: s.created, reverse=True)
    return page(request, "index.html", sessions=sessions, agent_command=settings.agent_command)


async def create_session(request: Request) -> Response:
    session = manager(request).create()
    root = base_context(request)["root"]
    return RedirectResponse(f"{root}/sessions/{session.id}", status_code=303)


async def session_page(request: Request) -> Response:
    session = session_of(request)
    docs = session_docs(request).of(session)
    now = time.monotonic()
    window = session.thread.latest(LiveView.WINDOW)  # older entries load as the page scrolls up
    ws_scheme = "wss" if request.url.scheme == "https" else "ws"
    root = base_context(request)["root"]
    return page(
        request,
        "session.html",
        session=session,
        message=None,
        message_view=lambda entry: docs.view(entry, now) if isinstance(entry, MessageEntry) else None,
        nonce=composer_nonce(),
        oob=None,
        window=window,
        earlier=window[0].seq if window and window[0].seq > session.thread.first_seq else None,
        ws_url=f"{ws_scheme}://{request.url.netloc}{root}/sessions/{session.id}/ws",
    )


async def prompt_without_script(request: Request) -> Response:
    """The prompt form's plain HTML fallback (the page normally sends it over its web socket)."""
    session = session_of(request)
    form = await request.form()
    session.submit_prompt(str(form.get("prompt", "")), str(form.get("nonce", "")))
    return RedirectResponse(f"{base_context(request)['root']}/sessions/{session.id}", status_code=303)


async def export_session(request: Request) -> Response:
    """The whole session as a Markdown file."""
    session = session_of(request)
    headers = {"content-disposition": f'attachment; filename="{export_filename(session.title)}"'}
    return Response(session_markdown(session), media_type="text/markdown; charset=utf-8", headers=headers)


async def end_session(request: Request) -> Response:
    session = session_of(request)
    await manager(request).end(session)
    return RedirectResponse(f"{base_context(request)['root']}/sessions/{session.id}", status_code=303)


def _fragment(request: Request, session: Session, template: str, title: str, **context: Any) -> Response:
    """A side-panel fragment for htmx, or the same inside a page of its own when followed as a plain link."""
    renderer = web_renderer(request)
    html = renderer.page(template, session=session, **base_context(request), **context)
    if request.headers.get("hx-request"):
        return HTMLResponse(html)
    return page(request, "panel_page.html", session=session, title=title, fragment=Markup(html))


def _gap(request: Request) -> tuple[int, int] | None:
    gap = request.query_params.get("gap")
    if gap is None:
        return None
    try:
        return parse_gap(gap)
    except ValueError:
        raise HTTPException(400, "gap must be START-END") from None


async def file_page(request: Request) -> Response:
    """A workspace file at a line: where a tool call's location link leads, and what "follow" shows."""
    session = session_of(request)
    path = request.query_params.get("path", "")
    line = small_int(request.query_params.get("line"))
    panel = await asyncio.to_thread(file_panel, session, path, line)
    lines_url = f"{request.url.path}?{urlencode({'path': path, 'line': line or ''})}"
    return _file_panel_response(request, session, panel, lines_url)


async def resource_page(request: Request) -> Response:
    """An embedded resource of a message or tool call: shown as a file in the side panel, or downloaded."""
    session = session_of(request)
    resource = embedded_resource(session, request.path_params["seq"], request.path_params["index"])
    if resource is None:
        raise HTTPException(404, "No such resource")
    if "download" in request.query_params:
        data = scrub(resource.text).encode() if resource.text is not None else _base64(resource.blob or "")
        name = quote(scrub(resource.uri).rstrip("/").rsplit("/", 1)[-1] or "resource", safe="")
        # Never rendered by the browser as what the agent claims it is: always a download.
        headers = {"content-disposition": f"attachment; filename*=UTF-8''{name}"}
        return Response(data, media_type="application/octet-stream", headers=headers)
    panel = await asyncio.to_thread(resource_panel, resource)
    return _file_panel_response(request, session, panel, request.url.path)


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
            view_id="panel-file",
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


async def changes_page(request: Request) -> Response:
    """Every file the session changed."""
    session = session_of(request)
    await session.changes.look_if_not_watching()
    return _fragment(request, session, "_changes.html", "Changes", changes=session.changes.files())


async def change_diff_page(request: Request) -> Response:
    """One changed file as a diff against the session's start."""
    session = session_of(request)
    display = request.query_params.get("path", "")
    panel = await asyncio.to_thread(change_diff, session, display)
    if panel is None:
        raise HTTPException(404, "This file has not changed in this session")
    url = f"{request.url.path}?{urlencode({'path': display})}"
    gap = _gap(request)
    if gap is not None and panel.diff is not None:
        return _diff_block(request, "gap_rows", panel.diff, "change-diff", url, gap)
    return _fragment(request, session, "_change_panel.html", display, panel=panel, url=url)


async def diff_body(request: Request) -> Response:
    """The body of a large diff in the thread (loaded when the user opens it), or rows of a gap."""
    session = session_of(request)
    seq, index = request.path_params["seq"], request.path_params["index"]
    diff = await asyncio.to_thread(entry_diff, session, seq, index)
    if diff is None:
        raise HTTPException(404, "No such diff")
    entry = session.thread.entry(seq)
    return _diff_block(request, "diff_body", diff, f"{dom_id(entry)}-diff-{index}", request.url.path, _gap(request))


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


async def session_socket(websocket: WebSocket) -> None:
    session = manager(websocket).get(websocket.path_params["session_id"])
    if session is None:  # who may open it at all is settled before routing (webclient.web.access)
        await websocket.close(code=WS_POLICY_VIOLATION)
        return
    await websocket.accept()
    live = LiveView(
        session,
        web_renderer(websocket),
        session_docs(websocket).of(session),
        websocket.send_text,
        base_context(websocket),
    )
    sender = asyncio.create_task(live.run(), name=f"ws-sender-{session.id}")
    sender.add_done_callback(lambda task: _sender_done(task, websocket))
    try:
        while True:
            text = await websocket.receive_text()
            await _handle_client_message(session, live, text)
    except WebSocketDisconnect:
        pass
    finally:
        sender.cancel()
        await asyncio.gather(sender, return_exceptions=True)


def _sender_done(task: asyncio.Task[None], websocket: WebSocket) -> None:
    """A sender that failed leaves the page stale: log it and close, so the page reconnects and resyncs."""
    if task.cancelled() or task.exception() is None:
        return
    log.error("web socket sender failed", exc_info=task.exception())
    asyncio.ensure_future(websocket.close(code=1011))


def _strings(value: Any) -> list[str]:
    """A form field htmx sent once (a string), several times (a list) or not at all."""
    if isinstance(value, str):
        return [value]
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


async def _handle_client_message(session: Session, live: LiveView, text: str) -> None:
    """A form or button of the page, sent by htmx's ws extension as JSON of its values.

    Every action returns at once (what waits for the agent runs in the session's background tasks): this
    runs inside the socket's receive loop, which must stay free to see the page leave and the server stop.
    """
    try:
        message = json.loads(text)
    except json.JSONDecodeError:
        log.warning("session %s: unreadable message from the page", session.id)
        return
    if not isinstance(message, dict):
        return
    action = message.get("action")
    if action == "prompt":
        uploads, mentions = _strings(message.get("attachment")), _strings(message.get("mention"))
        session.submit_prompt(str(message.get("prompt", "")), str(message.get("nonce", "")), uploads, mentions)
    elif action == "queue_edit":
        session.queue.edit(str(message.get("item_id", "")), str(message.get("text", "")))
    elif action == "queue_remove":
        session.queue.remove(str(message.get("item_id", "")))
    elif action == "queue_send":
        session.send_queued(str(message.get("item_id", "")))
    elif action == "set_mode":
        session.set_mode(str(message.get("mode_id", "")))
    elif action == "set_setting":
        session.set_setting(str(message.get("setting_id", "")), str(message.get("value", "")))
    elif action == "permission":
        session.answer_permission(str(message.get("request_id", "")), str(message.get("option_id", "")))
    elif action == "cancel":
        session.cancel()
    elif action == "follow":
        live.follow = message.get("follow") == "on"
        if live.follow:
            live.mark("location")
    elif action == "diff_mode":
        live.context["diff_mode"] = "split" if message.get("mode") == "split" else "unified"
        live.resync()
    elif action == "earlier":
        before = small_int(str(message.get("before", "")))
        if before:
            live.earlier(before)
    elif action == "set_model":
        session.set_model(str(message.get("model_id", "")))
    elif action == "authenticate":
        session.authenticate(str(message.get("method_id", "")))
    elif action == "cancel_sign_in":
        session.cancel_sign_in()
    elif action == "retry":
        session.retry()
    else:
        log.warning("session %s: unknown action %r from the page", session.id, action)


def create_app(settings: Settings | None = None) -> Starlette:
    """The ASGI application (``uvicorn --factory webclient.web.app:create_app``)."""
    settings = settings or Settings.from_env()
    access = Access.from_settings(settings)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        app.state.settings = settings
        app.state.renderer = Renderer()
        app.state.docs = SessionDocs()
        app.state.sessions = SessionManager(settings, AcpAgent, on_release=app.state.docs.release)
        # Start-up's objects (modules, classes) live as long as the process: keep them out of every garbage
        # collection, so a full one costs what the sessions hold, not the whole server. A full collection walks
        # all of that (about 90 ms for a 10,000-entry thread on a 2-core machine), and an agent's flood made one
        # every second by default: the other sessions' p99 round trip was 430 ms, with one per 100 middle
        # collections instead 206 ms (bench/isolation.py). Forgotten sessions are collected explicitly.
        reaper = Reaper.start()  # stops our subprocesses should this process die without stopping them
        gc.freeze()
        young, middle, _ = gc.get_threshold()
        gc.set_threshold(young, middle, 100)
        try:
            yield
        finally:
            await process_group.stop_within(STOP_SECONDS, app.state.sessions.close_all())
            reaper.close()

    app = Starlette(
        routes=[
            Route("/", index),
            Route("/sessions", create_session, methods=["POST"]),
            Route("/sessions/{session_id}", session_page),
            Route("/sessions/{session_id}/prompt", prompt_without_script, methods=["POST"]),
            Route("/sessions/{session_id}/end", end_session, methods=["POST"]),
            Route("/sessions/{session_id}/export.md", export_session),
            Route("/sessions/{session_id}/log", protocol_log_page),
            Route("/sessions/{session_id}/file", file_page),
            Route("/sessions/{session_id}/changes", changes_page),
            Route("/sessions/{session_id}/attachments", upload_attachment, methods=["POST"]),
            Route("/sessions/{session_id}/mentions", mention_options),
            Route("/sessions/{session_id}/changes/diff", change_diff_page),
            Route("/sessions/{session_id}/diffs/{seq:int}/{index:int}", diff_body),
            Route("/sessions/{session_id}/resources/{seq:int}/{index:int}", resource_page),
            WebSocketRoute("/sessions/{session_id}/ws", session_socket),
            Mount("/static", app=StaticFiles(directory=STATIC_DIR), name="static"),
        ],
        lifespan=lifespan,
    )
    app.state.access = access
    # Outermost last: the headers go on the guard's own refusals too.
    app.add_middleware(AccessGuard, access=access)
    app.add_middleware(SecurityHeaders, frame_ancestors=settings.frame_ancestors)
    return app
