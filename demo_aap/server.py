"""The demo AAP v3 server's routes (Starlette): meta, sessions, history and turns (SSE or JSON)."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from .agents import AGENT, meta
from .sessions import Session
from .turns import Turn, sse

Handler = Callable[[Request], Awaitable[Response]]


def create_app(delay: float = 0.03, api_key: str | None = None) -> Starlette:
    """``delay``: seconds between streamed pieces; ``api_key``: when set, every route but ``/meta`` wants it as
    ``Authorization: Bearer``."""
    sessions: dict[str, Session] = {}

    def guarded(handler: Handler) -> Handler:
        async def check(request: Request) -> Response:
            if api_key and request.headers.get("authorization") != f"Bearer {api_key}":
                return JSONResponse({"error": "Unauthorized"}, status_code=401)
            return await handler(request)

        return check

    def session_of(request: Request) -> Session | None:
        return sessions.get(request.path_params["session_id"])

    async def get_meta(request: Request) -> Response:
        return JSONResponse(meta())

    async def list_sessions(request: Request) -> Response:
        ids = sorted(sessions)
        after = request.query_params.get("after")
        start = ids.index(after) + 1 if after in ids else 0
        page = ids[start : start + 20]
        body: dict[str, Any] = {"sessions": [sessions[i].info() for i in page]}
        if start + 20 < len(ids):
            body["next"] = page[-1]
        return JSONResponse(body)

    async def create_session(request: Request) -> Response:
        body = await _json(request)
        agent = body.get("agent") if isinstance(body, dict) else None
        if not isinstance(agent, dict) or agent.get("name") != AGENT["name"]:
            return JSONResponse(
                {"error": f"No agent named {agent.get('name') if isinstance(agent, dict) else None!r}"}, 404
            )
        session = Session.create(body)
        sessions[session.id] = session
        return JSONResponse({"sessionId": session.id}, status_code=201)

    async def get_session(request: Request) -> Response:
        session = session_of(request)
        return JSONResponse(session.info()) if session else _not_found()

    async def delete_session(request: Request) -> Response:
        return Response(status_code=204) if sessions.pop(request.path_params["session_id"], None) else _not_found()

    async def history(request: Request) -> Response:
        session = session_of(request)
        if session is None:
            return _not_found()
        kind = request.query_params.get("type", "compacted")
        if kind not in ("compacted", "full"):
            return JSONResponse({"error": f"Unknown history type {kind!r}"}, status_code=400)
        messages = session.compacted() if kind == "compacted" else session.history
        return JSONResponse({"history": {kind: messages}})

    async def turn(request: Request) -> Response:
        session = session_of(request)
        if session is None:
            return _not_found()
        body = await _json(request)
        messages = body.get("messages") if isinstance(body, dict) else None
        if not isinstance(messages, list) or not messages or not all(isinstance(m, dict) for m in messages):
            return JSONResponse({"error": "messages must be a non-empty list"}, status_code=400)
        session.configure(body.get("agent"), body.get("tools"))
        mode = body.get("stream", "none")
        run = Turn(session, "delta" if mode == "delta" else "message", delay)
        if mode in ("delta", "message"):
            return StreamingResponse(_stream(run.events(messages)), media_type="text/event-stream")
        stop = "end_turn"
        async for name, data in run.events(messages):
            stop = data["stopReason"] if name == "turn_stop" else stop
        return JSONResponse({"stopReason": stop, "messages": run.new_messages})

    routes = [
        Route("/meta", get_meta),
        Route("/sessions", guarded(list_sessions), methods=["GET"]),
        Route("/sessions", guarded(create_session), methods=["POST"]),
        Route("/sessions/{session_id}", guarded(get_session), methods=["GET"]),
        Route("/sessions/{session_id}", guarded(delete_session), methods=["DELETE"]),
        Route("/sessions/{session_id}/history", guarded(history)),
        Route("/sessions/{session_id}/turns", guarded(turn), methods=["POST"]),
    ]
    return Starlette(routes=routes)


async def _stream(events: AsyncIterator[tuple[str, dict[str, Any]]]) -> AsyncIterator[bytes]:
    async for event in events:
        yield sse(event)


async def _json(request: Request) -> Any:
    try:
        return json.loads(await request.body())
    except ValueError:
        return None


def _not_found() -> Response:
    return JSONResponse({"error": "Session not found"}, status_code=404)


def app_from_env() -> Starlette:
    return create_app(float(os.environ.get("DEMO_AAP_DELAY", "0.03")), os.environ.get("DEMO_AAP_KEY") or None)
