"""Tests for webclient.acp.peer (and the messages of webclient.acp.jsonrpc), a real agent subprocess on the other end
(tests/agents/rawjson_script.py)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.support.servers import AGENTS
from webclient.acp.jsonrpc import (
    AuthRequired,
    ConnectionClosed,
    InvalidParams,
    MethodNotFound,
    RpcError,
)
from webclient.acp.peer import Peer
from webclient.acp.process import AgentProcess

AGENT = AGENTS / "rawjson_script.py"


def big_text(size: int) -> str:
    """The same text the agent's ``big`` method produces."""
    pattern = 'abc\u00e9\u20ac\U0001f600"\\\n\t'
    return (pattern * (size // len(pattern) + 1))[:size]


def line(message: Any) -> str:
    """Hex of one compact JSON line, for the agent's ``emit`` method."""
    return (json.dumps(message, separators=(",", ":")) + "\n").encode().hex()


class Recorder:
    """Collects what the peer reports; requests go to `on_request` (MethodNotFound unless replaced)."""

    def __init__(self) -> None:
        self.notifications: list[tuple[str, Any]] = []
        self.garbage: list[tuple[str, str]] = []
        self.traffic: list[tuple[str, str]] = []
        self.on_request: Callable[[str, Any], Awaitable[Any]] = self.unknown
        self.on_notification: Callable[[str, Any], None] = self.record

    async def unknown(self, method: str, params: Any) -> Any:
        raise MethodNotFound(f"no such method: {method}")

    def request(self, method: str, params: Any) -> Awaitable[Any]:
        return self.on_request(method, params)

    def notification(self, method: str, params: Any) -> None:
        self.on_notification(method, params)

    def record(self, method: str, params: Any) -> None:
        self.notifications.append((method, params))


@asynccontextmanager
async def connect(recorder: Recorder, **peer_options: Any) -> AsyncIterator[tuple[AgentProcess, Peer]]:
    """Start the script agent, run a Peer on it, and clean both up."""
    process = await AgentProcess.spawn([sys.executable, str(AGENT)], cwd=Path.cwd())
    peer = Peer(
        process.stdout,
        process.stdin,
        on_request=recorder.request,
        on_notification=recorder.notification,
        on_garbage=lambda reason, text: recorder.garbage.append((reason, text)),
        **peer_options,
    )
    reading = asyncio.create_task(peer.run())
    try:
        yield process, peer
    finally:
        await peer.close()
        await process.shutdown(grace=2.0)
        await asyncio.wait_for(reading, 5)


@pytest.mark.asyncio
async def test_request_round_trip_and_traffic_log() -> None:
    recorder = Recorder()
    async with connect(recorder, on_traffic=lambda d, t, _: recorder.traffic.append((d, t))) as (_, peer):
        assert await peer.request("echo", {"text": "h\u00e9llo\nworld"}) == {"text": "h\u00e9llo\nworld"}
        assert await peer.request("echo") is None
    out = [text for direction, text in recorder.traffic if direction == "out"]
    assert out[0] == '{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"héllo\\nworld"}}'
    assert json.loads(out[1]) == {"jsonrpc": "2.0", "id": 2, "method": "echo"}
    assert [json.loads(t)["id"] for d, t in recorder.traffic if d == "in"] == [1, 2]


@pytest.mark.asyncio
async def test_ten_megabyte_lines_arrive_intact_both_ways() -> None:
    async with connect(Recorder()) as (_, peer):
        result = await peer.request("big", {"size": 10_000_000})
        assert result["data"] == big_text(10_000_000)
        sent = big_text(10_000_000)
        digest = await peer.request("digest", {"data": sent})
        assert digest == {"len": len(sent), "sha256": hashlib.sha256(sent.encode()).hexdigest()}


@pytest.mark.asyncio
async def test_garbage_lines_are_skipped_and_never_answered() -> None:
    """A line that is not JSON is reported and skipped, never answered with -32700: an agent that printed a
    terminal prompt (gemini's OAuth flow) would read the answer as the user's typing."""
    recorder = Recorder()
    blobs = [
        b"not json at all\n".hex(),
        b'{"jsonrpc":"2.0","method":"bad utf8","params":"\xff\xfe"}\n'.hex(),
        b"Enter the authorization code: \n".hex(),
        b"\n".hex(),
        b"   \r\n".hex(),
        line({"jsonrpc": "2.0", "method": "after"}),
        b'{"jsonrpc":"2.0","method":"crlf"}\r\n'.hex(),
        line(42),
    ]
    async with connect(recorder) as (_, peer):
        result = await peer.request("emit", {"hex": blobs, "collect": 1})
        # Nothing more comes back: the next thing the agent reads is this request's successor.
        assert await peer.request("echo", {"n": 1}) == {"n": 1}
    assert [reason for reason, _ in recorder.garbage] == ["invalid JSON", "invalid UTF-8", "invalid JSON"]
    assert recorder.garbage[0][1] == "not json at all"
    assert recorder.notifications == [("after", None), ("crlf", None)]
    assert [message["error"]["code"] for message in result["collected"]] == [-32600]  # 42 is JSON, not a request


@pytest.mark.asyncio
async def test_a_message_after_terminal_escape_codes_is_recovered() -> None:
    """gemini's last message after its OAuth prompt comes glued behind the codes that leave the full-screen view."""
    recorder = Recorder()
    blobs = [
        b"\x1b[?1049l".hex() + line({"jsonrpc": "2.0", "method": "after-escape", "params": [1]}),
        b"\x1b]0;gemini\x07\x1b[2J\x1b[H  > ".hex() + line({"jsonrpc": "2.0", "method": "after-osc"}),
        b"progress [50%] {not json}\n".hex(),
        b"\x1b[?1049l".hex() + line([{"jsonrpc": "2.0", "method": "batched"}]),
    ]
    async with connect(recorder) as (_, peer):
        await peer.request("emit", {"hex": blobs, "collect": 0})
        assert await peer.request("echo", {"n": 2}) == {"n": 2}
    assert recorder.notifications == [("after-escape", [1]), ("after-osc", None), ("batched", None)]
    reasons = [reason for reason, _ in recorder.garbage]
    assert reasons == [
        "junk before a JSON message, message kept",
        "junk before a JSON message, message kept",
        "invalid JSON",
        "junk before a JSON message, message kept",
    ]
    assert recorder.garbage[0][1] == "\x1b[?1049l"


@pytest.mark.asyncio
@pytest.mark.parametrize("size", [5_000, 3_000_000])
async def test_over_long_line_is_discarded_and_reading_goes_on(size: int) -> None:
    recorder = Recorder()
    blobs = [line({"jsonrpc": "2.0", "method": "huge", "params": "x" * size}), line({"jsonrpc": "2.0", "method": "ok"})]
    oversized: list[int] = []
    async with connect(recorder, max_line_bytes=4_000, on_oversized=oversized.append) as (_, peer):
        await peer.request("emit", {"hex": blobs, "collect": 0})  # dropped, not answered
        assert await peer.request("echo", {"n": 3}) == {"n": 3}
    assert oversized == [4_000]
    assert [reason for reason, _ in recorder.garbage] == ["line longer than 4000 bytes"]
    assert recorder.garbage[0][1].startswith('{"jsonrpc":"2.0","method":"huge"')
    assert recorder.notifications == [("ok", None)]


@pytest.mark.asyncio
async def test_batch_entries_are_handled_in_order_and_bad_batches_get_invalid_request() -> None:
    recorder = Recorder()
    events: list[str] = []

    def on_request(method: str, params: Any) -> Awaitable[Any]:
        events.append(f"request {method}")  # the synchronous prefix runs in arrival order

        async def answer() -> Any:
            return {"answered": method}

        return answer()

    recorder.on_request = on_request
    recorder.on_notification = lambda method, params: events.append(f"notification {method}")
    batch = [
        {"jsonrpc": "2.0", "method": "a"},
        {"jsonrpc": "2.0", "method": "b"},
        {"jsonrpc": "2.0", "id": "b1", "method": "batch/request"},
        {"jsonrpc": "2.0", "method": "c"},
        7,
    ]
    async with connect(recorder) as (_, peer):
        result = await peer.request("emit", {"hex": [line(batch), line([])], "collect": 3})
    assert events == ["notification a", "notification b", "request batch/request", "notification c"]
    by_id: dict[Any, list[Any]] = {}
    for message in result["collected"]:
        by_id.setdefault(message["id"], []).append(message.get("result") or message["error"]["code"])
    assert by_id == {"b1": [{"answered": "batch/request"}], None: [-32600, -32600]}


@pytest.mark.asyncio
async def test_handler_errors_reach_the_agent_as_error_responses() -> None:
    recorder = Recorder()

    async def on_request(method: str, params: Any) -> Any:
        if method == "fail/invalid":
            raise InvalidParams("bad path", data={"path": "x"})
        if method == "fail/crash":
            raise ValueError("kaboom")
        if method == "ok":
            return {"fine": True}
        raise MethodNotFound()

    recorder.on_request = on_request
    async with connect(recorder) as (_, peer):

        async def ask(method: str) -> Any:
            return (await peer.request("ask", {"method": method, "params": {}}))["received"]

        assert await ask("no/such") == {
            "jsonrpc": "2.0",
            "id": "ask-1",
            "error": {"code": -32601, "message": "Method not found"},
        }
        assert (await ask("fail/invalid"))["error"] == {"code": -32602, "message": "bad path", "data": {"path": "x"}}
        assert (await ask("fail/crash"))["error"] == {"code": -32603, "message": "kaboom"}
        assert (await ask("ok"))["result"] == {"fine": True}


@pytest.mark.asyncio
async def test_error_response_raises_rpc_error_of_matching_class() -> None:
    async with connect(Recorder()) as (_, peer):
        with pytest.raises(MethodNotFound) as caught:
            await peer.request("no/such/method")
    assert caught.value.code == -32601 and caught.value.message == "Method not found"
    assert isinstance(RpcError.from_json({"code": -32000, "message": "log in"}), AuthRequired)
    other = RpcError.from_json({"code": 42, "message": "odd", "data": [1]})
    assert (type(other), other.to_json()) == (RpcError, {"code": 42, "message": "odd", "data": [1]})


@pytest.mark.asyncio
async def test_slow_request_does_not_block_notifications_which_keep_their_order() -> None:
    recorder = Recorder()
    seen: list[int] = []
    all_seen = asyncio.Event()
    slow_started_after: list[int] = []
    count = 10_000

    def on_notification(method: str, params: Any) -> None:
        seen.append(params["i"])
        if len(seen) == count:
            all_seen.set()

    def on_request(method: str, params: Any) -> Awaitable[Any]:
        slow_started_after.append(len(seen))

        async def slow() -> Any:
            await all_seen.wait()  # only possible if the read loop keeps going meanwhile
            return {"seen": len(seen)}

        return slow()

    recorder.on_notification = on_notification
    recorder.on_request = on_request
    async with connect(recorder) as (_, peer):
        result = await asyncio.wait_for(peer.request("flood", {"count": count, "slow_at": 5_000}), 10)
    assert seen == list(range(count))
    assert slow_started_after == [5_000]
    assert result["slow"]["result"] == {"seen": count}


@pytest.mark.asyncio
async def test_agent_exit_fails_pending_request_with_connection_closed() -> None:
    async with connect(Recorder()) as (process, peer):
        with pytest.raises(ConnectionClosed):
            await asyncio.wait_for(peer.request("exit", {"code": 3}), 5)
        assert peer.closed
        assert await asyncio.wait_for(process.wait(), 5) == 3
        with pytest.raises(ConnectionClosed):
            await peer.request("echo")


@pytest.mark.asyncio
async def test_close_cancels_incoming_requests_and_later_sends_do_not_raise() -> None:
    recorder = Recorder()
    started = asyncio.Event()
    cancelled = asyncio.Event()

    async def on_request(method: str, params: Any) -> Any:
        started.set()
        try:
            await asyncio.Event().wait()  # e.g. a permission prompt nobody answers
        finally:
            cancelled.set()

    recorder.on_request = on_request
    async with connect(recorder) as (_, peer):
        asking = asyncio.create_task(peer.request("ask", {"method": "prompt"}))
        await asyncio.wait_for(started.wait(), 5)
        await peer.close()
        assert cancelled.is_set()
        with pytest.raises(ConnectionClosed):
            await asking
        await peer.notify("too/late", {})  # logged, not raised
        with pytest.raises(ConnectionClosed):
            await peer.request("echo")
