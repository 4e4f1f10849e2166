"""The ACP v2 prompt lifecycle (``docs/protocol/v2/prompt-lifecycle.mdx``): ``session/prompt`` is answered as soon as
the agent takes the prompt in (``{messageId}``), and the turn ends with ``state_update {state: "idle", stopReason?}``.

`TurnLifecycle` follows one session's turns the same way live and in the replay of its journal: what the agent
echoes of the prompt this client sent (``user_message`` with the prompt's ``messageId``) is not shown twice, and
the idle ``state_update`` ends the turn (`AcpAgent.prompt` waits for it). `show_state` is the thread's fold of a
``state_update``: the work still running in the background when the turn ended.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, cast

from webclient.acp import wire, wire_v2
from webclient.acp.jsonrpc import error_text
from webclient.acp.wire_values import integer, mapping, string
from webclient.viewmodel.advisories import add_agent_notice
from webclient.viewmodel.thread import Thread

BACKGROUND = "Still running in the background"
"""The notice of an idle ``state_update`` that lists work going on after the turn."""

ECHOES = frozenset({"user_message", "user_message_chunk"})
"""The updates that may be the agent's report of the prompt this client sent."""

StateUpdate = wire_v2.V2StateUpdateSessionUpdate
"""A ``state_update`` (the v2 draft's; v1's unstable schema names only the states of a subagent)."""
Echo = wire_v2.V2UserMessage | wire.ContentChunk | wire_v2.V2ContentChunk


class TurnFailed(Exception):
    """The turn ended with the ``error`` stop reason: ``text`` and ``code`` of its JSON-RPC error, if it said."""

    def __init__(self, text: str, code: int | None) -> None:
        super().__init__(text)
        self.text = text
        self.code = code


class TurnLifecycle:
    """One session's v2 turns: the prompt sent, its answer, its end."""

    def __init__(self) -> None:
        self.state: str | None = None
        """The agent's last ``state``: ``running``, ``requires_action``, ``idle`` (or a future one), None before."""
        self._asked = False
        """A prompt was sent and not answered yet: the first user message the agent reports now is its echo."""
        self._echoes: set[str] = set()
        """The ``messageId`` of each prompt this client sent (its answer's, or the echo's)."""
        self._end: asyncio.Future[StateUpdate] | None = None

    def prompt_sent(self) -> None:
        self._asked = True

    def prompt_answered(self, result: dict[str, Any] | None) -> None:
        """The answer to ``session/prompt`` (None: it was refused): the id of the user message it became."""
        self._asked = False
        answered = cast(wire_v2.V2PromptResponse, result or {})
        message_id = string(answered.get("messageId"))
        if message_id is not None:
            self._echoes.add(message_id)

    def echoes(self, update: Any) -> bool:
        """Whether ``update`` is the agent's report of the prompt this client sent, which the thread shows already."""
        if not isinstance(update, dict) or update.get("sessionUpdate") not in ECHOES:
            return False
        message_id = string(cast(Echo, update).get("messageId"))
        if message_id is None:
            return False
        if self._asked:
            self._echoes.add(message_id)  # reported before the answer: the prompt just sent
            return True
        return message_id in self._echoes

    async def run(
        self, send: Callable[[], Awaitable[dict[str, Any]]], reader: asyncio.Future[None]
    ) -> StateUpdate | None:
        """A live turn: ``send`` the prompt, then wait for the idle ``state_update`` that ends the turn (which may come
        before the answer); None when the connection (its ``reader``) ended first. A refused prompt raises what
        ``send`` raises."""
        end = self._end = asyncio.get_running_loop().create_future()
        self._asked = True
        try:
            try:
                self.prompt_answered(await send())
            except BaseException:
                self.prompt_answered(None)
                raise
            gone = asyncio.ensure_future(asyncio.shield(reader))
            try:
                await asyncio.wait((end, gone), return_when=asyncio.FIRST_COMPLETED)
            finally:
                gone.cancel()
            return end.result() if end.done() and not end.cancelled() else None
        finally:
            end.cancel()

    def state_changed(self, update: StateUpdate) -> bool:
        """A ``state_update``: True when it ends a turn (``idle``)."""
        state = string(update.get("state"))
        self.state = state
        if state != "idle":
            return False
        end, self._end = self._end, None
        if end is not None and not end.done():
            end.set_result(update)
        return True


def stop_reason(idle: StateUpdate) -> str | None:
    """The stop reason of an idle ``state_update``; raises `TurnFailed` for ``error`` (with its details)."""
    reason = idle.get("stopReason")
    if reason == "error":
        error = mapping(idle.get("error"))
        message = string(error.get("message"))
        text = error_text(message if message is not None else "The turn failed", error.get("data"))
        raise TurnFailed(text, integer(error.get("code")))
    return string(reason)


def _work(thread: Thread, item: object) -> str | None:
    if not isinstance(item, dict):
        return None
    work = cast(wire_v2.V2BackgroundWork, item)
    kind = string(work.get("type"))
    if kind == "terminal" and (terminal_id := string(work.get("terminalId"))) is not None:
        return f"terminal {terminal_id}"
    if kind == "tool_call" and (tool_call_id := string(work.get("toolCallId"))) is not None:
        call = thread.tool_call(tool_call_id)
        return f"“{call.title}”" if call is not None and call.title else f"tool call {tool_call_id}"
    return kind[:80] if kind is not None else None


def show_state(thread: Thread, update: StateUpdate) -> bool:
    """The thread's fold of a ``state_update``: at the idle that ends a turn, the work still running in the
    background (``background``, a complete snapshot; omitted means not reported, ``[]`` nothing)."""
    background = update.get("background")
    if update.get("state") == "idle" and update.get("stopReason") is not None and isinstance(background, list):
        work = [name for name in (_work(thread, item) for item in background) if name]
        if work:
            add_agent_notice(thread, "info", BACKGROUND, ", ".join(work))
    return string(update.get("state")) is not None
