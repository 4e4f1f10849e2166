"""``webclient`` / ``python -m webclient``: start the server."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import socket
import sys
from collections.abc import Callable, Sequence
from types import FrameType
from typing import Any

import uvicorn
from starlette.applications import Starlette
from uvicorn.config import LOGGING_CONFIG, STARTUP_FAILURE
from uvicorn.supervisors import ChangeReload

from webclient.config import Settings
from webclient.web.access import unix_socket
from webclient.web.access.access import Access, signin_url
from webclient.web.access.arrival import WILDCARD_ADDRESSES
from webclient.web.access.body_limits import prompt_body_bytes
from webclient.web.access.kept_token import kept_token, token_folder
from webclient.web.access.trusted_header import TrustedHeader
from webclient.web.app import check_catalogue, check_sandbox, check_store
from webclient.web.page_sockets import PageSocketProtocol
from webclient.web.readiness import app_of, drain
from webclient.workspace.reaper import GRACEFUL_SECONDS

# uvicorn's logging, with its start-up lines ("Started server process", "Uvicorn running on …") left out.
QUIET_START_LOG: dict[str, Any] = {
    **LOGGING_CONFIG,
    "loggers": {**LOGGING_CONFIG["loggers"], "uvicorn.error": {"level": "WARNING"}},
}


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    defaults = Settings.from_env()
    parser = argparse.ArgumentParser(prog="webclient", description="A browser client for ACP coding agents.")
    parser.add_argument(
        "--agent",
        default=defaults.agent,
        help='agent command line, e.g. "npx -y @agentclientprotocol/claude-agent-acp", or the URL of an AAP server, '
        "http(s)://... (default: the built-in demo agent)",
    )
    parser.add_argument(
        "--config",
        default=defaults.config,
        help="a TOML file listing the agents offered (see agents.example.toml)",
    )
    parser.add_argument(
        "--registry",
        default=defaults.registry,
        help="an ACP registry.json: its agents found on PATH are offered",
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
    parser.add_argument(
        "--uds",
        default=defaults.proxy_proof.uds,
        metavar="PATH",
        help="listen on this unix socket instead of a port, for a proxy on this machine (WEBCLIENT_UDS; its mode "
        "WEBCLIENT_UDS_MODE, default 0660, and group WEBCLIENT_UDS_GROUP)",
    )
    parser.add_argument(
        "--token",
        default=defaults.token,
        help="the sign-in token (default: $WEBCLIENT_TOKEN, else a random one kept in the data folder across starts, "
        "printed in a URL)",
    )
    parser.add_argument(
        "--new-token",
        action="store_true",
        help="replace the kept sign-in token with a new one: every browser signed in with the old one is signed out",
    )
    parser.add_argument(
        "--no-token",
        action="store_true",
        default=defaults.no_token,
        help="turn sign-in off (refused unless the server listens on loopback only)",
    )
    parser.add_argument(
        "--data-dir",
        default=defaults.data_dir,
        help="where the SQLite store lives (default: the user's data folder; WEBCLIENT_DATABASE_URL picks PostgreSQL)",
    )
    for flag, default, what in (
        ("--keep-days", defaults.keep_days, "delete stored sessions last active more than N days ago"),
        ("--max-session-mb", defaults.max_session_mb, "stop storing a session's journal past N MB, with a notice"),
        ("--max-store-mb", defaults.max_store_mb, "past N MB in all, delete the least recently active sessions"),
    ):
        parser.add_argument(flag, type=float, default=default, metavar="N", help=f"{what} (default %(default)g: off)")
    parser.add_argument("--reload", action="store_true", default=defaults.reload, help="restart when the code changes")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> None:
    try:
        args = parse_args(argv)  # its defaults are the settings
    except ValueError as refused:
        sys.exit(f"webclient: {refused}")
    # The app reads its settings from the environment, so the reloader's fresh processes see them too.
    if args.agent:
        os.environ["WEBCLIENT_AGENT"] = args.agent
    for variable, value in (("WEBCLIENT_CONFIG", args.config), ("WEBCLIENT_REGISTRY", args.registry)):
        if value:
            os.environ[variable] = str(value)
    if args.workspace:
        os.environ["WEBCLIENT_WORKSPACE"] = str(args.workspace)
    if args.data_dir:
        os.environ["WEBCLIENT_DATA_DIR"] = str(args.data_dir)
    os.environ["WEBCLIENT_KEEP_DAYS"] = str(args.keep_days)
    os.environ["WEBCLIENT_MAX_SESSION_MB"] = str(args.max_session_mb)
    os.environ["WEBCLIENT_MAX_STORE_MB"] = str(args.max_store_mb)
    os.environ["WEBCLIENT_FILE_ACCESS"] = args.file_access
    os.environ["WEBCLIENT_TERMINALS"] = "off" if args.no_terminals else "on"
    os.environ["WEBCLIENT_HOST"] = args.host
    os.environ["WEBCLIENT_PORT"] = str(args.port)
    if args.uds:
        os.environ["WEBCLIENT_UDS"] = str(args.uds)
    if args.no_token and args.token:
        sys.exit("webclient: --no-token and a sign-in token (--token or WEBCLIENT_TOKEN) are both given: choose one")
    if args.no_token:
        os.environ["WEBCLIENT_NO_TOKEN"] = "1"
        token = None
    else:
        # Made here, once: the printed URL and every process the reloader starts must agree on it. Kept in the data
        # folder across starts (a new token would sign every browser out): see webclient.web.access.kept_token.
        if args.token and args.new_token:
            sys.exit("webclient: --new-token and a token (--token or WEBCLIENT_TOKEN) are both given: choose one")
        folder = token_folder(args.data_dir)
        try:
            token = args.token or kept_token(folder, new=args.new_token)
        except OSError as error:
            sys.exit(f"webclient: the sign-in token cannot be kept in {folder}: {error.strerror or error}")
        os.environ["WEBCLIENT_TOKEN"] = token
    try:
        settings = Settings.from_env()
        Access.from_settings(settings)
        TrustedHeader.from_settings(settings)  # the proxies a path prefix is believed from, in every mode
        doubts = check_catalogue(settings)
        check_store(settings)
        sandbox = check_sandbox(settings)
    except ValueError as refused:
        sys.exit(f"webclient: {refused}")
    if settings.auth != "token":  # people sign in another way: the token lets no one in
        token = None
    with contextlib.ExitStack() as stack:
        proof = settings.proxy_proof
        try:  # bound here, before anything is printed or started (`web.unix_socket`)
            bound = stack.enter_context(unix_socket.listening(proof)) if proof.uds is not None else None
        except ValueError as refused:
            sys.exit(f"webclient: {refused}")
        serve(args, settings, bound, lambda: announce(args, settings, token, sandbox, doubts))


def announce(
    args: argparse.Namespace, settings: Settings, token: str | None, sandbox: str, doubts: Sequence[str] = ()
) -> None:
    """The lines printed at start: where to open the client (the first line), which sandbox is in force, then what
    may not work of the agents offered (``doubts``)."""
    url = signin_url(args.host, args.port, token, settings.root_path)
    uds = settings.proxy_proof.uds
    if uds is not None:
        how = f"open the proxy's URL with ?token={token}" if token else f"people sign in by {settings.auth}"
        print(f"ACP web client on the unix socket {uds}, for the proxy in front ({how})", flush=True)
    elif args.host.strip("[]") in WILDCARD_ADDRESSES:
        print(f"ACP web client listening on all addresses, port {args.port}; on this machine open {url}", flush=True)
    elif settings.auth != "token":
        print(f"ACP web client on {url} (people sign in by {settings.auth})", flush=True)
    elif token is None:
        print(f"ACP web client on {url} (sign-in is off)", flush=True)
    else:
        print(f"ACP web client: open {url} to sign in", flush=True)
    print(f"ACP web client: {sandbox}", flush=True)  # after the URL: the first line is the one to click
    for doubt in doubts:
        print(f"ACP web client: {doubt}", flush=True)


class AnnouncingServer(uvicorn.Server):
    """A uvicorn server that says where to open the client once it accepts connections, not before it binds, and
    that drains on ``SIGTERM`` for ``drain_seconds`` before it stops (`webclient.web.readiness`); a second ``SIGTERM``,
    or ``SIGINT`` (Ctrl-C), stops it at once, as does ``SIGTERM`` with ``drain_seconds`` 0."""

    def __init__(self, config: uvicorn.Config, announce: Callable[[], None], drain_seconds: float = 0) -> None:
        super().__init__(config)
        self.announce = announce
        self.drain_seconds = drain_seconds
        self.loop: asyncio.AbstractEventLoop | None = None
        self.drain_begun = False
        self.draining: asyncio.Task[None] | None = None

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        self.loop = asyncio.get_running_loop()
        await super().startup(sockets)
        if self.started and not self.should_exit:
            self.announce()

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        app = app_of(self.config.loaded_app) if self.config.loaded else None
        first = self.started and not (self.drain_begun or self.should_exit)  # before: stopped at once
        if sig == signal.SIGTERM and first and self.drain_seconds > 0 and app is not None and self.loop is not None:
            self.drain_begun = True  # a second SIGTERM stops at once
            # A signal handler runs between two steps of the loop: the drain starts on the loop's next turn.
            self.loop.call_soon_threadsafe(self._drain, app)
            return
        super().handle_exit(sig, frame)

    def _drain(self, app: Starlette) -> None:
        def stop(drained: asyncio.Task[None]) -> None:
            self.should_exit = True  # uvicorn's own stop from here: connections closed, then the lifespan's end
            if not drained.cancelled() and drained.exception() is not None:  # said, and stopped all the same
                logging.getLogger(__name__).error("the drain failed", exc_info=drained.exception())

        self.draining = asyncio.ensure_future(drain(app, self.drain_seconds))
        self.draining.add_done_callback(stop)


def serve(
    args: argparse.Namespace, settings: Settings, bound: socket.socket | None, announce: Callable[[], None]
) -> None:
    """Run uvicorn on ``args``' address and port, or on the unix socket ``bound`` already (`web.unix_socket`).

    ``announce`` prints the sign-in URL: once the server accepts connections, so the line to click works when it
    appears; with ``--reload``, once the reloader has bound the socket.
    """
    where: dict[str, Any] = {"fd": bound.fileno()} if bound is not None else {"host": args.host, "port": args.port}
    config = uvicorn.Config(
        "webclient.web.app:create_app",
        factory=True,
        **where,
        reload=args.reload,
        reload_dirs=["webclient", "templates", "static"] if args.reload else None,
        reload_includes=["*.py", "*.html", "*.css", "*.js"] if args.reload else None,
        # No log_level: it would set uvicorn.error back to INFO, whose start-up lines would come before the URL (the
        # first line printed is the one to click); its warnings and errors still show, and so does the access log.
        log_config=QUIET_START_LOG,
        timeout_graceful_shutdown=GRACEFUL_SECONDS,  # a WebSocket stuck on an agent never holds up a stop
        # Behind a trusted proxy the peer's own address decides whose headers are believed (web.trusted_header,
        # web.root_path): uvicorn must not replace it with X-Forwarded-For, which any program on loopback could write.
        proxy_headers=not (settings.trusted_proxies or bound is not None),
        # A web socket message of the page is at most a prompt (`web.access.body_limits`), not uvicorn's 16 MiB.
        ws_max_size=prompt_body_bytes(settings),
        ws=PageSocketProtocol,  # a stop while a page closes its socket still ends the lifespan
    )
    if config.should_reload:  # the reloader's processes start and stop with the code: say it once, when bound
        sock = config.bind_socket()
        announce()
        ChangeReload(config, target=uvicorn.Server(config).run, sockets=[sock]).run()
        return
    config.load_app()
    server = AnnouncingServer(config, announce, settings.drain_seconds)
    with contextlib.suppress(KeyboardInterrupt):
        server.run()
    if not server.started:
        sys.exit(STARTUP_FAILURE)
