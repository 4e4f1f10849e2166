"""A web socket closed from outside: when its sign-in ends (sign-out, an admin's Revoke), the socket it opened closes
with 1008 (policy violation), which the page takes for "signed out" (``static/js/socket-status.js``); and a handshake
refused with the status a page of the same session gets (:func:`refuse_handshake`)."""

from __future__ import annotations

import asyncio
import contextlib

from starlette.responses import PlainTextResponse
from starlette.types import Message, Receive, Send
from starlette.websockets import WebSocket

WS_POLICY_VIOLATION = 1008


def until_ended(receive: Receive, send: Send, ended: asyncio.Event) -> Receive:
    """``receive`` for the app, but once ``ended`` is set the socket is closed and the app hears it disconnect."""

    async def receive_until_ended() -> Message:
        waiting = asyncio.ensure_future(receive())
        signed_out = asyncio.ensure_future(ended.wait())
        try:
            await asyncio.wait({waiting, signed_out}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            signed_out.cancel()
        if waiting.done():
            return waiting.result()
        waiting.cancel()
        with contextlib.suppress(Exception):  # the connection went meanwhile: disconnected either way
            await send({"type": "websocket.close", "code": WS_POLICY_VIOLATION, "reason": "Signed out."})
        return {"type": "websocket.disconnect", "code": WS_POLICY_VIOLATION}

    return receive_until_ended


async def refuse_handshake(websocket: WebSocket, status_code: int = 404, text: str = "No such session") -> None:
    """Refuse a socket before it opens with the HTTP answer a page of the same URL gets (404: another person's
    session does not exist for them), where the server can send one (ASGI's ``websocket.http.response``, which
    uvicorn has); elsewhere closed unopened, which a server answers 403. A browser's page sees neither: it is told
    nothing more than that the socket failed."""
    if "websocket.http.response" in websocket.scope.get("extensions", {}):
        await websocket.send_denial_response(PlainTextResponse(text, status_code=status_code))
    else:
        await websocket.close(code=WS_POLICY_VIOLATION)
