"""Server-Sent Events read within bounds (`webclient.aap.sse`): the format as the WHATWG spec has it, however the
bytes are cut into chunks, and reading stopped at an event's or a stream's bound."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from webclient.aap.sse import Bound, Sse, TooBig, bounded_events

pytestmark = pytest.mark.asyncio

EVENT, STREAM = Bound(1000, "EVENT_SETTING"), Bound(10_000, "STREAM_SETTING")
WIRE = (
    b": a comment\r\nevent: turn_start\r\ndata: {}\r\n\r\n"
    b'event: text_delta\rdata: {"delta":\rdata:  "hi"}\r\r'
    b"data: nameless\n\nevent: turn_stop\nretry: 5\nid: 1\ndata: {}\n\n"
)


async def chunks(data: bytes, size: int) -> AsyncIterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start : start + size]


async def read(data: bytes, size: int, event: Bound = EVENT, stream: Bound = STREAM) -> list[Sse]:
    return [sse async for sse in bounded_events(chunks(data, size), event, stream)]


@pytest.mark.parametrize("size", [1, 2, 3, 7, 1000])
async def test_events_are_read_however_the_bytes_are_cut(size: int) -> None:
    assert await read(WIRE, size) == [
        Sse("turn_start", "{}"),
        Sse("text_delta", '{"delta":\n "hi"}'),
        Sse("message", "nameless"),
        Sse("turn_stop", "{}"),
    ]


@pytest.mark.parametrize(
    "wire",
    [b"data: " + b"a" * 2000 + b"\n\n", b"event: x\n" + b"data: aaaaaaaaaa\n" * 200 + b"\n"],
    ids=["one-line", "many-lines"],
)
async def test_an_event_past_its_bound_stops_the_reading(wire: bytes) -> None:
    with pytest.raises(TooBig, match=r"an event over 0.000953674 MiB \(EVENT_SETTING\)"):
        await read(wire + b"data: later\n\n", 64)


async def test_a_stream_past_its_bound_stops_the_reading() -> None:
    with pytest.raises(TooBig, match=r"turn sent over .* MiB \(STREAM_SETTING\)"):
        await read(b"data: small\n\n" * 2000, 64)
