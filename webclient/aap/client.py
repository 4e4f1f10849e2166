"""AAP v3 over HTTP: the requests a client makes of a remote agent server, and a turn's events as they stream.

Plain HTTP with JSON bodies; a turn is ``POST /sessions/:id/turns`` answered with Server-Sent Events (``delta`` and
``message`` modes, read with httpx-sse) or one JSON object (``none``, turned into the same events here, so the rest
of the client sees one shape). The API key goes in ``Authorization: Bearer`` and nowhere else: it is never logged,
and errors quote the server's answer, never the request.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import quote

import httpx
from httpx_sse import aconnect_sse

from webclient.aap.meta import AapError, ServerMeta, parse_meta
from webclient.aap.turn import TurnEvent, messages_as_events

TIMEOUT = httpx.Timeout(30.0, read=300.0)
"""A turn's stream may be quiet while the model thinks: reads wait five minutes, everything else 30 s."""

ERROR_BODY_CHARS = 500


class AapHttpError(AapError):
    """The server answered with an error status; ``body`` is what it said (shortened)."""

    def __init__(self, method: str, path: str, status: int, body: str) -> None:
        self.status = status
        self.body = body
        said = f": {body}" if body else ""
        super().__init__(f"{method} {path} failed with HTTP {status}{said}")


class AapClient:
    """One AAP server, at ``base_url`` (all paths are relative to it)."""

    def __init__(self, base_url: str, api_key: str | None = None, transport: httpx.AsyncBaseTransport | None = None):
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.AsyncClient(
            base_url=base_url.rstrip("/"), headers=headers, timeout=TIMEOUT, transport=transport
        )

    async def close(self) -> None:
        await self._http.aclose()

    async def meta(self) -> ServerMeta:
        return parse_meta(await self._json("GET", "/meta"))

    async def create_session(
        self,
        agent: dict[str, Any],
        tools: list[dict[str, Any]] | None = None,
        messages: list[dict[str, Any]] | None = None,
    ) -> str:
        """``POST /sessions``: the new session's id. ``agent`` is ``{name, tools?, options?}``."""
        body: dict[str, Any] = {"agent": agent}
        if tools is not None:
            body["tools"] = tools
        if messages:
            body["messages"] = messages
        answer = await self._json("POST", "/sessions", body)
        session_id = answer.get("sessionId") if isinstance(answer, dict) else None
        if not isinstance(session_id, str):
            raise AapError("The AAP server's answer to POST /sessions has no sessionId.")
        return session_id

    async def session(self, session_id: str) -> dict[str, Any]:
        answer = await self._json("GET", f"/sessions/{_segment(session_id)}")
        return answer if isinstance(answer, dict) else {}

    async def sessions(self) -> list[dict[str, Any]]:
        """Every page of ``GET /sessions``."""
        found: list[dict[str, Any]] = []
        after: str | None = None
        for _ in range(1000):  # a server whose cursor never ends does not hang the client
            answer = await self._json("GET", "/sessions", params={"after": after} if after else None)
            page = answer.get("sessions") if isinstance(answer, dict) else None
            found.extend(s for s in page if isinstance(s, dict)) if isinstance(page, list) else None
            after = answer.get("next") if isinstance(answer, dict) else None
            if not isinstance(after, str) or not after:
                break
        return found

    async def delete_session(self, session_id: str) -> None:
        await self._json("DELETE", f"/sessions/{_segment(session_id)}")

    async def history(self, session_id: str, kind: str) -> list[dict[str, Any]]:
        """``GET /sessions/:id/history?type=kind``: the server's history messages."""
        answer = await self._json("GET", f"/sessions/{_segment(session_id)}/history", params={"type": kind})
        history = answer.get("history") if isinstance(answer, dict) else None
        messages = history.get(kind) if isinstance(history, dict) else None
        return [m for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []

    async def turn(self, session_id: str, body: dict[str, Any]) -> AsyncIterator[TurnEvent]:
        """``POST /sessions/:id/turns``: its events, in order, as they come. The stream may end without
        ``turn_stop`` (real servers do that); the caller decides what that means."""
        path = f"/sessions/{_segment(session_id)}/turns"
        if body.get("stream", "none") == "none":
            answer = await self._json("POST", path, body)
            answer = answer if isinstance(answer, dict) else {}
            messages = answer.get("messages")
            yield TurnEvent("turn_start", {})
            for event in messages_as_events(messages if isinstance(messages, list) else []):
                yield event
            yield TurnEvent("turn_stop", {"stopReason": answer.get("stopReason")})
            return
        async with aconnect_sse(self._http, "POST", path, json=body) as source:
            response = source.response
            if response.status_code >= 400 or "text/event-stream" not in response.headers.get("content-type", ""):
                await response.aread()
                raise AapHttpError("POST", path, response.status_code, _said(response))
            async for sse in source.aiter_sse():
                try:
                    data = json.loads(sse.data) if sse.data else {}
                except ValueError:
                    data = {"raw": sse.data}
                yield TurnEvent(sse.event or "message", data if isinstance(data, dict) else {"value": data})

    async def _json(self, method: str, path: str, body: Any = None, params: dict[str, str] | None = None) -> Any:
        try:
            response = await self._http.request(method, path, json=body, params=params)
        except httpx.HTTPError as error:
            raise AapError(f"The AAP server could not be reached ({type(error).__name__}: {error})") from None
        if response.status_code >= 400:
            raise AapHttpError(method, path, response.status_code, _said(response))
        if not response.content:
            return None
        try:
            return response.json()
        except ValueError:
            raise AapError(f"{method} {path}: the AAP server's answer is not JSON") from None


def _segment(session_id: str) -> str:
    """A session id as one path segment (ids come from the server: never let one walk to another path)."""
    return quote(session_id, safe="")


def _said(response: httpx.Response) -> str:
    """What an error answer said: its ``error`` field when JSON, else its text, shortened."""
    try:
        body = response.json()
    except ValueError:
        body = None
    text = body["error"] if isinstance(body, dict) and isinstance(body.get("error"), str) else response.text
    return " ".join(text.split())[:ERROR_BODY_CHARS]
