"""One file watch for every session's workspace, so that watching scales with the number of sessions.

Each watchfiles watch is one inotify instance, and a user may hold 128 of them
(``/proc/sys/fs/inotify/max_user_instances``, shared by all their processes): one watch per session stopped
working at about 125 sessions, silently. `WorkspaceWatcher` watches the union of the subscribers' roots
(a root inside another is covered by it) with a single watch and hands each changed path to the subscribers
whose roots hold it.

When the union changes (a session with a new folder starts, the last one on a folder ends) the watch is
replaced without a gap: the new watch starts while the old one still runs, and the old one stops once the
new one is in place (its first report, at the latest after `READY_SECONDS`). Subscribers that joined since
the previous watch was in place are then told to look at the disk (`Subscriber.on_ready`), for what changed
between their baseline and the watch. If the watch fails (the kernel's limits, a folder gone, a file name
that is not UTF-8, which watchfiles cannot report), every subscriber is told why (`Subscriber.on_failure`),
and the watch is tried again after `RETRY_SECONDS` (doubling up to `RETRY_MAX_SECONDS`) or at the next change
of subscribers: one session's odd file must not stop watching for every other session.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import weakref
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from watchfiles import Change, DefaultFilter, awatch

__all__ = ["IGNORED_DIRS", "Subscriber", "WorkspaceWatcher"]

log = logging.getLogger(__name__)

IGNORED_DIRS = frozenset({*DefaultFilter.ignore_dirs, "venv", ".ruff_cache", ".cache"})
READY_SECONDS = 1.0
"""The longest wait for a report of a new watch (a change, or else a timeout): once it comes, the watch is in place."""
RETRY_SECONDS = 1.0
RETRY_MAX_SECONDS = 60.0


class _Filter(DefaultFilter):
    ignore_dirs = tuple(IGNORED_DIRS)


@dataclass(eq=False)
class Subscriber:
    """What one session's change tracker wants to hear about."""

    roots: tuple[Path, ...]
    on_paths: Callable[[list[Path]], None]
    """Paths that changed under `roots` (files added, modified or deleted)."""
    on_ready: Callable[[], None]
    """A watch covering `roots` is now in place: look at the disk for what changed before it was."""
    on_failure: Callable[[str | None], None]
    """Watching stopped, and why (None: it works again)."""
    covered: bool = field(default=False)


def _union(roots: Iterable[Path]) -> tuple[Path, ...]:
    """The folders to watch: every root that exists and is not inside another."""
    kept: list[Path] = []
    for root in sorted(set(roots), key=lambda path: len(path.parts)):
        if not any(root.is_relative_to(outer) for outer in kept) and os.path.isdir(root):
            kept.append(root)
    return tuple(sorted(kept))


def _covers(watched: Iterable[Path], roots: Iterable[Path]) -> bool:
    return any(root.is_relative_to(top) for root in roots for top in watched)


def _reason(error: BaseException) -> str:
    text = str(error) or type(error).__name__
    if "limit" in text.lower() or getattr(error, "errno", None) in (errno.EMFILE, errno.ENOSPC):  # inotify's
        return f"the system's limit on file watches was reached: {text}"
    return text


class _Watch:
    """One watchfiles watch over a fixed set of folders."""

    def __init__(self, owner: WorkspaceWatcher, roots: tuple[Path, ...], subscribers: Sequence[Subscriber]) -> None:
        self.roots = roots
        self.subscribers = list(subscribers)  # those it covers once it is in place
        self.stop_event = asyncio.Event()
        self.ready = False
        self.task = asyncio.create_task(owner._run(self), name="workspace-watch")


