"""What a session page holds from its render until its socket connects, so the socket starts from there.

A page rendered by ``GET /sessions/ID`` already holds its window of the thread, its regions and its messages as
rendered. Its socket used to start with a resync that rendered all of that again (87 kB for a 100-entry window).
Instead the page is given a *stamp* (in its socket's URL): the server keeps what the page holds under it, and
notes every change of the session from the render on. The socket that connects with the stamp takes that record
(once: a reconnect's page may have missed frames, so it gets the resync) and its first frame is only what changed
since the render. A stamp unknown here (another server, or the record expired or let go) gets the resync.

The cost is a watcher per page between its render and its socket (usually well under a second): nothing on the
view model's hot path. Records are bounded in number (``PageStamps.MAX``), in age (``PageStamps.TTL``) and in the
changes they note (``PageHolds.CHANGES``: past that the page gets the resync).
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from starlette.requests import HTTPConnection

from webclient.render.message_docs import Progress
from webclient.session.core import Session
from webclient.viewmodel.entries import Entry
from webclient.viewmodel.events import Change

STAMP_CHARS = 64
"""The longest stamp a socket's URL is read for (a stamp made here has 22 characters)."""


@dataclass(eq=False)
class PageHolds:
    """One rendered page: the entries it holds (and how much of each message), and the changes since."""

    session: Session
    shown: dict[int, Progress | None]
    """The entries the page holds by seq, with a message's rendering (None: the page gets it whole when it changes)."""
    newest: int
    """The newest seq of the thread when the page was rendered: a later one is a new entry."""
    oldest: int
    """The seq of the page's first entry (its "Show earlier" asks for the entries before it)."""
    latest: int
    """The seq of the page's last entry: below ``newest`` when the page opened on an older entry (a link to it),
    its "Show later" asking for the entries after it."""
    made: float
    dirty: dict[Change, None] = field(default_factory=dict)
    """The parts of the session that changed since the render, in order."""
    overflowed: bool = False
    """More changed than ``CHANGES``: the page gets the resync."""
    stop: Callable[[], None] = lambda: None

    CHANGES = 1000
    """Changed parts noted at most (a live view's ``RESYNC_AT``)."""

    def mark(self, change: Change) -> None:
        """Note a change (the session calls this for every change until the socket takes over: keep it trivial)."""
        if not self.overflowed:
            self.dirty[change] = None
            if len(self.dirty) > self.CHANGES:
                self.overflowed = True
                self.dirty.clear()


class PageStamps:
    """The pages rendered whose socket has not connected yet, by stamp (one per server)."""

    TTL = 60.0
    """Seconds a page's record is kept for its socket."""
    MAX = 256
    """Records kept at most: past that the oldest goes (its page, should it connect, gets the resync)."""

    def __init__(self) -> None:
        self._held: dict[str, PageHolds] = {}

    def __len__(self) -> int:
        return len(self._held)

    @staticmethod
    def new_stamp() -> str:
        """A page's stamp, put in its socket's URL as it renders (`keep` then records what the page holds)."""
        return secrets.token_urlsafe(16)

    def keep(self, stamp: str, session: Session, window: Iterable[Entry], shown: dict[int, Progress | None]) -> None:
        """Keep what the page of ``stamp`` holds: ``session``'s ``window`` just rendered (``shown``: its messages'
        renderings, by seq); watch the session from now on. Call it with no await since the render: nothing may
        change in between.

        A message the page shows as text only (a first paint leaves big ones unrendered: `MessageDocs.for_page`) is
        noted as changed, so the socket brings it as Markdown."""
        now = time.monotonic()
        self._forget(now)
        entries = list(window)
        last = session.thread.last
        holds = PageHolds(
            session,
            shown={entry.seq: _held(shown.get(entry.seq)) for entry in entries},
            newest=last.seq if last is not None else 0,
            oldest=entries[0].seq if entries else 0,
            latest=entries[-1].seq if entries else 0,
            made=now,
        )
        for entry in entries:
            if entry.seq in shown and holds.shown[entry.seq] is None:
                holds.dirty[entry.change] = None
        holds.stop = session.watch(holds.mark)
        self._held[stamp] = holds

    def claim(self, stamp: str | None, session: Session) -> PageHolds | None:
        """What the page of ``stamp`` holds, once, if it is a page of this very ``session`` (not of one released and
        rebuilt since) still kept and not overflowed; None: the page gets the resync. The caller stops its watcher
        (``stop``) once it watches the session itself."""
        holds = self._held.pop(stamp, None) if stamp and len(stamp) <= STAMP_CHARS else None
        if holds is None:
            return None
        if holds.session is not session or holds.overflowed or time.monotonic() - holds.made > self.TTL:
            holds.stop()
            return None
        return holds

    def release(self, session_id: str) -> None:
        """Let go of the records of a session the registry let go of (a record would keep it in memory)."""
        for stamp in [stamp for stamp, holds in self._held.items() if holds.session.id == session_id]:
            self._held.pop(stamp).stop()

    def _forget(self, now: float) -> None:
        """Let go of the records too old, and of the oldest past ``MAX`` (oldest first: the dict is in order made)."""
        while self._held:
            stamp, holds = next(iter(self._held.items()))
            if now - holds.made <= self.TTL and len(self._held) < self.MAX:
                break
            del self._held[stamp]
            holds.stop()


def _held(progress: Progress | None) -> Progress | None:
    """What a page holds of a message rendered as ``progress``: None when it holds its text only (shown as text by a
    first paint, not rendered yet), which a later change must replace whole."""
    if progress is not None and not progress.streaming and progress.caught_up == 0 and progress.chars > 0:
        return None
    return progress


def page_stamps(conn: HTTPConnection) -> PageStamps:
    stamps: PageStamps = conn.app.state.page_stamps
    return stamps
