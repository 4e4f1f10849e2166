"""Agent authentication's web socket: the terminal in which a person signs in to an agent (the agent's sign-in
terminal), its pty's output out (binary frames), keystrokes and resizes in.

Its own route (``sign_in_terminal``), beside the page's socket, because a terminal's bytes are no HTML fragment for
htmx. The access guard checks it as every web socket before routing (host, sign-in, origin:
`webclient.web.access.guard`); on top, the URL must carry the key of the session's running sign-in terminal, which only
that session's page shows. Messages from the page are JSON: ``{"type": "input", "data": "..."}`` and
``{"type": "resize", "columns": C, "rows": R}``. When the command ends, ``{"type": "exit", "how": "..."}`` goes
out and the socket closes.

Only a driver holds it: the handshake asks for the person's role, every message asks again (a keystroke of someone
who may no longer drive closes the socket and never reaches the pty), and a revoke or a turn to watch closes it at
once (`webclient.web.live.presence`, where it registers as every socket of a session does).

Bounded both ways: a message from the page over `MESSAGE_LIMIT` is ignored; output the page does not take fast
enough (over `OUTPUT_LIMIT` waiting) closes the socket with 1013, and the page reconnects to the kept output.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from starlette import status
from starlette.websockets import WebSocket, WebSocketDisconnect

from webclient.people.roles import may_drive
from webclient.session.core import Session
from webclient.session.terminal_auth import AuthTerminal
from webclient.web.context import link_token, manager, person, role_in
from webclient.web.live.presence import Viewer, presence
from webclient.web.live.session_socket import refuse_handshake
from webclient.workspace.interactive_pty import OUTPUT_LIMIT, InteractivePty

log = logging.getLogger(__name__)

MESSAGE_LIMIT = 16 * 1024
TRY_AGAIN = 1013
"""Close code when the page fell behind: it reconnects and gets the kept output."""


class _Outbox:
    """Output waiting for the socket; ``None`` ends it (the command ended, or the page fell behind)."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.waiting = 0
        self.overflowed = False

    def put(self, data: bytes) -> None:
        if self.overflowed:
            return
        self.waiting += len(data)
        if self.waiting > OUTPUT_LIMIT:
            self.overflowed = True
            self.queue.put_nowait(None)
            return
        self.queue.put_nowait(data)

    def end(self, _: object = None) -> None:
        self.queue.put_nowait(None)


async def agent_auth_socket(websocket: WebSocket) -> None:
    session = manager(websocket).get(websocket.path_params["session_id"])
    role = role_in(websocket, session) if session is not None else None
    if session is None or not may_drive(role):  # the agent's sign-in is its drivers' to do; refused at the handshake
        await refuse_handshake(websocket, 404 if role is None else 403, "No such session" if role is None else "")
        return
    terminal: AuthTerminal | None = session.lifecycle.auth_terminal
    await websocket.accept()  # past the access guard: a page of ours, which hears why in the close code
    if terminal is None or websocket.query_params.get("key") != terminal.key:
        await websocket.close(code=status.WS_1008_POLICY_VIOLATION, reason="No such sign-in terminal.")
        return
    pty = terminal.pty
    closes = Viewer(
        person(websocket), link_token(websocket), role, lambda code, reason: websocket.close(code, reason), page=False
    )
    leave = presence(websocket).join(session, closes)
    outbox = _Outbox()
    outbox.put(pty.output)  # what it showed so far, then what comes: no await between, so nothing is lost
    pty.listeners.add(outbox.put)
    pty.exited.add_done_callback(outbox.end)
    sender = asyncio.create_task(_send(websocket, outbox, terminal), name=f"sign-in-terminal-{pty.pid}")
    try:
        while True:
            text = await websocket.receive_text()
            if not _still_drives(websocket, session):
                await websocket.close(code=status.WS_1008_POLICY_VIOLATION)
                break
            if len(text) <= MESSAGE_LIMIT:
                _handle(pty, text)
    except (WebSocketDisconnect, KeyError, RuntimeError):  # KeyError: a binary frame; RuntimeError: closed by us
        pass
    finally:
        leave()
        pty.listeners.discard(outbox.put)
        pty.exited.remove_done_callback(outbox.end)
        sender.cancel()
        # Not gather: a gather cancelled meanwhile raises the sender's CancelledError, not the one that cancelled this
        # handler, and the server's cancel scope (anyio's) would not know it for its own.
        await asyncio.wait([sender])


def _still_drives(websocket: WebSocket, session: Session) -> bool:
    """Whether the person may still drive ``session`` (a share revoked or turned to watch counts at once)."""
    return may_drive(role_in(websocket, session))


async def _send(websocket: WebSocket, outbox: _Outbox, terminal: AuthTerminal) -> None:
    while (data := await outbox.queue.get()) is not None:
        outbox.waiting -= len(data)
        if data:
            await websocket.send_bytes(data)
    if outbox.overflowed:
        await websocket.close(code=TRY_AGAIN)
        return
    await websocket.send_text(json.dumps({"type": "exit", "how": terminal.ended_how or "closed"}))
    await websocket.close()


def _handle(pty: InteractivePty, text: str) -> None:
    try:
        message: Any = json.loads(text)
    except json.JSONDecodeError:
        return
    if not isinstance(message, dict):
        return
    if message.get("type") == "input" and isinstance(message.get("data"), str):
        pty.write(message["data"].encode("utf-8", "replace"))
    elif message.get("type") == "resize":
        columns, rows = message.get("columns"), message.get("rows")
        if isinstance(columns, int) and isinstance(rows, int):
            pty.resize(columns, rows)
