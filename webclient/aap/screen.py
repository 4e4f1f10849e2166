"""What of an AAP server's stream reaches the session: AAP v3's events, for this session and this turn.

The server is as untrusted as an agent. An event of a name v3 does not have (a v4 server's, a typo, one that
claims to be the client's own ``client_*`` records) is shown once a session and ignored; an event whose data is not
JSON, or that names another session or another turn than the stream's ``turn_start`` did, is shown (once a stream:
a flood of them is not a flood of notices) and ignored, never folded into this session nor answered.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from webclient.aap.client import NOT_JSON
from webclient.aap.turn import TurnEvent

V3_EVENTS = frozenset(
    {"turn_start", "text_delta", "thinking_delta", "text", "thinking", "tool_call", "tool_result", "turn_stop"}
)
NAMES_SHOWN = 10
"""Unknown event names shown in a session; past them, the rest are ignored without a notice."""
QUOTED = 60

Notice = Callable[[str, str, str], None]
"""The host's notice: a level, a title and a detail."""


def _quoted(value: Any) -> str:
    return repr(str(value)[:QUOTED])


class EventScreen:
    def __init__(self, notice: Notice) -> None:
        self._notice = notice
        self._unknown: set[str] = set()
        self._session: str | None = None
        self._turn: str | None = None
        self._shown: set[str] = set()
        """What this stream was already shown for (not JSON, another session, another turn)."""

    def stream_started(self, session_id: str) -> None:
        self._session, self._turn, self._shown = session_id, None, set()

    def admit(self, event: TurnEvent) -> bool:
        """Whether ``event`` is this session's and this turn's, to fold; if not, the person is told (once)."""
        if event.name == NOT_JSON:
            title = f"The AAP server sent a {_quoted(event.data.get('event'))} event whose data is not JSON"
            self._once("not-json", title, f"It was ignored. It began: {event.data.get('data')}")
            return False
        if event.name not in V3_EVENTS:
            if event.name not in self._unknown and len(self._unknown) < NAMES_SHOWN:
                self._unknown.add(event.name)
                title = f"The AAP server sent an event this client does not know: {_quoted(event.name)}"
                self._notice("info", title, f"It was ignored (AAP v3 has {', '.join(sorted(V3_EVENTS))}).")
            return False
        session = event.data.get("sessionId")
        if session is not None and session != self._session:
            title = f"The AAP server sent an event for another session ({_quoted(session)})"
            self._once(
                "session", title, f"The {event.name} event was ignored: this session is {_quoted(self._session)}."
            )
            return False
        turn = event.data.get("turnId")
        if event.name == "turn_start" and turn is not None and self._turn is None:
            self._turn = str(turn)
        elif turn is not None and self._turn is not None and str(turn) != self._turn:
            title = f"The AAP server sent an event for another turn ({_quoted(turn)})"
            self._once("turn", title, f"The {event.name} event was ignored: this turn is {_quoted(self._turn)}.")
            return False
        return True

    def _once(self, what: str, title: str, detail: str) -> None:
        if what not in self._shown:
            self._shown.add(what)
            self._notice("warning", title, detail)
