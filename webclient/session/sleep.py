"""An idle agent put to sleep: stopped once it has had no turn, no open question and no page watching for a while
(``WEBCLIENT_AGENT_IDLE_MINUTES``), and woken as Resume wakes it, by the next prompt, Resume, or a page opened.

One timer per session at most, armed only while no page watches, and due when the session's last change is
``after`` seconds old: nothing polls the sessions. When it is due and the session is busy, it is armed again.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from webclient.config import Settings


class IdleSleep:
    """When a session's agent falls asleep: the pages watching it, its last change, and the one timer."""

    def __init__(self, idle: Callable[[], bool | None], fall_asleep: Callable[[], None]) -> None:
        self.idle = idle
        """Whether the agent may sleep now (no turn, no open question, nothing queued); None: it never may now (it
        does not run, or could not be woken as it was), and the timer waits to be armed again (the agent ready)."""
        self.fall_asleep = fall_asleep
        self.after = 0.0
        """Seconds without a change before it sleeps; 0: never (`webclient.agents.manager` sets it from settings)."""
        self.without_resume = False
        """The operator lets this agent sleep although it can take up no session (it wakes in a new one)."""
        self.pages = 0
        """The page sockets open on the session: while there is one, it does not sleep."""
        self.last_active = time.monotonic()
        self._timer: asyncio.TimerHandle | None = None

    def configure(self, settings: Settings, agent_name: str) -> None:
        """Sleep after the settings' idle time; an agent that can take up no session only if the operator named it
        (``WEBCLIENT_SLEEP_WITHOUT_RESUME``)."""
        self.after = settings.agent_idle_minutes * 60
        self.without_resume = bool({"*", agent_name} & set(settings.sleep_without_resume))

    def active(self) -> None:
        """Something changed in the session (a turn, a question, the agent's state): the idle time starts again."""
        self.last_active = time.monotonic()

    def page_opened(self) -> None:
        self.pages += 1
        self.cancel()

    def page_closed(self) -> None:
        self.pages = max(0, self.pages - 1)
        if self.pages == 0:
            self.arm()

    def arm(self) -> None:
        """Be due when the session has been quiet for ``after`` seconds, unless a page watches or it is armed."""
        if self.after <= 0 or self.pages or self._timer is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop (a session built outside the server): nothing runs that could sleep
            return
        delay = max(0.0, self.after - (time.monotonic() - self.last_active))
        self._timer = loop.call_later(delay, self._due)

    def cancel(self) -> None:
        timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()

    def _due(self) -> None:
        self._timer = None
        if self.pages:
            return
        if time.monotonic() - self.last_active < self.after:
            self.arm()  # it changed meanwhile: due again at the new quiet time
        elif (idle := self.idle()) is None:
            return
        elif idle:
            self.fall_asleep()
        else:
            self.active()  # busy (a turn, a question) without a change for a while: look again later
            self.arm()
