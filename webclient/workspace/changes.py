"""Every file a session changed, whether through the client (``fs/write_text_file``) or directly on disk.

At the start of a session the workspace is read once (the *baseline*); then the server's one file watch
(`webclient.workspace.watcher.WorkspaceWatcher`) reports every path that changes. A touched path is compared
with its baseline off the event loop, and the result kept as a :class:`ChangedFile`, so the page can list the
changes at any moment without reading a disk. A file changed and then restored drops out of the list.

When the watch is (re)placed, or when watching fails, the workspace is *rescanned*: walked and each file's
size and modification time compared with what was last seen, so only files that differ are read again. While
watching fails the Changes view says so and rescans whenever it is opened.

The baseline lives in memory, and a server that starts again reads the disk anew: so each file's original is told
(`ChangeTracker.on_original`) the first time it is listed, for the session's journal, and a session rebuilt from its
journal hands them back (`ChangeTracker.keep`): the changes made before the restart are listed again, and stay
listed when Resume reads a new baseline.

Limits keep a big checkout from costing the server its memory: files over ``MAX_FILE_BYTES``, or past
``MAX_FILES`` / ``MAX_TOTAL_BYTES``, are remembered by size and mtime only (their change is listed, but
cannot be shown as a diff). Directories no one wants to review (``.git``, ``node_modules``, virtualenvs,
caches) are neither read nor watched.
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from webclient.workspace.files import NotText, decode
from webclient.workspace.patience import changed_lines
from webclient.workspace.watcher import IGNORED_DIRS, Subscriber, WorkspaceWatcher

log = logging.getLogger(__name__)

MAX_FILE_BYTES = 1024 * 1024
MAX_FILES = 20_000
MAX_TOTAL_BYTES = 64 * 1024 * 1024

ChangeStatus = Literal["added", "modified", "deleted"]


@dataclass(frozen=True, slots=True)
class Fingerprint:
    """A baseline file too big to keep: enough to tell that it changed, not how."""

    size: int
    mtime_ns: int


Baseline = bytes | Fingerprint
Signature = tuple[int, int]
"""A file's size and modification time (ns): when both are unchanged, the file is not read again on a rescan."""


@dataclass(frozen=True, slots=True)
class ChangedFile:
    """One changed file; ``added``/``removed`` are line counts, None when it is not text or too big; ``estimated``:
    the file was too repetitive to count exactly in bounded time (`changed_lines`), so they may be too many."""

    path: Path
    status: ChangeStatus
    added: int | None
    removed: int | None
    estimated: bool = False


def _walk(root: Path, hides: Callable[[Path], bool]) -> Iterator[Path]:
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in IGNORED_DIRS and not hides(Path(folder, d)))
        for name in sorted(files):
            if not hides(Path(folder, name)):
                yield Path(folder, name)


