"""A web socket closed from outside: when its sign-in ends (sign-out, an admin's Revoke), the socket it opened closes
with 1008 (policy violation), which the page takes for "signed out" (``static/js/socket-status.js``)."""

from __future__ import annotations

import asyncio
import contextlib

from starlette.types import Message, Receive, Send

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
