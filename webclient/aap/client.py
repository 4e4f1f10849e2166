"""AAP v3 over HTTP: the requests a client makes of a remote agent server, and a turn's events as they stream.

Plain HTTP with JSON bodies; a turn is ``POST /sessions/:id/turns`` answered with Server-Sent Events (``delta`` and
``message`` modes, read with httpx-sse) or one JSON object (``none``, turned into the same events here, so the rest
of the client sees one shape). The API key goes in ``Authorization: Bearer`` and nowhere else: it is never logged,
and errors quote the server's answer, never the request.

The server is as untrusted as an agent (`webclient.session.agent_spec.RemoteLimits`): every answer is read within a
bound (an event or a plain answer, a turn's stream), a read that waits too long fails, nothing compressed is
accepted (a small answer could unpack to gigabytes), and a bound reached drops the connection.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from typing import Any
from urllib.parse import quote

import httpx

from webclient.aap.meta import AapError, ServerMeta, parse_meta
from webclient.aap.sse import Bound, TooBig, bounded_events
from webclient.aap.turn import TurnEvent, messages_as_events
from webclient.session.agent_spec import RemoteLimits

CONNECT_SECONDS = 30.0
"""Connecting, sending, and waiting for a free connection; reads wait ``RemoteLimits.idle_seconds`` (a turn's
stream may be quiet while the model thinks)."""

ERROR_BODY_CHARS = 500

NOT_JSON = "client_not_json"
"""Not an AAP event: the client's note that an event's data was not JSON (``{"event", "data"}``, shortened)."""
NOT_JSON_SHOWN = 300

REQUEST_HEADERS = {"Accept-Encoding": "identity"}
"""Answers are read as they come, counted in bytes: a compressed one could unpack to far more than it counts."""


class AapHttpError(AapError):
    """The server answered with an error status; ``body`` is what it said (shortened)."""

    def __init__(self, method: str, path: str, status: int, body: str) -> None:
        self.status = status
        self.body = body
        said = f": {body}" if body else ""
        super().__init__(f"{method} {path} failed with HTTP {status}{said}")


class AapClient:
    """One AAP server, at ``base_url`` (all paths are relative to it)."""

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        limits: RemoteLimits = RemoteLimits(),
    ):
        headers = {**REQUEST_HEADERS, **({"Authorization": f"Bearer {api_key}"} if api_key else {})}
        timeout = httpx.Timeout(CONNECT_SECONDS, read=limits.idle_seconds)
        self._http = httpx.AsyncClient(
            base_url=base_url.rstrip("/"), headers=headers, timeout=timeout, transport=transport
        )
        self.limits = limits
        self._event = Bound(limits.event_bytes, "WEBCLIENT_AAP_EVENT_MB")
        self._turn = Bound(limits.turn_bytes, "WEBCLIENT_AAP_TURN_MB")

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
        """Every page of ``GET /sessions``: a page is bounded as an event is, all of them as a turn's stream."""
        found: list[dict[str, Any]] = []
        after: str | None = None
        left = self._turn.bytes
        for _ in range(1000):  # a server whose cursor never ends does not hang the client
            bound = self._event if left > self._event.bytes else Bound(left, self._turn.setting)
            params = {"after": after} if after else None
            answer, size = await self._answer("GET", "/sessions", params=params, bound=bound)
            left -= size
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
        path = f"/sessions/{_segment(session_id)}/history"
        answer = await self._json("GET", path, params={"type": kind}, bound=self._turn)
        history = answer.get("history") if isinstance(answer, dict) else None
        messages = history.get(kind) if isinstance(history, dict) else None
        return [m for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []

    async def turn(self, session_id: str, body: dict[str, Any]) -> AsyncGenerator[TurnEvent, None]:
        """``POST /sessions/:id/turns``: its events, in order, as they come. The stream may end without
        ``turn_stop`` (real servers do that); the caller decides what that means."""
        path = f"/sessions/{_segment(session_id)}/turns"
        if body.get("stream", "none") == "none":
            answer = await self._json("POST", path, body, bound=self._turn)
            answer = answer if isinstance(answer, dict) else {}
            messages = answer.get("messages")
            yield TurnEvent("turn_start", {})
            for event in messages_as_events(messages if isinstance(messages, list) else []):
                yield event
            yield TurnEvent("turn_stop", {"stopReason": answer.get("stopReason")})
            return
        headers = {"Accept": "text/event-stream", "Cache-Control": "no-store"}
        try:
            async with self._http.stream("POST", path, json=body, headers=headers) as response:
                if response.status_code >= 400 or "text/event-stream" not in response.headers.get("content-type", ""):
                    said = _said(await self._body(response, "POST", path, self._event))
                    raise AapHttpError("POST", path, response.status_code, said)
                _plain(response, "POST", path)
                async for sse in bounded_events(response.aiter_raw(), self._event, self._turn):
                    try:
                        data = json.loads(sse.data) if sse.data else {}
                    except ValueError:
                        yield TurnEvent(
                            NOT_JSON, {"event": sse.name[:NOT_JSON_SHOWN], "data": sse.data[:NOT_JSON_SHOWN]}
                        )
                        continue
                    if isinstance(data, dict):
                        yield TurnEvent(sse.name, data, sse.data or None)
                    else:
                        yield TurnEvent(sse.name, {"value": data})
        except httpx.ReadTimeout:
            raise AapError(self._quiet()) from None
        except httpx.HTTPError as error:
            raise AapError(f"The AAP server's stream broke off ({type(error).__name__}: {error})") from None

    def _quiet(self) -> str:
        return (
            f"The AAP server sent nothing for {self.limits.idle_seconds:g} s (WEBCLIENT_AAP_IDLE_SECONDS): the turn "
            "was stopped and its connection dropped."
        )

    async def _json(
        self, method: str, path: str, body: Any = None, params: dict[str, str] | None = None, bound: Bound | None = None
    ) -> Any:
        """A plain request's JSON answer, read within ``bound`` (by default an event's)."""
        return (await self._answer(method, path, body, params, bound))[0]

    async def _answer(
        self, method: str, path: str, body: Any = None, params: dict[str, str] | None = None, bound: Bound | None = None
    ) -> tuple[Any, int]:
        """A plain request's JSON answer and its size in bytes."""
        try:
            async with self._http.stream(method, path, json=body, params=params) as response:
                content = await self._body(response, method, path, bound or self._event)
        except httpx.ReadTimeout:
            raise AapError(f"{method} {path}: {self._quiet()}") from None
        except httpx.HTTPError as error:
            where = f"{self._http.base_url}{path.lstrip('/')}"  # the URL tried, for whoever set the entry up
            raise AapError(
                f"The AAP server at {where} could not be reached ({type(error).__name__}: {error})"
            ) from None
        if response.status_code >= 400:
            raise AapHttpError(method, path, response.status_code, _said(content))
        if not content:
            return None, 0
        try:
            return json.loads(content), len(content)
        except ValueError:
            raise AapError(f"{method} {path}: the AAP server's answer is not JSON") from None

    @staticmethod
    async def _body(response: httpx.Response, method: str, path: str, bound: Bound) -> bytes:
        """The answer's bytes, read no further than ``bound``."""
        _plain(response, method, path)
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > bound.bytes:
            raise TooBig(f"{method} {path}: the AAP server's answer is over {bound}")
        content = bytearray()
        async for chunk in response.aiter_raw():
            content += chunk
            if len(content) > bound.bytes:
                raise TooBig(f"{method} {path}: the AAP server's answer is over {bound}")
        return bytes(content)


def _plain(response: httpx.Response, method: str, path: str) -> None:
    """Refuse a compressed answer (none was asked for): counted as it comes, it could unpack to far more."""
    encoding = response.headers.get("content-encoding", "identity").strip().lower()
    if encoding not in ("", "identity"):
        raise AapError(f"{method} {path}: the AAP server sent a compressed answer ({encoding[:40]}) not asked for")


def _segment(session_id: str) -> str:
    """A session id as one path segment (ids come from the server: never let one walk to another path)."""
    return quote(session_id, safe="")


def _said(content: bytes) -> str:
    """What an error answer said: its ``error`` field when JSON, else its text, shortened."""
    text = content.decode("utf-8", "replace")
    try:
        body = json.loads(text)
    except ValueError:
        body = None
    text = body["error"] if isinstance(body, dict) and isinstance(body.get("error"), str) else text
    return " ".join(text.split())[:ERROR_BODY_CHARS]
