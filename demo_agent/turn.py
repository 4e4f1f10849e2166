"""One prompt turn: what a scenario uses to talk to the client, pace itself, and notice cancellation.

Everything is sent as plain JSON dicts (not the SDK's pydantic models) because the demo deliberately sends
things those models reject: custom tool kinds and statuses, unknown content types, and the v2 draft
``tool_call_content_chunk`` update. The turn also makes the requests a client may serve for its agent
(``fs/*``, ``terminal/*``), each only worth making when :class:`ClientCapabilities` says the client offers it.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

from .capabilities import ClientCapabilities
from .jsonrpc import Connection, RequestError
from .prompt_content import Prompt
from .session_state import SessionState
from .usage import estimate_tokens
from .workspace import Workspace

log = logging.getLogger(__name__)

# Base delays in seconds at speed 1.0; DEMO_AGENT_SPEED multiplies them (0 = no delays at all).
CHUNK_DELAY = 0.03
STEP_DELAY = 0.3
# Seconds to wait for the client requests whose outcome the agent must know even after a cancel: a created
# terminal has to be released, a write either happened or not. The client answers them at once.
CLIENT_TIMEOUT = 30.0

# Statuses after which a tool call is no longer "in flight" (so cancellation leaves it alone).
_FINAL_STATUSES = {"completed", "failed", "cancelled"}
_TOKEN = re.compile(r"\S+\s*|\s+")
_FIRST_SENTENCE = re.compile(r"(?<=[.!?])\s+")
DOUBLE_CHECK = "Let me double-check that before I answer… yes, it holds up."


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


class Turn:
    """A running ``session/prompt``; scenarios call these helpers and never touch the connection directly."""

    def __init__(
        self,
        conn: Connection,
        session: SessionState,
        speed: float,
        caps: ClientCapabilities | None = None,
        prompt: Prompt | None = None,
    ) -> None:
        self.conn = conn
        self.session = session
        self.speed = speed
        self.caps = caps or ClientCapabilities()
        self.prompt = prompt or Prompt()
        # Estimated tokens of everything sent this turn, for the usage meter; and the updates sent, by kind.
        self.tokens = 0
        self.sent: Counter[str] = Counter()
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
        self.tokens += estimate_tokens(update)
        self.sent[str(update.get("sessionUpdate"))] += 1
        await self.conn.send_notification("session/update", {"sessionId": self.session.session_id, "update": update})

    async def say(
        self,
        text: str,
        *,
        thought: bool = False,
        words: int = 3,
        delay: float = CHUNK_DELAY,
        message_id: str | None = None,
        kind: str = "agent_message_chunk",
    ) -> str:
        """Stream ``text`` as one message, a few words per chunk (more with a fast model), checking for cancel
        between. ``message_id`` continues an earlier message; returns the message's id."""
        kind = "agent_thought_chunk" if thought else kind
        message_id = message_id or uuid.uuid4().hex
        for piece in chunk_words(text, self.session.settings.words_per_chunk(words)):
            await self.pause(delay)
            await self.update(
                {"sessionUpdate": kind, "messageId": message_id, "content": {"type": "text", "text": piece}}
            )
        return message_id

    async def send_block(self, block: dict[str, Any], *, message_id: str, kind: str = "agent_message_chunk") -> None:
        """One content block (image, audio, resource, …) as a chunk of message ``message_id``."""
        await self.pause(CHUNK_DELAY)
        await self.update({"sessionUpdate": kind, "messageId": message_id, "content": block})

    async def think(self, text: str) -> None:
        """Stream a thought, as much of it as the session's thought level asks for: none, its first sentence,
        all of it, or all of it and a double check."""
        level = self.session.settings.thought_level
        if level == "off":
            return
        if level == "low":
            text = _FIRST_SENTENCE.split(text.strip(), maxsplit=1)[0]
        elif level == "high":
            text = text.rstrip() + "\n\n" + DOUBLE_CHECK
        await self.say(text, thought=True)

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

    # -- what the client offers --------------------------------------------------------------------

    @property
    def can_read(self) -> bool:
        return self.caps.read_text_file

    @property
    def can_write(self) -> bool:
        return self.caps.write_text_file

    @property
    def can_run(self) -> bool:
        return self.caps.terminal

    @property
    def can_show_terminal_meta(self) -> bool:
        return self.caps.terminal_output_meta

    # -- requests to the client --------------------------------------------------------------------

    async def _request(self, method: str, params: dict[str, Any], *, interruptible: bool = True) -> Any:
        """Send a request in this session and return its result; raises ``RequestError`` if the client refuses.

        An interruptible request stops waiting as soon as the turn is cancelled (:class:`TurnCancelled`); the
        late answer is dropped by the connection. The others are awaited to the end, with a timeout.
        """
        params = {"sessionId": self.session.session_id} | params
        if not interruptible:
            return await asyncio.wait_for(self.conn.send_request(method, params), CLIENT_TIMEOUT)
        self.check()
        request = asyncio.ensure_future(self.conn.send_request(method, params))
        cancel_wait = asyncio.ensure_future(self._cancelled.wait())
        try:
            done, _ = await asyncio.wait({request, cancel_wait}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            cancel_wait.cancel()
            if not request.done():  # cancelled turn, or the caller's own timeout cancelled us
                request.cancel()
        if request not in done:
            raise TurnCancelled
        return request.result()

    async def read_text_file(self, path: str, line: int | None = None, limit: int | None = None) -> str:
        """``fs/read_text_file``: ``limit`` lines from 1-based ``line`` (whole file by default) of absolute ``path``.

        https://agentclientprotocol.com/protocol/file-system#reading-files
        """
        params: dict[str, Any] = {"path": path}
        if line is not None:
            params["line"] = line
        if limit is not None:
            params["limit"] = limit
        result = await self._request("fs/read_text_file", params)
        content = result.get("content") if isinstance(result, dict) else None
        if not isinstance(content, str):
            raise RequestError.internal_error({"details": f"fs/read_text_file answered {result!r}"})
        return content

    async def write_text_file(self, path: str, content: str) -> None:
        """``fs/write_text_file``; awaited even across a cancel, so the agent knows whether it was written.

        https://agentclientprotocol.com/protocol/file-system#writing-files
        """
        await self._request("fs/write_text_file", {"path": path, "content": content}, interruptible=False)

    async def create_terminal(
        self,
        command: str,
        args: list[str] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
        env: Mapping[str, str] | None = None,
    ) -> str:
        """``terminal/create``: start ``command`` on the client; returns the terminal id. Prefer :meth:`terminal`.

        Awaited even across a cancel: a terminal the client created must be known, to be released.
        https://agentclientprotocol.com/protocol/terminals#executing-commands
        """
        params: dict[str, Any] = {"command": command, "args": list(args or [])}
        if cwd is not None:
            params["cwd"] = cwd
        if output_byte_limit is not None:
            params["outputByteLimit"] = output_byte_limit
        if env:
            params["env"] = [{"name": name, "value": value} for name, value in env.items()]
        result = await self._request("terminal/create", params, interruptible=False)
        terminal_id = result.get("terminalId") if isinstance(result, dict) else None
        if not isinstance(terminal_id, str):
            raise RequestError.internal_error({"details": f"terminal/create answered {result!r}"})
        return terminal_id

    async def terminal_output(self, terminal_id: str) -> dict[str, Any]:
        """``terminal/output``: ``{output, truncated, exitStatus?}`` so far.

        https://agentclientprotocol.com/protocol/terminals#getting-output
        """
        result = await self._request("terminal/output", {"terminalId": terminal_id})
        return result if isinstance(result, dict) else {}

    async def wait_for_terminal_exit(self, terminal_id: str) -> dict[str, Any]:
        """``terminal/wait_for_exit``: ``{exitCode, signal}``; a cancel stops the wait (the command runs on).

        https://agentclientprotocol.com/protocol/terminals#waiting-for-exit
        """
        result = await self._request("terminal/wait_for_exit", {"terminalId": terminal_id})
        return result if isinstance(result, dict) else {}

    async def kill_terminal(self, terminal_id: str) -> None:
        """``terminal/kill``: stop the command; the terminal stays valid for output and wait.

        https://agentclientprotocol.com/protocol/terminals#killing-commands
        """
        await self._request("terminal/kill", {"terminalId": terminal_id}, interruptible=False)

    async def release_terminal(self, terminal_id: str) -> None:
        """``terminal/release``: kill the command if running; the id becomes invalid.

        https://agentclientprotocol.com/protocol/terminals#releasing-terminals
        """
        await self._request("terminal/release", {"terminalId": terminal_id}, interruptible=False)

    @asynccontextmanager
    async def terminal(
        self,
        command: str,
        args: list[str],
        *,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
        env: Mapping[str, str] | None = None,
    ) -> AsyncIterator[str]:
        """Create a terminal and always release it on the way out, also on cancel or error (the spec's MUST)."""
        terminal_id = await self.create_terminal(command, args, cwd, output_byte_limit, env)
        try:
            yield terminal_id
        finally:
            try:
                await self.release_terminal(terminal_id)
            except (RequestError, ConnectionError, TimeoutError) as exc:
                log.warning("could not release terminal %s: %s", terminal_id, exc)

    async def read_text(self, rel: str) -> str | None:
        """Text of workspace file ``rel``: through the client when it offers ``fs/read_text_file`` (which may
        include unsaved editor changes), else from disk. ``None`` when missing or unreadable."""
        if not self.can_read:
            return self.workspace.read(rel)
        try:
            return await self.read_text_file(self.abs(rel))
        except RequestError as exc:
            log.info("fs/read_text_file %s: %s", rel, exc)
            return None

    async def write_text(self, rel: str, text: str) -> None:
        """Write workspace file ``rel``: through the client when it offers ``fs/write_text_file``, else to disk.

        Raises ``RequestError`` when the client refuses, ``OSError`` when the disk does.
        """
        if self.can_write:
            await self.write_text_file(self.abs(rel), text)
        else:
            self.workspace.write(rel, text)

    # -- permission --------------------------------------------------------------------------------

    async def ask_permission(self, tool_call: dict[str, Any], options: list[dict[str, str]]) -> str:
        """Ask the client; returns the chosen optionId. Raises :class:`TurnCancelled` on a cancelled outcome.

        A session/cancel also ends the wait at once: the client must answer the request with ``cancelled``
        anyway, and that late answer is simply dropped by the connection.
        """
        try:
            result = await self._request("session/request_permission", {"toolCall": tool_call, "options": options})
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
