"""Server-Sent Events read within bounds: an AAP server is as untrusted as an agent.

httpx-sse reads a whole line before it looks at it, so one ``data:`` line of 100 MiB would be held whole (and again
joined). Here the bytes are counted as they come: an event past ``event_bytes``, or a stream past ``turn_bytes``,
stops the reading there, with an error naming the setting, and the caller drops the connection. The format is the
WHATWG one (``\\r\\n``, ``\\r`` or ``\\n`` end a line; ``:`` starts a comment; ``event`` and ``data`` are the fields
AAP uses, the others are ignored).
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from dataclasses import dataclass

from webclient.aap.meta import AapError

MIB = 1024 * 1024
LINE_END = re.compile(rb"\r\n|\r|\n")


class TooBig(AapError):
    """The server sent more than a bound allows; the text names the setting."""


@dataclass(frozen=True, slots=True)
class Bound:
    """A limit in bytes, and the setting that sets it (named when it is reached)."""

    bytes: int
    setting: str

    def __str__(self) -> str:
        return f"{self.bytes / MIB:g} MiB ({self.setting})"


@dataclass(frozen=True, slots=True)
class Sse:
    """One event: its name (``message`` when it had none) and its data lines, joined."""

    name: str
    data: str


class _Event:
    """The event being read: its fields so far, and how many bytes they took."""

    def __init__(self) -> None:
        self.name = ""
        self.data: list[bytes] = []
        self.size = 0

    def take(self, line: bytes) -> Sse | None:
        """Take one line; the event, when ``line`` (blank) ends one."""
        if not line:
            event = None
            if self.name or self.data:
                event = Sse(self.name or "message", b"\n".join(self.data).decode("utf-8", "replace"))
            self.name, self.data, self.size = "", [], 0
            return event
        self.size += len(line)
        if line.startswith(b":"):
            return None
        field, _, value = line.partition(b":")
        value = value.removeprefix(b" ")
        if field == b"event":
            self.name = value.decode("utf-8", "replace")
        elif field == b"data":
            self.data.append(value)
        return None


async def bounded_events(chunks: AsyncIterator[bytes], event: Bound, stream: Bound) -> AsyncIterator[Sse]:
    """The events in ``chunks`` (the response's raw bytes), as they complete.

    Raises:
        TooBig: an event grew past ``event``, or the stream past ``stream``; nothing more is read.
    """
    current, pending, total, after_cr = _Event(), bytearray(), 0, False
    async for chunk in chunks:
        total += len(chunk)
        if total > stream.bytes:
            raise TooBig(f"The AAP server's turn sent over {stream}: the turn was stopped and its connection dropped.")
        if after_cr and chunk.startswith(b"\n"):
            chunk = chunk[1:]  # the \n of a \r\n split between two chunks
        after_cr, start = False, 0
        for end in LINE_END.finditer(chunk):
            line = bytes(pending) + chunk[start : end.start()]
            pending.clear()
            start = end.end()
            after_cr = end.group() == b"\r" and start == len(chunk)
            if (sse := current.take(line)) is not None:
                yield sse
            elif current.size > event.bytes:
                break
        else:
            pending += chunk[start:]
        if current.size + len(pending) > event.bytes:
            raise TooBig(f"The AAP server sent an event over {event}: the turn was stopped and its connection dropped.")
