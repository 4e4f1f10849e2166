"""The yardstick: a bare relay between one web socket and one agent process, nothing else.

``python bench/relay.py --port P --agent "COMMAND ARGS"``: Starlette on uvicorn, as the real server (same
web socket stack and defaults, permessage-deflate included). Each connection to ``/ws`` spawns the agent;
every text message from the socket is written to the agent's stdin as one line, and every line of the
agent's stdout is sent on the socket as one text message (the bench client speaks ACP itself). The agent
is stopped when the socket closes.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shlex
import signal

import uvicorn
from starlette.applications import Starlette
from starlette.routing import WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

AGENT = os.environ.get("RELAY_AGENT", "")


async def relay(websocket: WebSocket) -> None:
    await websocket.accept()
    process = await asyncio.create_subprocess_exec(
        *shlex.split(AGENT),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        limit=1 << 20,
        start_new_session=True,
    )
    assert process.stdin is not None and process.stdout is not None
    stdin, stdout = process.stdin, process.stdout

    async def forward_stdout() -> None:
        while line := await stdout.readline():
            await websocket.send_text(line.rstrip(b"\n").decode())

    forwarder = asyncio.create_task(forward_stdout())
    try:
        while True:
            text = await websocket.receive_text()
            stdin.write(text.encode() + b"\n")
            await stdin.drain()
    except WebSocketDisconnect:
        pass
    finally:
        forwarder.cancel()
        stdin.close()
        try:
            await asyncio.wait_for(process.wait(), 2)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            await process.wait()
        await asyncio.gather(forwarder, return_exceptions=True)


app = Starlette(routes=[WebSocketRoute("/ws", relay)])


def main() -> None:
    global AGENT
    parser = argparse.ArgumentParser(description="A bare web socket ↔ agent stdio relay (the bench's yardstick).")
    parser.add_argument("--agent", required=True, help="agent command line")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    AGENT = args.agent
    print(f"relay on ws://{args.host}:{args.port}/ws", flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
