"""One prompt turn: what a scenario uses to talk to the client, pace itself, and notice cancellation.

Everything is sent as plain JSON dicts (not the SDK's pydantic models) because the demo deliberately sends
things those models reject: custom tool kinds and statuses, unknown content types, and the v2 draft
``tool_call_content_chunk`` update.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp.connection import Connection
from acp.exceptions import RequestError

from .workspace import Workspace

log = logging.getLogger(__name__)

# Base delays in seconds at speed 1.0; DEMO_AGENT_SPEED multiplies them (0 = no delays at all).
CHUNK_DELAY = 0.03
STEP_DELAY = 0.3

# Statuses after which a tool call is no longer "in flight" (so cancellation leaves it alone).
_FINAL_STATUSES = {"completed", "failed", "cancelled"}
_TOKEN = re.compile(r"\S+\s*|\s+")


def speed_from_env() -> float:
    """Delay multiplier from ``DEMO_AGENT_SPEED``; bad values fall back to 1.0 so the demo still runs."""
    raw = os.environ.get("DEMO_AGENT_SPEED", "1")
    try:
        speed = float(raw)
    except ValueError:
        log.warning("DEMO_AGENT_SPEED=%r is not a number; using 1.0", raw)
        return 1.0
    return max(speed, 0.0)


def chunk_words(text: str, words_per_chunk: int) -> list[str]:
    """Split ``text`` into pieces of a few words each; joining them gives back ``text`` exactly."""
    tokens = _TOKEN.findall(text)
    return ["".join(tokens[i : i + words_per_chunk]) for i in range(0, len(tokens), words_per_chunk)]


class TurnCancelled(Exception):
    """Raised inside a scenario once the turn is cancelled; the agent answers the prompt with ``cancelled``."""


@dataclass
class SessionState:
    """What the agent remembers about one session."""

    session_id: str
    cwd: Path
    # "allow" / "reject" after the user picked an "always" option for edits; None = ask every time.
    edit_policy: str | None = None
    tool_counter: int = 0
    turn: Turn | None = None
    workspace: Workspace = field(init=False)

    def __post_init__(self) -> None:
        self.workspace = Workspace(self.cwd)

    def next_tool_id(self, hint: str) -> str:
        self.tool_counter += 1
        return f"call_{self.tool_counter:03d}_{hint}"


class Turn:
    """A running ``session/prompt``; scenarios call these helpers and never touch the connection directly."""

    def __init__(self, conn: Connection, session: SessionState, speed: float) -> None:
        self.conn = conn
        self.session = session
        self.speed = speed
        self._cancelled = asyncio.Event()
        # Tool calls announced but not finished, in order, so a cancel can close them.
        self._open_tools: dict[str, None] = {}

    # -- cancellation and pacing -------------------------------------------------------------------

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    def cancel(self) -> None:
        self._cancelled.set()

    def check(self) -> None:
        if self._cancelled.is_set():
            raise TurnCancelled

    async def pause(self, seconds: float = STEP_DELAY) -> None:
        """Wait ``seconds`` × speed, waking up at once on cancel; raises :class:`TurnCancelled` if cancelled."""
        self.check()
        delay = seconds * self.speed
        if delay <= 0:
            # Still yield, so a session/cancel that arrived meanwhile gets processed even at speed 0.
            await asyncio.sleep(0)
            self.check()
            return
        try:
            await asyncio.wait_for(self._cancelled.wait(), timeout=delay)
        except TimeoutError:
            return
        raise TurnCancelled

    # -- sending -----------------------------------------------------------------------------------

    @property
    def workspace(self) -> Workspace:
        return self.session.workspace

    def abs(self, rel: str) -> str:
        """Absolute path for ``rel`` (ACP requires absolute paths in updates)."""
        return str(self.workspace.path(rel))

    async def update(self, update: dict[str, Any]) -> None:
        await self.conn.send_notification("session/update", {"sessionId": self.session.session_id, "update": update})

    async def say(self, text: str, *, thought: bool = False, words: int = 3, delay: float = CHUNK_DELAY) -> None:
        """Stream ``text`` as one message (one ``messageId``), a few words per chunk, checking for cancel between."""
        kind = "agent_thought_chunk" if thought else "agent_message_chunk"
        message_id = uuid.uuid4().hex
        for piece in chunk_words(text, words):
            await self.pause(delay)
            await self.update(
                {"sessionUpdate": kind, "messageId": message_id, "content": {"type": "text", "text": piece}}
            )

    async def plan(self, entries: list[dict[str, str]]) -> None:
        """Send the whole plan (ACP replaces it every time)."""
        await self.update({"sessionUpdate": "plan", "entries": [dict(e) for e in entries]})

    async def tool(self, hint: str, title: str, kind: str, status: str = "pending", **fields: Any) -> str:
        """Announce a tool call (``tool_call``); ``fields`` are extra camelCase ACP fields. Returns its id."""
        tool_id = self.session.next_tool_id(hint)
        await self.update(
            {"sessionUpdate": "tool_call", "toolCallId": tool_id, "title": title, "kind": kind, "status": status}
            | fields
        )
        self._track(tool_id, status)
        return tool_id

    async def tool_update(self, tool_id: str, **fields: Any) -> None:
        """Patch a tool call (``tool_call_update``); also creates it on clients that upsert."""
        await self.update({"sessionUpdate": "tool_call_update", "toolCallId": tool_id} | fields)
        if "status" in fields:
            self._track(tool_id, fields["status"])

    async def tool_chunk(self, tool_id: str, item: dict[str, Any]) -> None:
        """Append one content item (v2 draft ``tool_call_content_chunk``)."""
        await self.update({"sessionUpdate": "tool_call_content_chunk", "toolCallId": tool_id, "content": item})

    def _track(self, tool_id: str, status: str) -> None:
        if status in _FINAL_STATUSES:
            self._open_tools.pop(tool_id, None)
        else:
            self._open_tools[tool_id] = None

    async def close_open_tools(self) -> None:
        """After a cancel: mark every unfinished tool call ``cancelled`` (v2 status; v1 clients mark it locally)."""
        for tool_id in list(self._open_tools):
            await self.tool_update(tool_id, status="cancelled")

    # -- permission --------------------------------------------------------------------------------

    async def ask_permission(self, tool_call: dict[str, Any], options: list[dict[str, str]]) -> str:
        """Ask the client; returns the chosen optionId. Raises :class:`TurnCancelled` on a cancelled outcome.

        A session/cancel also ends the wait at once: the client must answer the request with ``cancelled``
        anyway, and that late answer is simply dropped by the connection.
        """
        self.check()
        params = {"sessionId": self.session.session_id, "toolCall": tool_call, "options": options}
        request = asyncio.ensure_future(self.conn.send_request("session/request_permission", params))
        cancel_wait = asyncio.ensure_future(self._cancelled.wait())
        try:
            await asyncio.wait({request, cancel_wait}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            cancel_wait.cancel()
        if not request.done():
            request.cancel()
            raise TurnCancelled
        try:
            result = request.result()
        except RequestError as exc:
            if exc.code == -32800:  # the client cancelled the request itself
                raise TurnCancelled from exc
            # Any other failure is never taken as approval.
            log.warning("permission request failed (%s); treating it as a rejection", exc)
            return "reject-once"
        outcome = (result or {}).get("outcome") or {}
        if outcome.get("outcome") == "selected":
            chosen = outcome.get("optionId")
            if chosen in {o["optionId"] for o in options}:
                return str(chosen)
            log.warning("client picked unknown option %r; treating it as a rejection", chosen)
            return "reject-once"
        if outcome.get("outcome") == "cancelled":
            raise TurnCancelled
        # Unknown outcome shapes must never count as approval (ACP v2 rule, sensible in v1 too).
        log.warning("unknown permission outcome %r; treating it as a rejection", outcome)
        return "reject-once"
