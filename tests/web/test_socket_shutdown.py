"""A server stopped while a page's socket is closing stops in order: its lifespan's end still runs (agents stopped,
the journal's last batch written). uvicorn 0.54's socket sent its close frame at shutdown whatever the socket's state,
and raised out of the server's shutdown for one the browser had already closed."""

from __future__ import annotations

import asyncio
import os
import socket
import struct
from typing import Any

import pytest
import uvicorn

from webclient.web.page_sockets import PageSocketProtocol

HANDSHAKE = (
    b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
)


def close_frame(code: int = 1001) -> bytes:
    """A browser's close frame: masked, as a client's must be."""
    mask = os.urandom(4)
    payload = struct.pack("!H", code)
    return bytes([0x88, 0x80 | len(payload)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


@pytest.mark.asyncio
async def test_a_server_stopped_while_a_page_closes_its_socket_still_ends_its_lifespan() -> None:
    ended: list[str] = []

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            ended.append("lifespan")
            await send({"type": "lifespan.shutdown.complete"})
            return
        await receive()  # connect
        await send({"type": "websocket.accept"})
        while True:  # a page that does not read: what is sent waits in the server's buffer
            await send({"type": "websocket.send", "bytes": b"x" * 65536})

    listening = socket.create_server(("127.0.0.1", 0))
    server = uvicorn.Server(
        uvicorn.Config(app, ws=PageSocketProtocol, lifespan="on", log_level="critical", timeout_graceful_shutdown=1)
    )
    serving = asyncio.create_task(server.serve(sockets=[listening]))
    while not server.started:
        await asyncio.sleep(0.01)

    loop = asyncio.get_running_loop()
    page = socket.socket()
    page.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    page.setblocking(False)
    await loop.sock_connect(page, listening.getsockname())
    await loop.sock_sendall(page, HANDSHAKE)
    answer = b""
    while b"\r\n\r\n" not in answer:
        answer += await loop.sock_recv(page, 1)
    assert answer.startswith(b"HTTP/1.1 101")

    (connection,) = server.server_state.connections
    while connection.transport.get_write_buffer_size() == 0:  # the server has more to send than the page takes
        await asyncio.sleep(0.01)
    await loop.sock_sendall(page, close_frame())
    while not connection.transport.is_closing():  # closed by the browser; it waits to write what it holds
        await asyncio.sleep(0.01)
    assert connection in server.server_state.connections

    server.should_exit = True
    await asyncio.sleep(0.3)
    page.close()
    await asyncio.wait_for(serving, 10)
    assert ended == ["lifespan"]
