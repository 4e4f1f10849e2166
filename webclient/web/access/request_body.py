"""A request's body read before the app reads it (the access guard looks for a form's ``csrf`` field), replayed."""

from __future__ import annotations

from starlette.types import Message, Receive

MAX_FORM_BYTES = 4 * 1024 * 1024
"""A form body read to find its ``csrf`` field (only from browsers that send neither Origin nor Sec-Fetch-Site)."""


async def buffer_body(receive: Receive) -> tuple[bytes | None, Receive]:
    """The whole request body (None when over :data:`MAX_FORM_BYTES`), and a ``receive`` that replays it."""
    messages: list[Message] = []
    size = 0
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request":
            break
        size += len(message.get("body", b""))
        if size > MAX_FORM_BYTES or not message.get("more_body", False):
            break
    body = b"".join(m.get("body", b"") for m in messages if m["type"] == "http.request")

    async def replay() -> Message:
        return messages.pop(0) if messages else await receive()

    return (body if size <= MAX_FORM_BYTES else None), replay
