"""One turn's stream read as an untrusted server's: within its time (``RemoteLimits.turn_seconds``), screened
(`webclient.aap.screen`), each event admitted recorded and shown as it comes. Its bytes are bounded where they are
read (`webclient.aap.client`); a bound reached, or the time up, ends the turn with a sentence naming the setting,
and the connection is dropped (the stream's generator is closed, whatever stopped it: a bound, Stop, the time)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from webclient.aap.client import AapClient
from webclient.aap.meta import AapError
from webclient.aap.screen import EventScreen
from webclient.aap.turn import TurnEvent, TurnRecord


async def read_turn(
    client: AapClient, session_id: str, body: dict[str, Any], screen: EventScreen, show: Callable[[TurnEvent], None]
) -> TurnRecord:
    """``POST /sessions/:id/turns`` and its events until the stream ends.

    Raises:
        AapError: the server refused, broke off, sent past a bound, or went on past the turn's time.
    """
    record = TurnRecord()
    screen.stream_started(session_id)
    seconds = client.limits.turn_seconds
    try:
        async with asyncio.timeout(seconds), contextlib.aclosing(client.turn(session_id, body)) as events:
            async for event in events:
                if screen.admit(event):
                    record.take(event)
                    show(event)
    except TimeoutError:
        raise AapError(
            f"The AAP server's turn went on past {seconds / 60:g} minutes (WEBCLIENT_AAP_TURN_MINUTES): it was "
            "stopped and its connection dropped."
        ) from None
    return record
