"""One inotify instance for every session's workspace, so that watching scales with the number of sessions.

A user may hold 128 inotify instances in all (``max_user_instances``); a watchfiles watch is one over a fixed set of
folders, and replacing it as sessions came and went held 128 with 200 sessions starting. `WorkspaceWatcher` holds one
(`webclient.workspace.inotify`) and adds and removes a watch per folder of the union of the subscribers' roots, and
of each folder made or moved in; each changed file goes, in `BATCH_SECONDS` batches, to the subscribers whose roots
hold it. A subscriber looks at the disk (`Subscriber.on_ready`) once its roots are watched, and after a lost event;
if they cannot be (the kernel's limits, a folder gone) it is told why (`Subscriber.on_failure`) and watching is
tried again after `RETRY_SECONDS`, doubling up to `RETRY_MAX_SECONDS`: one session must not stop it for the others.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from webclient.workspace import inotify
from webclient.workspace.inotify import Inotify
from webclient.workspace.watched_folders import IGNORED_DIRS, IGNORED_FILES, covers, files, folders, top_of, union

__all__ = ["IGNORED_DIRS", "Subscriber", "WorkspaceWatcher"]

log = logging.getLogger(__name__)

BATCH_SECONDS = 0.05
"""How long changes are gathered before they go to the subscribers (a write is often several events)."""
RETRY_SECONDS = 1.0
RETRY_MAX_SECONDS = 60.0


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


class WorkspaceWatcher:
    """The single watch of one event loop's sessions; `WorkspaceWatcher.shared` gives it."""

    _by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, WorkspaceWatcher] = weakref.WeakKeyDictionary()

    def __init__(self) -> None:
        self.failure: str | None = None
        self._subscribers: list[Subscriber] = []
        self._inotify: Inotify | None = None
        self._folders: dict[int, Path] = {}  # watch -> folder
        self._watches: dict[Path, int] = {}  # folder -> watch
        self._trees: dict[Path, set[Path]] = {}  # a watched top -> its folders watched (walked, made or moved in)
        self._by_root: dict[Path, list[Subscriber]] | None = None  # made again when the subscribers change
        self._changed: set[Path] = set()
        self._flush: asyncio.TimerHandle | None = None
        self._stale = False
        self._sync: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[None]] = set()
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
        """The folders watched, each with everything under it."""
        return tuple(sorted(self._trees))

    def subscribe(self, subscriber: Subscriber) -> Callable[[], None]:
        """Start telling `subscriber` about its roots; returns the function that stops it."""
        self._subscribers.append(subscriber)
        if not any(os.path.isdir(root) for root in subscriber.roots):
            subscriber.on_failure("its folder does not exist")  # at once; the watch is brought in line in a task
        self._reconfigure()

        def unsubscribe() -> None:
            if subscriber in self._subscribers:
                self._subscribers.remove(subscriber)
                self._reconfigure()

        return unsubscribe

    # -- the set of watched folders ----------------------------------------------------------------------------

    def _reconfigure(self) -> None:
        """Bring the watches in line with the subscribers: those no longer wanted now, new ones in one task at a time
        (however many subscribers come at once)."""
        self._by_root = None
        self._drop_unwanted(set(self._wanted()))
        self._stale = True
        if self._sync is None or self._sync.done():
            self._sync = asyncio.create_task(self._synchronise(), name="workspace-watch")

    def _wanted(self) -> tuple[Path, ...]:
        """The tops to watch (only those not watched yet are looked for on the disk: a watched one that goes away
        says so itself)."""
        return union((root for subscriber in self._subscribers for root in subscriber.roots), self._trees)

    async def _synchronise(self) -> None:
        while self._stale:
            self._stale = False
            try:
                await self._apply(self._wanted())
            except Exception:  # a bug here must not end watching for good
                log.exception("watching the workspaces failed")
                self._retry_later()

    async def _apply(self, wanted: tuple[Path, ...]) -> None:
        missing, tops = False, set(wanted)
        for subscriber in self._subscribers:
            if not covers(tops, subscriber.roots):
                subscriber.covered = False
                missing = True
                subscriber.on_failure("its folder does not exist")
        if missing:
            self._retry_later()  # looked for again, less and less often
        self._drop_unwanted(tops)
        if not wanted:
            return
        if self._inotify is None:
            try:
                self._inotify = Inotify()
            except OSError as error:
                self._failed(wanted, inotify.explain(error))
                return
            asyncio.get_running_loop().add_reader(self._inotify.fd, self._read)
        failed: list[Path] = []
        instance = self._inotify
        for top in wanted:
            if top in self._trees:
                continue
            try:
                folders = await self._watch_tree(top)
            except OSError as error:
                if self._inotify is not instance:
                    return  # closed meanwhile (no one to watch for): the next round starts afresh
                failed.append(top)
                self._failed([top], inotify.explain(error))
                continue
            if self._inotify is not instance:
                return
            self._trees[top] = set(folders)
        if not failed and not missing:
            self.failure = None
            self._retry_delay = RETRY_SECONDS
        for subscriber in self._subscribers:
            if not subscriber.covered and covers(self._trees, subscriber.roots):
                subscriber.covered = True
                subscriber.on_failure(None)  # watching (again)
                subscriber.on_ready()  # for what changed between its baseline and now

    def _drop_unwanted(self, wanted: set[Path]) -> None:
        """Stop watching the folders under no top in ``wanted`` (and the instance, when nothing is wanted)."""
        if not wanted:
            self._close_instance()
            return
        for top in [top for top in self._trees if top not in wanted]:
            for folder in self._trees.pop(top):
                new_top = top_of(folder, wanted)
                if new_top is None:
                    self._unwatch(folder)
                elif new_top in self._trees:
                    self._trees[new_top].add(folder)

    async def _watch_tree(self, top: Path) -> list[Path]:
        """Watch ``top`` and every folder under it (found in a thread: a workspace may have thousands); the folders.

        Raises:
            OSError: ``top`` cannot be watched, or the limit of watches is reached.
        """
        instance = self._inotify
        assert instance is not None
        known = set(self._watches)  # watched for another top already: not undone if this one fails

        def add() -> list[tuple[int, Path]]:
            added: list[tuple[int, Path]] = []
            for folder in folders(top):
                try:
                    added.append((instance.add_watch(folder), folder))
                except OSError as error:
                    if folder == top or error.errno == errno.ENOSPC:
                        for watch, done in added:
                            if done not in known:
                                instance.rm_watch(watch)
                        raise
            return added

        added = await asyncio.to_thread(add)
        if self._inotify is not instance:
            return []
        for watch, folder in added:
            self._folders[watch] = folder
            self._watches[folder] = watch
        return [folder for _, folder in added]

    def _unwatch(self, folder: Path) -> None:
        watch = self._watches.pop(folder, None)
        if watch is not None:
            self._folders.pop(watch, None)
            if self._inotify is not None:
                self._inotify.rm_watch(watch)

    def _close_instance(self) -> None:
        if self._inotify is not None:
            asyncio.get_running_loop().remove_reader(self._inotify.fd)
            self._inotify.close()
            self._inotify = None
        self._folders.clear()
        self._watches.clear()
        self._trees.clear()

    def _failed(self, tops: Iterable[Path], reason: str) -> None:
        tops = list(tops)
        log.warning("watching %s failed: %s", [str(top) for top in tops], reason)
        self.failure = reason
        for subscriber in self._subscribers:
            if any(root.is_relative_to(top) for root in subscriber.roots for top in tops):
                subscriber.covered = False
                subscriber.on_failure(reason)
        self._retry_later()

    def _retry_later(self) -> None:
        """Try again after a while (a new watch has its subscribers rescan what changed meanwhile)."""

        def retry() -> None:
            self._retry = None
            self._reconfigure()

        if self._retry is not None:
            self._retry.cancel()
        self._retry = asyncio.get_running_loop().call_later(self._retry_delay, retry)
        self._retry_delay = min(self._retry_delay * 2, RETRY_MAX_SECONDS)

    # -- events ------------------------------------------------------------------------------------------------

    def _read(self) -> None:
        if self._inotify is None:
            return
        try:
            events = self._inotify.read()
        except OSError as error:
            log.warning("reading the workspace watch failed: %s", error)
            return
        for event in events:
            if event.mask & inotify.IN_Q_OVERFLOW:  # events were lost: everyone looks at the disk
                self._rescan(self._trees)
                continue
            folder = self._folders.get(event.watch)
            if folder is None:
                continue
            if event.mask & inotify.IN_IGNORED:  # the folder went away (or was unwatched)
                self._folders.pop(event.watch, None)
                if self._watches.get(folder) == event.watch:
                    del self._watches[folder]
                if (top := top_of(folder, self._trees)) is not None and top != folder:
                    self._trees[top].discard(folder)  # a build's folders come and go: none is kept once gone
                elif folder in self._trees:  # a subscriber's folder itself: say so
                    for inner in self._trees.pop(folder):
                        self._unwatch(inner)
                    self._reconfigure()
                continue
            if not event.name:
                continue  # the folder itself deleted or moved: its parent's event, or IN_IGNORED, tells
            name = os.fsdecode(event.name)
            path = folder / name
            if event.mask & inotify.IN_ISDIR:
                if name in IGNORED_DIRS:
                    continue
                if event.mask & (inotify.IN_CREATE | inotify.IN_MOVED_TO):
                    task = asyncio.create_task(self._new_folder(path), name="workspace-new-folder")
                    self._tasks.add(task)
                    task.add_done_callback(self._tasks.discard)
                elif event.mask & inotify.IN_MOVED_FROM:  # moved away: what it held is gone from here
                    for inner in [f for f in self._watches if f.is_relative_to(path)]:  # rare: a scan is fine
                        self._unwatch(inner)
                    self._rescan([path])
            elif not IGNORED_FILES.search(name):
                self._changed.add(path)
        if self._changed and self._flush is None:
            self._flush = asyncio.get_running_loop().call_later(BATCH_SECONDS, self._route)

    async def _new_folder(self, folder: Path) -> None:
        """A folder made or moved in: watch it, then report the files it already holds (made before its watch)."""
        try:
            added = await self._watch_tree(folder)
        except OSError as error:
            if error.errno in (errno.ENOENT, errno.ENOTDIR):
                return  # gone already
            self._failed([folder], inotify.explain(error))
            return
        top = top_of(folder, self._trees)
        if top is None:  # its top stopped being watched meanwhile
            for inner in added:
                self._unwatch(inner)
            return
        self._trees[top].update(added)
        self._changed.update(await asyncio.to_thread(files, folder))
        if self._changed and self._flush is None:
            self._flush = asyncio.get_running_loop().call_later(BATCH_SECONDS, self._route)

    def _rescan(self, places: Iterable[Path]) -> None:
        """The subscribers with a root at or under one of ``places`` (or above it) look at the disk."""
        places = list(places)
        for subscriber in self._subscribers:
            if subscriber.covered and any(
                root.is_relative_to(at) or at.is_relative_to(root) for root in subscriber.roots for at in places
            ):
                subscriber.on_ready()

    def _route(self) -> None:
        """Each changed path to the subscribers whose roots hold it (looked up by its parents: any number of them)."""
        self._flush = None
        batch, self._changed = self._changed, set()
        if self._by_root is None:
            self._by_root = {}
            for subscriber in self._subscribers:
                for root in set(subscriber.roots):
                    self._by_root.setdefault(root, []).append(subscriber)
        paths: dict[Subscriber, list[Path]] = {}
        for path in sorted(batch):
            for folder in (path, *path.parents):
                for subscriber in self._by_root.get(folder, ()):
                    mine = paths.setdefault(subscriber, [])
                    if not mine or mine[-1] != path:  # two roots of one subscriber may both hold it
                        mine.append(path)
        for subscriber, mine in paths.items():
            subscriber.on_paths(mine)

    async def close(self) -> None:
        """Stop watching (every subscriber is dropped)."""
        self._subscribers.clear()
        for handle in (self._retry, self._flush):
            if handle is not None:
                handle.cancel()
        self._retry = self._flush = None
        tasks = [task for task in (self._sync, *self._tasks) if task is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._close_instance()
