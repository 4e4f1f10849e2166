"""The v2 prompt lifecycle (webclient.acp.v2_turn): the echo of a prompt, the idle state that ends a turn, the
``error`` stop reason, and the work still running in the background."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from webclient.acp.protocol_log import ProtocolLog
from webclient.acp.v2_turn import BACKGROUND, TurnFailed, TurnLifecycle, show_state, stop_reason
from webclient.viewmodel.entries import Notice
from webclient.viewmodel.thread import Thread


def user_message(message_id: str) -> dict[str, Any]:
    return {"sessionUpdate": "user_message", "messageId": message_id, "content": [{"type": "text", "text": "hi"}]}


def test_the_echo_of_the_prompt_sent_is_known_before_and_after_its_answer() -> None:
    turns = TurnLifecycle()
    assert not turns.echoes(user_message("m0"))  # no prompt sent: a user message of the agent's own (a replay)
    turns.prompt_sent()
    assert turns.echoes(user_message("m1"))  # before the answer (claude-agent-acp sends it first)
    turns.prompt_answered({"messageId": "m1"})
    assert turns.echoes({"sessionUpdate": "user_message_chunk", "messageId": "m1", "content": {"type": "text"}})
    assert not turns.echoes(user_message("m2"))
    turns.prompt_sent()
    turns.prompt_answered({"messageId": "m3"})
    assert turns.echoes(user_message("m3"))  # after the answer
    assert not turns.echoes({"sessionUpdate": "agent_message", "messageId": "m3"})


@pytest.mark.asyncio
async def test_a_live_turn_ends_at_its_idle_state_even_one_before_the_answer() -> None:
    turns = TurnLifecycle()
    reader: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    async def send() -> dict[str, Any]:
        assert not turns.state_changed({"state": "running"})
        assert turns.state_changed({"state": "idle", "stopReason": "end_turn"})  # before the answer
        return {"messageId": "m1"}

    assert await turns.run(send, reader) == {"state": "idle", "stopReason": "end_turn"}
    assert turns.state == "idle"

    async def refused() -> dict[str, Any]:
        raise ValueError("refused")

    with pytest.raises(ValueError):
        await turns.run(refused, reader)

    async def answered() -> dict[str, Any]:
        asyncio.get_running_loop().call_soon(reader.set_result, None)  # the agent goes away mid-turn
        return {}

    assert await turns.run(answered, reader) is None


def test_the_error_stop_reason_carries_its_json_rpc_error() -> None:
    assert stop_reason({"state": "idle", "stopReason": "cancelled"}) == "cancelled"
    assert stop_reason({"state": "idle"}) is None
    with pytest.raises(TurnFailed) as failed:
        stop_reason({"state": "idle", "stopReason": "error", "error": {"code": -32000, "message": "Sign in"}})
    assert (failed.value.text, failed.value.code) == ("Sign in", -32000)
    with pytest.raises(TurnFailed) as bare:
        stop_reason({"state": "idle", "stopReason": "error"})
    assert (bare.value.text, bare.value.code) == ("The turn failed", None)


def test_background_work_is_shown_at_the_idle_that_ends_a_turn() -> None:
    thread = Thread()
    thread.upsert_tool_call("c1", {"title": "Watch the build"}, {"title": "Watch the build"}, create=True)
    background = [{"type": "tool_call", "toolCallId": "c1"}, {"type": "terminal", "terminalId": "t1"}, {"x": 1}]
    assert show_state(thread, {"state": "idle", "stopReason": "end_turn", "background": background})
    assert show_state(thread, {"state": "idle", "background": background})  # no stop reason: a repeated snapshot
    assert show_state(thread, {"state": "idle", "stopReason": "end_turn", "background": []})
    assert show_state(thread, {"state": "requires_action"})
    assert not show_state(thread, {"state": 3})
    shown = [(n.title, n.detail) for n in thread if isinstance(n, Notice)]
    assert shown == [(BACKGROUND, "“Watch the build”, terminal t1")]


def test_the_protocol_log_knows_the_state_update() -> None:
    update = {"sessionUpdate": "state_update", "state": "idle"}
    line = json.dumps({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": update}})
    logged = ProtocolLog().record("in", line)
    assert logged.update == "state_update" and not logged.unknown_update
