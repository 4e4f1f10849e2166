"""``python -m demo_aap [--host 127.0.0.1] [--port 8765]``: the demo AAP server (``DEMO_AAP_DELAY`` seconds between
streamed pieces, ``DEMO_AAP_KEY`` to want a key). ``--port 0`` takes a free port; the first line on stdout is
always ``DEMO_AAP_URL=http://HOST:PORT``, once it listens. ``--exit-on-eof``: stop when stdin closes, as the web
client stops the demo it starts (`webclient.web.demo_remote`), at once rather than after a SIGTERM."""

from __future__ import annotations

import argparse
import socket
import sys
import threading

import uvicorn

from .server import app_from_env


def main() -> None:
    parser = argparse.ArgumentParser(prog="demo_aap", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--exit-on-eof", action="store_true", help="stop when stdin closes")
    args = parser.parse_args()
    listener = socket.socket(socket.AF_INET6 if ":" in args.host else socket.AF_INET)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((args.host, args.port))
    listener.listen(128)
    host, port = listener.getsockname()[:2]
    server = uvicorn.Server(uvicorn.Config(app_from_env(), log_level="warning"))
    print(f"DEMO_AAP_URL=http://{host}:{port}", flush=True)  # it listens: connections wait for the loop
    if args.exit_on_eof:

        def stop_at_eof() -> None:
            sys.stdin.buffer.read()
            server.should_exit = True

        threading.Thread(target=stop_at_eof, daemon=True).start()
    server.run(sockets=[listener])


if __name__ == "__main__":
    main()
