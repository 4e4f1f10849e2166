"""The demo agent's JSON-RPC surface: initialize, session/new, session/set_mode, session/set_config_option,
session/prompt, session/cancel, and ``_session/steering``.

``initialize`` also records the client's capabilities, which decide whether scenarios read, write and run
commands through the client (``fs/*``, ``terminal/*``) or fall back to the disk and simulated runs, and whether
the boolean ``verbose`` config option is offered. ``session/new`` answers with the modes and config options
(:mod:`.session_config`) and then sends the slash commands; every turn ends with a ``usage_update``, and the
first one also with a ``session_info_update`` carrying a title made from the prompt.

Plain dicts over a small JSON-RPC connection of its own (:mod:`.jsonrpc`: framing, request ids, one task per incoming
message), not the SDK's typed ``acp.Agent``: the typed layer would validate our outgoing updates and reject the
deliberately non-v1 ones the demo exists to show, and importing it costs a third of a second at every start.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .capabilities import ClientCapabilities
from .jsonrpc import Connection, RequestError, stdio_streams
from .prompt_content import Prompt
from .scenarios import SCENARIOS, choose, play
from .session_config import SessionSettings, config_update, mode_update
from .session_state import SessionState
from .steering import ADVERTISED, take_steering
from .subagents import cancel_child
from .turn import Turn, TurnCancelled
from .usage import estimate_tokens

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
        if method == "session/set_mode":
            return self._set_mode(params)
        if method == "session/set_config_option":
            return self._set_config_option(params)
        if method == "session/prompt":
            return await self._prompt(params)
        if method == "_session/steering":
            return take_steering(self._session(params), params)
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
                "promptCapabilities": {"image": True, "audio": True, "embeddedContext": True},
            },
            "authMethods": [],
            "_meta": ADVERTISED,
        }

    def _new_session(self, params: dict[str, Any]) -> dict[str, Any]:
        cwd = params.get("cwd")
        if not isinstance(cwd, str) or not Path(cwd).is_absolute():
            raise RequestError.invalid_params({"cwd": "must be an absolute path"})
        if not Path(cwd).is_dir():
            raise RequestError.invalid_params({"cwd": f"not a directory: {cwd}"})
        session_id = f"demo-{uuid.uuid4().hex[:12]}"
        settings = SessionSettings(boolean_options=self.client_caps.boolean_config_options)
        session = self.sessions[session_id] = SessionState(session_id, Path(cwd), settings)
        # The response is queued for writing before this task first runs, so the client already knows the
        # session id when the command list arrives.
        commands = [s.command() for s in SCENARIOS.values()]
        self._spawn(
            self._notify(session, [{"sessionUpdate": "available_commands_update", "availableCommands": commands}])
        )
        return {"sessionId": session_id, "modes": settings.modes_state(), "configOptions": settings.config_options()}

    def _session(self, params: dict[str, Any]) -> SessionState:
        session = self.sessions.get(str(params.get("sessionId")))
        if session is None:
            raise RequestError.invalid_params({"sessionId": "unknown session"})
        return session

    def _set_mode(self, params: dict[str, Any]) -> dict[str, Any]:
        """``session/set_mode``: ``{}``, then ``current_mode_update`` and the config options (whose ``mode``
        option mirrors the modes) as ``config_option_update``."""
        session = self._session(params)
        session.settings.set_mode(params.get("modeId"))
        log.info("session %s: mode %s", session.session_id, session.settings.mode)
        self._spawn(self._notify(session, [mode_update(session.settings), config_update(session.settings)]))
        return {}

    def _set_config_option(self, params: dict[str, Any]) -> dict[str, Any]:
        """``session/set_config_option``: the complete config in the answer; a mode change also as
        ``current_mode_update``, for clients that show the modes."""
        session = self._session(params)
        mode = session.settings.mode
        session.settings.set_option(params.get("configId"), params.get("value"), params.get("type"))
        log.info("session %s: %s = %r", session.session_id, params.get("configId"), params.get("value"))
        if session.settings.mode != mode:
            self._spawn(self._notify(session, [mode_update(session.settings)]))
        return {"configOptions": session.settings.config_options()}

    async def _notify(self, session: SessionState, updates: list[dict[str, Any]]) -> None:
        """Send ``updates`` outside any turn (after the response that caused them)."""
        try:
            for update in updates:
                await self.conn.send_notification("session/update", {"sessionId": session.session_id, "update": update})
        except ConnectionError:
            log.info("client went away before %s was sent", updates[0]["sessionUpdate"])

    async def _prompt(self, params: dict[str, Any]) -> dict[str, Any]:
        session = self._session(params)
        if session.turn is not None:
            raise RequestError.invalid_request({"details": "a prompt is already running in this session"})
        prompt = Prompt.from_wire(params.get("prompt"))
        scenario = choose(prompt)
        log.info("session %s: running %s", session.session_id, scenario.name)
        turn = Turn(self.conn, session, self.speed, self.client_caps, prompt)
        session.turn = turn
        session.steering.clear()
        cancelled = False
        try:
            await play(turn, scenario)
        except TurnCancelled:  # a session/cancel, or a permission request answered "cancelled"
            cancelled = True
            await turn.close_open_tools()
        finally:
            session.turn = None
        await self._after_turn(session, turn, params.get("prompt"))
        # A cancel that landed after the last check still has to be reported as such.
        return {"stopReason": "cancelled" if cancelled or turn.cancelled else "end_turn"}

    async def _after_turn(self, session: SessionState, turn: Turn, blocks: Any) -> None:
        """The title after the first prompt, and the usage meter after every one."""
        session.prompts += 1
        updates = []
        if session.prompts == 1:
            now = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
            updates.append({"sessionUpdate": "session_info_update", "title": turn.prompt.title(), "updatedAt": now})
        model = session.settings.model_info
        updates.append(session.usage.record_turn(estimate_tokens(blocks), turn.tokens, model))
        await self._notify(session, updates)

    def _cancel(self, params: dict[str, Any]) -> None:
        if cancel_child(params.get("sessionId")):  # one of a turn's subagents: the turn goes on
            return
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
    reader, writer = await stdio_streams(limit=50 * 1024 * 1024)
    agent = DemoAgent(speed)
    conn = Connection(agent.handle, writer, reader)
    agent.attach(conn)
    try:
        await conn.main_loop()
    finally:
        await conn.close()
