"""One ACP agent process and the JSON-RPC connection to it, from the client's side.

Knows ACP methods, nothing of HTML or web sockets: what the agent sends is handed to a
:class:`ClientHandler` (the session's adapter, `webclient.acp.agent.AcpAgent`), which decides what it means.
Spec: https://agentclientprotocol.com/protocol/overview
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Mapping
from pathlib import Path
from typing import Any, Protocol

from webclient.acp import wire
from webclient.acp.jsonrpc import MethodNotFound
from webclient.acp.peer import Peer
from webclient.acp.process import AgentProcess, StderrLog
from webclient.acp.wire_values import mapping
from webclient.session.agent import Diagnosis
from webclient.workspace.sandbox import UNCONFINED, Sandbox

log = logging.getLogger(__name__)

DEFAULT_MAX_LINE = 64 * 1024 * 1024

# What every session of this client can do; files and terminals depend on the agent's settings.
BASE_CAPABILITIES: dict[str, Any] = {
    # Terminal sign-in: the agent's own command in the page's sign-in terminal (webclient.session.terminal_auth).
    "auth": {"terminal": True},
    "session": {"configOptions": {"boolean": {}}, "compaction": {}, "notices": {}},
    # Display-only terminals reported in tool calls' _meta (claude-agent-acp, codex-acp).
    "_meta": {"terminal_output": True, "terminal_output_delta": True},
}


class ClientHandler(Protocol):
    """What the connection needs from its owner. Methods run in message arrival order; the peer calls them itself,
    with nothing in between (a streamed chunk goes from the read loop straight to ``on_notification``)."""

    def on_request_permission(self, params: dict[str, Any]) -> Awaitable[wire.RequestPermissionResponse]:
        """A ``session/request_permission`` request: record it now, return the awaitable answer."""

    def on_client_request(self, method: str, params: dict[str, Any]) -> Awaitable[Any] | None:
        """An ``fs/*`` or ``terminal/*`` request, or None when the session does not serve ``method``."""

    def on_notification(self, method: str, params: Any) -> None:
        """Any notification: ``session/update`` (nearly every line), ``$/cancel_request`` (to hand to the peer's
        `Peer.cancel_incoming`), ``elicitation/complete``...; unknown ones are ignored, as the spec asks."""

    def on_traffic(self, direction: str, line: str, message: Any) -> None:
        """Every JSON-RPC line, ``in`` from the agent or ``out`` to it; ``garbage`` for what was not JSON.

        ``message`` is the line as the peer decoded it (None when it is not JSON, and for ``garbage``), so
        that it need not be decoded again."""

    def on_oversized_message(self, limit: int) -> None:
        """The agent sent a line longer than ``limit`` bytes; it was dropped unread."""


async def _method_not_found(method: str) -> Any:
    raise MethodNotFound(f"Method not found: {method}")


class AgentConnection:
    """Spawns the agent, runs the JSON-RPC peer, and offers the ACP calls the client makes."""

    def __init__(
        self, process: AgentProcess, handler: ClientHandler, *, max_line_bytes: int = DEFAULT_MAX_LINE
    ) -> None:
        self.process = process
        self.handler = handler
        self.peer = Peer(
            process.stdout,
            process.stdin,
            on_request=self._on_request,
            on_notification=handler.on_notification,
            on_traffic=handler.on_traffic,
            on_garbage=self._on_garbage,
            on_oversized=handler.on_oversized_message,
            max_line_bytes=max_line_bytes,
        )
        self.reader = asyncio.create_task(self.peer.run(), name=f"acp-reader-{process.pid}")
        self.initialize_result: dict[str, Any] = {}

    @classmethod
    async def spawn(
        cls,
        argv: list[str],
        *,
        cwd: Path,
        env: Mapping[str, str] | None,
        handler: ClientHandler,
        stderr_log: StderrLog,
        max_line_bytes: int = DEFAULT_MAX_LINE,
        sandbox: Sandbox = UNCONFINED,
    ) -> AgentConnection:
        process = await AgentProcess.spawn(argv, cwd=cwd, env=env, stderr_log=stderr_log, sandbox=sandbox)
        return cls(process, handler, max_line_bytes=max_line_bytes)

    # -- incoming ----------------------------------------------------------------------------------

    def _on_request(self, method: str, params: Any) -> Awaitable[Any]:
        if method == "session/request_permission" and isinstance(params, dict):
            return self.handler.on_request_permission(params)
        if isinstance(params, dict) and (answer := self.handler.on_client_request(method, params)) is not None:
            return answer
        return _method_not_found(method)

    def _on_garbage(self, reason: str, line: str) -> None:
        log.warning("agent %s sent a bad line (%s): %.200s", self.process.pid, reason, line)
        self.handler.on_traffic("garbage", f"{reason}: {line[:2000]}", None)

    # -- outgoing ----------------------------------------------------------------------------------

    async def initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        """https://agentclientprotocol.com/protocol/initialization — ``params`` as the version asked shapes them
        (`webclient.acp.versions`)."""
        result = await self.peer.request("initialize", params)
        self.initialize_result = mapping(result)
        return self.initialize_result

    async def new_session(self, cwd: Path, mcp_servers: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        """https://agentclientprotocol.com/protocol/session-setup#creating-a-session — ``mcp_servers`` as the
        agent takes them (`webclient.acp.mcp_wire`)."""
        result = await self.peer.request("session/new", {"cwd": str(cwd), "mcpServers": mcp_servers or []})
        return mapping(result)

    async def reattach(
        self, method: str, session_id: str, cwd: Path, mcp_servers: list[dict[str, Any]] | None = None, **extra: Any
    ) -> dict[str, Any]:
        """``session/resume`` or ``session/load``
        (https://agentclientprotocol.com/protocol/session-setup#loading-sessions): the same params, either way, and
        v2's ``replayFrom`` in ``extra``."""
        params = {"sessionId": session_id, "cwd": str(cwd), "mcpServers": mcp_servers or [], **extra}
        result = await self.peer.request(method, params)
        return mapping(result)

    async def fork_session(self, session_id: str, cwd: Path) -> dict[str, Any]:
        """``session/fork`` (unstable; https://agentclientprotocol.com/rfds/session-fork)"""
        result = await self.peer.request("session/fork", {"sessionId": session_id, "cwd": str(cwd), "mcpServers": []})
        return mapping(result)

    async def session_request(self, method: str, session_id: str, **params: Any) -> None:
        """A request about one session that answers ``{}``: ``session/set_title``, ``session/close``,
        ``session/delete`` (https://agentclientprotocol.com/protocol/session-setup)."""
        await self.peer.request(method, {"sessionId": session_id, **params})

    async def steer(self, session_id: str, prompt: list[wire.ContentBlock]) -> None:
        """``_session/steering``: a prompt into the running turn (an extension; see acp-2026 notes)."""
        await self.peer.request("_session/steering", {"sessionId": session_id, "prompt": prompt})

    async def list_sessions(self, cursor: str | None) -> dict[str, Any]:
        """https://agentclientprotocol.com/protocol/session-setup#listing-sessions"""
        result = await self.peer.request("session/list", {"cursor": cursor} if cursor else {})
        return mapping(result)

    async def authenticate(self, method_id: str, method: str = "authenticate") -> None:
        """https://agentclientprotocol.com/protocol/initialization#authentication (v2: ``auth/login``)."""
        await self.peer.request(method, {"methodId": method_id})

    async def prompt(self, session_id: str, prompt: list[wire.ContentBlock]) -> dict[str, Any]:
        """https://agentclientprotocol.com/protocol/prompt-turn — pending for the whole turn."""
        result = await self.peer.request("session/prompt", {"sessionId": session_id, "prompt": prompt})
        return mapping(result)

    async def set_mode(self, session_id: str, mode_id: str) -> dict[str, Any]:
        """https://agentclientprotocol.com/protocol/session-modes#setting-the-current-mode"""
        result = await self.peer.request("session/set_mode", {"sessionId": session_id, "modeId": mode_id})
        return mapping(result)

    async def set_model(self, session_id: str, model_id: str) -> dict[str, Any]:
        """``session/set_model``: removed from the spec (config options of category ``model`` replace it) but
        still what gemini-cli and 15 other agents offer with ``models`` in their ``session/new`` answer."""
        result = await self.peer.request("session/set_model", {"sessionId": session_id, "modelId": model_id})
        return mapping(result)

    async def set_config_option(self, session_id: str, config_id: str, value: dict[str, Any]) -> dict[str, Any]:
        """https://agentclientprotocol.com/protocol/session-config-options — answers with the complete state.
        ``value``: ``{value, type?}`` as the version spoken types it (`webclient.acp.versions`)."""
        params: dict[str, Any] = {"sessionId": session_id, "configId": config_id, **value}
        result = await self.peer.request("session/set_config_option", params)
        return mapping(result)

    async def cancel(self, session_id: str) -> None:
        """https://agentclientprotocol.com/protocol/prompt-turn#cancellation"""
        await self.peer.notify("session/cancel", {"sessionId": session_id})

    async def close(self) -> int | None:
        """Close stdin, then terminate, then kill; wait for the reader to finish."""
        code = await self.process.shutdown()
        await self.peer.close()
        await asyncio.gather(self.reader, return_exceptions=True)
        return code


STDERR_LINES = 20
"""Lines of the agent's stderr shown under a notice that it failed or exited."""


def oversized_notice(limit: int) -> tuple[str, str]:
    """The title and detail of the notice that an agent's message over ``limit`` bytes was dropped."""
    size = f"{limit // (1024 * 1024)} MiB" if limit >= 1024 * 1024 else f"{limit:,} bytes"
    return (
        f"The agent sent a message of more than {size}; it was dropped",
        "The limit is WEBCLIENT_MAX_LINE_MB. What the message said is lost; the agent may wait for an answer.",
    )


def diagnosis(stderr: StderrLog, stray_responses: int) -> Diagnosis:
    """What can be said of an agent that failed: the end of its stderr, and answers to requests never sent."""
    stray = stray_responses
    return Diagnosis(
        detail=stderr.tail(STDERR_LINES) or "The agent wrote nothing on stderr.",
        unanswered=f"{stray} answer{'s' if stray > 1 else ''} came with an id we never sent" if stray else None,
    )
