"""``webclient`` / ``python -m webclient``: start the server."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence

import uvicorn

from webclient.config import Settings
from webclient.reaper import GRACEFUL_SECONDS


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    defaults = Settings.from_env()
    parser = argparse.ArgumentParser(prog="webclient", description="A browser client for ACP coding agents.")
    parser.add_argument(
        "--agent",
        default=defaults.agent,
        help='agent command line, e.g. "npx @zed-industries/claude-code-acp" (default: the built-in demo agent)',
    )
    parser.add_argument(
        "--workspace",
        default=defaults.workspace,
        help="the agent's working directory (default for the demo: a fresh sample workspace)",
    )
    parser.add_argument(
        "--file-access",
        choices=["read-write", "read-only", "none"],
        default=defaults.file_access,
        help="what the agent may do with files through the client (default %(default)s)",
    )
    parser.add_argument(
        "--no-terminals",
        action="store_true",
        default=not defaults.terminals,
        help="refuse the agent's terminal/* requests",
    )
    parser.add_argument("--host", default=defaults.host, help="address to listen on (default %(default)s)")
    parser.add_argument("--port", type=int, default=defaults.port, help="port (default %(default)s, or $PORT)")
    parser.add_argument("--reload", action="store_true", default=defaults.reload, help="restart when the code changes")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    # The app reads its settings from the environment, so the reloader's fresh processes see them too.
    if args.agent:
        os.environ["WEBCLIENT_AGENT"] = args.agent
    if args.workspace:
        os.environ["WEBCLIENT_WORKSPACE"] = str(args.workspace)
    os.environ["WEBCLIENT_FILE_ACCESS"] = args.file_access
    os.environ["WEBCLIENT_TERMINALS"] = "off" if args.no_terminals else "on"
    print(f"ACP web client on http://{args.host}:{args.port}/", flush=True)
    uvicorn.run(
        "webclient.app:create_app",
        factory=True,
        host=args.host,
        port=args.port,
        reload=args.reload,
        reload_dirs=["webclient", "templates", "static"] if args.reload else None,
        reload_includes=["*.py", "*.html", "*.css", "*.js"] if args.reload else None,
        log_level="info",
        timeout_graceful_shutdown=GRACEFUL_SECONDS,  # a WebSocket stuck on an agent never holds up a stop
    )