def _read(path: Path, limit: int) -> tuple[Baseline, Signature] | None:
    """A regular file's bytes (or fingerprint past ``limit``) and signature; None if it is not there or not a
    regular file."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):  # before fdopen, which refuses a directory with an exception
        os.close(fd)
        return None
    signature = (info.st_size, info.st_mtime_ns)
    with os.fdopen(fd, "rb") as file:
        if info.st_size > limit:
            return Fingerprint(info.st_size, info.st_mtime_ns), signature
        return file.read(limit + 1), signature


def _signature(path: Path) -> Signature | None:
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return (info.st_size, info.st_mtime_ns) if stat.S_ISREG(info.st_mode) else None


def changed_file(path: Path, status: ChangeStatus, old: bytes | None, new: bytes | None) -> ChangedFile:
    """The change with its added and removed lines (None when either side is not text): counted as the diff view
    lines them up (a patience diff), bounded on files of many identical lines, where difflib alone was quadratic."""
    try:
        old_lines = decode(old).text.splitlines() if old is not None else []
        new_lines = decode(new).text.splitlines() if new is not None else []
    except NotText:
        return ChangedFile(path, status, None, None)
    counts = changed_lines(old_lines, new_lines)
    return ChangedFile(path, status, counts.added, counts.removed, counts.estimated)


class ChangeTracker:
    """The baseline of a workspace and the files changed since, kept current by the server's file watch."""

    def __init__(
        self,
        roots: Sequence[Path],
        on_change: Callable[[], None],
        watcher: WorkspaceWatcher | None = None,
        hides: Callable[[Path], bool] = lambda path: False,
    ) -> None:
        self.roots = tuple(roots)
        self.hides = hides
        """Whether a path is the server's own (`Workspace.hides`): never read, listed or compared."""
        self.on_change = on_change
        self.baseline: dict[Path, Baseline] = {}
        self.incomplete = False
        """True when the limits stopped the baseline from holding every file's contents."""
        self.changed: dict[Path, ChangedFile] = {}
        self.not_watching: str | None = None
        """Why changes on disk are not seen as they happen (None while they are)."""
        self.on_original: Callable[[Path, bytes | None], None] | None = None
        """Told a file's original (None: it did not exist) the first time it is listed as changed."""
        self.kept: dict[Path, bytes | None] = {}
        """Originals a new baseline must not replace: from the journal, or told already."""
        self._watcher = watcher
        self._unsubscribe: Callable[[], None] | None = None
        self._seen: dict[Path, Signature] = {}
        self._pending: set[Path] = set()
        self._refresh: asyncio.Task[None] | None = None
        self._rescan: asyncio.Task[None] | None = None

    # -- lifecycle ---------------------------------------------------------------------------------

    async def start(self) -> None:
        """Read the baseline (in a thread), then have the server's watch report changes under the roots."""
        await asyncio.to_thread(self._take_baseline)
        self._apply_kept()
        watcher = self._watcher or WorkspaceWatcher.shared()
        self._unsubscribe = watcher.subscribe(
            Subscriber(self.roots, self.touch, self._start_rescan, self._watching_failed)
        )
        self.touch(list(self.kept))

    def keep(self, originals: dict[Path, bytes | None]) -> None:
        """Files as they were when the session began, from its journal (an earlier server's baseline): the changes
        are compared with them from now on, including after a new baseline (Resume)."""
        self.kept.update(originals)
        self._apply_kept()
        self.touch(list(originals))

    def rebase(self, path: Path, content: bytes | None) -> None:
        """Compare ``path`` with ``content`` from now on (None: as a file that did not exist): the person kept part of
        the change (`webclient.session.review`), which leaves the review. Kept over a new baseline (Resume) too."""
        self.kept[path] = content
        self._apply_kept()
        self.touch([path])

    def _apply_kept(self) -> None:
        for path, original in self.kept.items():
            if original is None:
                self.baseline.pop(path, None)
            else:
                self.baseline[path] = original
            self._seen.pop(path, None)  # read again at the next rescan

    def _take_baseline(self) -> None:
        total = 0
        for root in self.roots:
            for path in _walk(root, self.hides):
                if len(self.baseline) >= MAX_FILES:
                    self.incomplete = True
                    return
                room = min(MAX_FILE_BYTES, max(0, MAX_TOTAL_BYTES - total))
                read = _read(path, room)
                if read is None:
                    continue
                content, self._seen[path] = read
                if isinstance(content, Fingerprint):
                    self.incomplete = True
                else:
                    total += len(content)
                self.baseline[path] = content

    def _watching_failed(self, reason: str | None) -> None:
        if reason != self.not_watching:
            self.not_watching = reason
            self.on_change()

    async def close(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        for task in (self._refresh, self._rescan):
            if task is not None:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)

    async def look_if_not_watching(self) -> None:
        """While changes on disk are not seen as they happen, look at the disk now (the Changes view opens)."""
        if self.not_watching is not None:
            await self._rescan_disk()

    def _start_rescan(self) -> None:
        if self._rescan is None or self._rescan.done():
            self._rescan = asyncio.create_task(self._rescan_disk(), name="workspace-rescan")

    async def _rescan_disk(self) -> None:
        """Touch every file whose size or modification time differs from what was last seen, and every file
        that appeared or went away."""
        known = dict(self._seen)
        # A baseline cut short by MAX_FILES holds the first files of the same sorted walk: past them, a file
        # missing from `known` was there before rather than added, so the walk stops where the baseline did.
        limit = MAX_FILES if self.incomplete else None

        def differing() -> list[Path]:
            found: list[Path] = []
            present: set[Path] = set()
            for root in self.roots:
                for path in _walk(root, self.hides):
                    if limit is not None and len(present) >= limit:
                        break
                    present.add(path)
                    if _signature(path) != known.get(path):
                        found.append(path)
            # Not walked (gone, or past the limit): compared again, which finds what was deleted.
            return found + [path for path in known if path not in present]

        self.touch(await asyncio.to_thread(differing))
        while self._refresh is not None and not self._refresh.done():
            await asyncio.shield(self._refresh)

    # -- changes -----------------------------------------------------------------------------------

    def note_write(self, path: Path) -> None:
        """A write through the client: list it now rather than after the watcher's debounce."""
        self.touch([path])

    def touch(self, paths: Iterator[Path] | Sequence[Path]) -> None:
        """Re-compare these paths with their baseline, in the background."""
        self._pending.update(path for path in paths if not self.hides(path))
        if self._pending and (self._refresh is None or self._refresh.done()):
            self._refresh = asyncio.create_task(self._compare_pending(), name="workspace-compare")

    async def _compare_pending(self) -> None:
        while self._pending:
            paths, self._pending = self._pending, set()
            results = await asyncio.to_thread(lambda: [(p, *self._compare(p)) for p in paths])
            changed = False
            for path, result, signature in results:
                if signature is None:
                    self._seen.pop(path, None)
                else:
                    self._seen[path] = signature
                if result is None:
                    changed |= self.changed.pop(path, None) is not None
                elif self.changed.get(path) != result:
                    self.changed[path] = result
                    changed = True
                    self._tell_original(path)
            if changed:
                self.on_change()

    def _tell_original(self, path: Path) -> None:
        if path in self.kept:
            return
        before = self.baseline.get(path)
        if isinstance(before, Fingerprint):
            return  # too big to keep: listed while this server runs, not after a restart
        self.kept[path] = before
        if self.on_original is not None:
            self.on_original(path, before)

    def _compare(self, path: Path) -> tuple[ChangedFile | None, Signature | None]:
        """The change of `path` against its baseline (None: unchanged), and its signature now (None: gone)."""
        before = self.baseline.get(path)
        read = _read(path, MAX_FILE_BYTES)
        if read is None:
            if before is None:
                return None, None
            old = before if isinstance(before, bytes) else None
            if old is None:
                return ChangedFile(path, "deleted", None, None), None
            return changed_file(path, "deleted", old, None), None
        now, signature = read
        if before is None:
            if not isinstance(now, bytes):
                return ChangedFile(path, "added", None, None), signature
            return changed_file(path, "added", None, now), signature
        if before == now:
            return None, signature
        if isinstance(before, bytes) and isinstance(now, bytes):
            return changed_file(path, "modified", before, now), signature
        return ChangedFile(path, "modified", None, None), signature

    def current(self, path: Path) -> Baseline | None:
        """What ``path`` holds now, read at once (a fingerprint past ``MAX_FILE_BYTES``; None: it is not there)."""
        read = _read(path, MAX_FILE_BYTES)
        return read[0] if read is not None else None

    def files(self) -> list[ChangedFile]:
        """The changed files, in path order."""
        return sorted(self.changed.values(), key=lambda change: str(change.path))

    def original(self, path: Path) -> bytes | None:
        """The file as it was when the session began (None: it did not exist, or was too big to keep)."""
        before = self.baseline.get(path)
        return before if isinstance(before, bytes) else None