class WorkspaceWatcher:
    """The single watch of one event loop's sessions; `WorkspaceWatcher.shared` gives it."""

    _by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, WorkspaceWatcher] = weakref.WeakKeyDictionary()

    def __init__(self) -> None:
        self.failure: str | None = None
        self._subscribers: list[Subscriber] = []
        self._current: _Watch | None = None
        self._previous: list[_Watch] = []
        self._retry_delay = RETRY_SECONDS
        self._retry: asyncio.TimerHandle | None = None

    @classmethod
    def shared(cls) -> WorkspaceWatcher:
        """The watcher of the running event loop (made on first use): all sessions of a server share it."""
        loop = asyncio.get_running_loop()
        watcher = cls._by_loop.get(loop)
        if watcher is None:
            watcher = cls._by_loop[loop] = cls()
        return watcher

    @property
    def watched(self) -> tuple[Path, ...]:
        """The folders the current watch covers."""
        return self._current.roots if self._current is not None else ()

    def subscribe(self, subscriber: Subscriber) -> Callable[[], None]:
        """Start telling `subscriber` about its roots; returns the function that stops it."""
        self._subscribers.append(subscriber)
        self._reconfigure()

        def unsubscribe() -> None:
            if subscriber in self._subscribers:
                self._subscribers.remove(subscriber)
                self._reconfigure()

        return unsubscribe

    def _reconfigure(self) -> None:
        wanted = _union(root for subscriber in self._subscribers for root in subscriber.roots)
        for subscriber in self._subscribers:
            if not _covers(wanted, subscriber.roots):
                subscriber.on_failure("its folder does not exist")
        current = self._current
        if current is not None and current.roots == wanted and not current.task.done():
            for subscriber in self._subscribers:
                if subscriber.covered or subscriber in current.subscribers:
                    continue
                if current.ready:
                    subscriber.covered = True
                    subscriber.on_ready()  # for what changed between its baseline and now
                else:
                    current.subscribers.append(subscriber)
            return
        if current is not None:
            self._previous.append(current)  # stopped once the new watch is in place: no gap
        self._current = _Watch(self, wanted, self._subscribers) if wanted else None
        if self._current is None:
            self._stop_previous()

    def _stop_previous(self) -> None:
        for watch in self._previous:
            watch.stop_event.set()
        self._previous.clear()

    async def _run(self, watch: _Watch) -> None:
        try:
            async for batch in awatch(
                *watch.roots,
                watch_filter=_Filter(),
                stop_event=watch.stop_event,
                debounce=150,
                step=30,
                rust_timeout=int(READY_SECONDS * 1000),
                yield_on_timeout=True,
            ):
                if not watch.ready:
                    watch.ready = True
                    self._in_place(watch)
                if batch:
                    self._route(Path(path) for change, path in batch if change != Change.added or os.path.isfile(path))
        except Exception as error:
            if watch.stop_event.is_set():
                return
            reason = _reason(error)
            log.warning("watching %s failed: %s", [str(root) for root in watch.roots], reason)
            if watch is self._current:
                self.failure = reason
                for subscriber in self._subscribers:
                    subscriber.covered = False
                    subscriber.on_failure(reason)
                self._retry_later(watch)

    def _retry_later(self, failed: _Watch) -> None:
        """Try the failed watch again after a while (a new watch rescans what changed meanwhile)."""

        def retry() -> None:
            self._retry = None
            if self._current is failed:
                self._current = None
                self._reconfigure()

        if self._retry is not None:
            self._retry.cancel()
        self._retry = asyncio.get_running_loop().call_later(self._retry_delay, retry)
        self._retry_delay = min(self._retry_delay * 2, RETRY_MAX_SECONDS)

    def _in_place(self, watch: _Watch) -> None:
        if watch is not self._current:
            return
        self._stop_previous()
        self.failure = None
        self._retry_delay = RETRY_SECONDS
        for subscriber in self._subscribers:
            if _covers(watch.roots, subscriber.roots):
                subscriber.on_failure(None)  # watching (again)
        for subscriber in watch.subscribers:
            if subscriber in self._subscribers and not subscriber.covered:
                subscriber.covered = True
                subscriber.on_ready()

    def _route(self, paths: Iterable[Path]) -> None:
        batch = list(paths)
        for subscriber in list(self._subscribers):
            mine = [path for path in batch if any(path.is_relative_to(root) for root in subscriber.roots)]
            if mine:
                subscriber.on_paths(mine)

    async def close(self) -> None:
        """Stop watching (every subscriber is dropped)."""
        self._subscribers.clear()
        if self._retry is not None:
            self._retry.cancel()
            self._retry = None
        watches = [w for w in (self._current, *self._previous) if w is not None]
        self._current = None
        self._previous.clear()
        for watch in watches:
            watch.stop_event.set()
        await asyncio.gather(*(watch.task for watch in watches), return_exceptions=True)
