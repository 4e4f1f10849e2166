"""The protocol log fed with what the JSON-RPC peer already decoded: the same summaries as from the text, and
the text not decoded a second time (that second decoding cost about a seventh of the server's time in a flood)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from webclient.acp.peer import Peer
from webclient.acp.protocol_log import MAX_LINE_CHARS, LogLine, ProtocolLog


def line(**message: Any) -> str:
    return json.dumps({"jsonrpc": "2.0", **message})


def update(kind: str, **fields: Any) -> str:
    return line(method="session/update", params={"sessionId": "s1", "update": {"sessionUpdate": kind, **fields}})


def decoded(text: str) -> Any:
    """What the peer hands over: the decoded line, or None when it is not JSON."""
    try:
        return json.loads(text)
    except ValueError:
        return None


def summary(entry: LogLine) -> tuple[Any, ...]:
    return entry.number, entry.direction, entry.text, entry.kind, entry.method, entry.id, entry.update


BIG = "x" * (MAX_LINE_CHARS * 2)
LINES: list[tuple[str, str]] = [
    ("out", line(id=0, method="initialize", params={"protocolVersion": 1})),
    ("in", line(id=0, result={"protocolVersion": 1})),
    ("out", line(id=1, method="session/prompt", params={"prompt": [{"type": "text", "text": "Hello"}]})),
    ("in", update("agent_message_chunk", content={"type": "text", "text": "Hi"})),
    ("in", update("future_thing", payload={"x": 1})),
    ("in", line(method="session/update", params={"update": "?"})),
    ("in", line(method="session/update", params={"update": {"sessionUpdate": 3}})),
    ("in", line(id="a\u00e9", method="session/request_permission", params={})),
    ("out", line(id="a\u00e9", result={"outcome": {"outcome": "cancelled"}})),
    ("in", line(id=2.0, method="fs/read_text_file", params={})),
    ("out", line(id=2.0, error={"code": -32601, "message": "nope"})),
    ("in", line(id=None, method="odd", params={})),
    ("in", line(id=True, result={})),
    ("in", line(id=3)),
    ("in", line(method=7)),
    ("in", "{}"),
    ("in", "[1, 2]"),
    ("in", "[" + line(method="a") + "," + line(id=9, result={}) + "]"),
    ("in", "null"),
    ("in", "3"),
    ("in", '"text"'),
    ("in", '{"id": 1, "method": "x"'),
    ("in", "not json at all"),
    ("garbage", "invalid JSON: not json at all"),
    ("garbage", 'junk before a JSON message, message kept: {"id": 1}'),
    ("out", line(id=4, method="session/prompt", params={"prompt": [{"type": "text", "text": BIG}]})),
    ("in", update("tool_call_update", toolCallId="t", content=BIG)),
    ("in", line(id=4, result={"stopReason": "end_turn", "echo": BIG})),
    ("in", line(method="session/update", params={"update": {"sessionUpdate": "x"}, "cut": BIG})[:-10]),
    ("in", line(id=1, result={"stopReason": "end_turn"})),
]


def test_a_decoded_message_gives_the_summary_its_text_gives() -> None:
    """Every kind of line, the unreadable, batches and lines too long to keep whole among them."""
    from_text, from_message = ProtocolLog(), ProtocolLog()
    for direction, text in LINES:
        from_text.record(direction, text)
        from_message.record(direction, text, None if direction == "garbage" else decoded(text))
    assert [summary(entry) for entry in from_message] == [summary(entry) for entry in from_text]
    assert (from_message.methods, from_message.update_types) == (from_text.methods, from_text.update_types)
    kinds = {entry.kind for entry in from_message}
    assert kinds == {"request", "response", "error", "notification", "unparseable"}


def test_a_decoded_message_is_not_decoded_again() -> None:
    """The log believes the message it is handed: the text is only kept and shown, never read."""
    log = ProtocolLog()
    believed = log.record("in", "not JSON", {"jsonrpc": "2.0", "id": 5, "method": "session/prompt"})
    unread = log.record("in", line(id=6, method="session/prompt"), None)
    answer = log.record("out", "also not JSON", {"jsonrpc": "2.0", "id": 5, "result": {}})
    assert (believed.kind, believed.method, believed.id) == ("request", "session/prompt", "5")
    assert (unread.kind, unread.method, unread.id) == ("unparseable", None, None)
    assert (answer.kind, answer.method) == ("response", "session/prompt")


class Sink:
    """The writing end of a Peer: keeps what was written."""

    def __init__(self) -> None:
        self.data = bytearray()

    def write(self, data: bytes, /) -> None:
        self.data += data

    async def drain(self) -> None:
        pass

    def close(self) -> None:
        pass

    def is_closing(self) -> bool:
        return False


@pytest.mark.asyncio
async def test_the_peer_hands_over_what_it_decoded_in_arrival_order() -> None:
    """The traffic callback sees every line in order; the message is the decoded line (None when it is
    not JSON), or the message sent; a log fed either way summarises alike."""
    reader = asyncio.StreamReader()
    texts: list[tuple[str, str]] = []
    messages: list[tuple[str, str, Any]] = []
    from_text, from_message = ProtocolLog(), ProtocolLog()

    def on_traffic(direction: str, text: str, message: Any) -> None:
        texts.append((direction, text))
        from_text.record(direction, text)
        messages.append((direction, text, message))
        from_message.record(direction, text, message)

    async def on_request(method: str, params: Any) -> Any:
        return {"echo": params}

    peer = Peer(
        reader,
        Sink(),
        on_request=on_request,
        on_notification=lambda method, params: None,
        on_traffic=on_traffic,
        on_garbage=lambda reason, text: None,
    )
    running = asyncio.create_task(peer.run())
    prompt = asyncio.create_task(peer.request("session/prompt", {"prompt": []}))
    await asyncio.sleep(0)
    incoming = [
        update("agent_message_chunk", content={"type": "text", "text": "Hi"}),
        line(id="p1", method="session/request_permission", params={"options": []}),
        "\x1b[?1049l" + update("plan", entries=[]),
        "not json at all",
        '{"id": 1, "method": "x"',
        "[" + update("agent_thought_chunk") + "," + line(id=77, result={}) + "]",
        "null",
        "",
        update("tool_call_update", toolCallId="t", content=BIG),
        line(id=1, result={"stopReason": "end_turn"}) + "\r",
    ]
    reader.feed_data("\n".join(incoming).encode() + b"\n")
    reader.feed_eof()
    assert await asyncio.wait_for(prompt, 5) == {"stopReason": "end_turn"}
    await asyncio.wait_for(running, 5)
    await peer.close()

    assert [(direction, text) for direction, text, _ in messages] == texts
    for direction, text, message in messages:
        if direction == "in":
            assert message == decoded(text), text
        else:
            assert message == json.loads(text)
    assert texts[0] == ("out", line(id=1, method="session/prompt", params={"prompt": []}).replace(" ", ""))
    assert texts[3] == ("in", update("plan", entries=[]))  # the junk before it is not part of the line
    assert [summary(entry) for entry in from_message] == [summary(entry) for entry in from_text]
    answered = sorted(str(entry.method) for entry in from_message if entry.kind == "response")
    assert answered == ["session/prompt", "session/request_permission"]
