"""The demo agent's JSON-RPC surface: initialize, session/new, session/prompt, session/cancel.

``initialize`` also records the client's capabilities, which decide whether scenarios read, write and run
commands through the client (``fs/*``, ``terminal/*``) or fall back to the disk and simulated runs.

Built on the SDK's low-level :class:`acp.connection.Connection` (framing, request ids, one task per
incoming message) with a plain-dict handler, instead of ``acp.Agent``: the typed layer would validate our
outgoing updates and reject the deliberately non-v1 ones the demo exists to show.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from pathlib import Path
from typing import Any

from acp.connection import Connection
from acp.exceptions import RequestError

from .capabilities import ClientCapabilities
from .scenarios import SCENARIOS, pick_scenario
from .turn import SessionState, Turn, TurnCancelled

log = logging.getLogger(__name__)

PROTOCOL_VERSION = 1
AGENT_VERSION = "0.1.0"


class DemoAgent:
    def __init__(self, speed: float) -> None:
        self.speed = speed
        self.sessions: dict[str, SessionState] = {}
        # What the client offers (fs/*, terminal/*, _meta terminals): one client per agent process.
        self.client_caps = ClientCapabilities()
        self._conn: Connection | None = None
        # Strong references to fire-and-forget tasks (asyncio only keeps weak ones).
        self._background: set[asyncio.Task[None]] = set()

    def attach(self, conn: Connection) -> None:
        self._conn = conn

    @property
    def conn(self) -> Connection:
        if self._conn is None:
            raise RuntimeError("DemoAgent.attach() was not called")
        return self._conn

    async def handle(self, method: str, params: Any, is_notification: bool) -> Any:
        """The Connection's method handler: returns the result dict, or raises RequestError."""
        params = params if isinstance(params, dict) else {}
        if is_notification:
            if method == "session/cancel":
                self._cancel(params)
            # Other notifications (including unknown `_` extensions and $/cancel_request) are ignored.
            return None
        if method == "initialize":
            return self._initialize(params)
        if method == "session/new":
            return self._new_session(params)
        if method == "session/prompt":
            return await self._prompt(params)
        raise RequestError.method_not_found(method)

    def _initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        log.info("initialize from %s (protocolVersion %s)", params.get("clientInfo"), params.get("protocolVersion"))
        self.client_caps = ClientCapabilities.from_wire(params.get("clientCapabilities"))
        log.info("client capabilities: %s", self.client_caps)
        return {
            # We only speak v1; a client asking for v2 gets 1 back and must continue in v1 or disconnect.
            "protocolVersion": PROTOCOL_VERSION,
            "agentInfo": {"name": "demo-agent", "title": "Demo agent", "version": AGENT_VERSION},
            "agentCapabilities": {
                "loadSession": False,
                "promptCapabilities": {"image": False, "audio": False, "embeddedContext": False},
            },
            "authMethods": [],
        }

    def _new_session(self, params: dict[str, Any]) -> dict[str, Any]:
        cwd = params.get("cwd")
        if not isinstance(cwd, str) or not Path(cwd).is_absolute():
            raise RequestError.invalid_params({"cwd": "must be an absolute path"})
        if not Path(cwd).is_dir():
            raise RequestError.invalid_params({"cwd": f"not a directory: {cwd}"})
        session_id = f"demo-{uuid.uuid4().hex[:12]}"
        self.sessions[session_id] = SessionState(session_id, Path(cwd))
        # The response is queued for writing before this task first runs, so the client already knows the
        # session id when the command list arrives.
        self._spawn(self._announce_commands(session_id))
        return {"sessionId": session_id}

    async def _announce_commands(self, session_id: str) -> None:
        commands = [{"name": s.name, "description": s.description} for s in SCENARIOS.values()]
        update = {"sessionUpdate": "available_commands_update", "availableCommands": commands}
        try:
            await self.conn.send_notification("session/update", {"sessionId": session_id, "update": update})
        except ConnectionError:
            log.info("client went away before the command list was sent")

    async def _prompt(self, params: dict[str, Any]) -> dict[str, Any]:
        session = self.sessions.get(str(params.get("sessionId")))
        if session is None:
            raise RequestError.invalid_params({"sessionId": "unknown session"})
        if session.turn is not None:
            raise RequestError.invalid_request({"details": "a prompt is already running in this session"})
        blocks = params.get("prompt")
        text = " ".join(
            b.get("text", "")
            for b in (blocks if isinstance(blocks, list) else [])
            if isinstance(b, dict) and b.get("type") == "text"
        )
        scenario = pick_scenario(text)
        log.info("session %s: running %s", session.session_id, scenario.name)
        turn = Turn(self.conn, session, self.speed, self.client_caps)
        session.turn = turn
        try:
            await scenario.run(turn)
        except TurnCancelled:
            await turn.close_open_tools()
            return {"stopReason": "cancelled"}
        finally:
            session.turn = None
        # A cancel that landed after the last check still has to be reported as such.
        return {"stopReason": "cancelled" if turn.cancelled else "end_turn"}

    def _cancel(self, params: dict[str, Any]) -> None:
        session = self.sessions.get(str(params.get("sessionId")))
        if session is not None and session.turn is not None:
            log.info("session %s: cancel", session.session_id)
            session.turn.cancel()

    def _spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)


async def serve_stdio(speed: float) -> None:
    """Run the agent on this process's stdin/stdout until the client closes stdin."""
    from acp.stdio import stdio_streams

    reader, writer = await stdio_streams(limit=50 * 1024 * 1024)
    agent = DemoAgent(speed)
    conn = Connection(agent.handle, writer, reader, listening=False)
    agent.attach(conn)
    try:
        await conn.main_loop()
    finally:
        await conn.close()
