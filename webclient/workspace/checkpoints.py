"""Checkpoints: a session's folder as it was before each prompt, kept in a git object store of the session's own.

The store is a bare repository in the server's data folder (``<data>/checkpoints/<session id>.git``) with the
session's folder as its work tree and an index of its own, so a snapshot after the first costs only the files that
changed (git's index compares sizes and times first). Untracked files are included; the folder's ``.gitignore``
files are honoured; its own ``.git`` is never read or written (git never takes a path named ``.git``, and nested
repositories are left out). Files over a size bound and binary files (a NUL in their first 8000 bytes, as git
decides) are left out and named (`Snapshot.skipped`): a restore leaves them as they are.

The folder is untrusted: git runs with no system or global configuration (``HOME`` is the store's folder), no hooks,
no fsmonitor, no external diff or text conversion, each call bounded in time and output. A restore writes and
deletes through the workspace's path checks (`webclient.workspace.paths.Workspace`), never through a symlink that
leads out of the folder. Everything here blocks: the session runs it in a thread.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from webclient.workspace.checkpoint_files import delete_file, read_bounded, write_file
from webclient.workspace.checkpoint_git import (
    HARDENING,
    CheckpointFailed,
    check_id,
    escaped,
    names,
    nul,
    quoted,
    run_git,
)
from webclient.workspace.path_errors import PathRefused
from webclient.workspace.paths import Workspace

BINARY_PROBE = 8000
"""Bytes of a file read to tell a binary one (git's own heuristic: a NUL among its first 8000)."""
PACK_FROM = 200
"""New files from which a snapshot packs their contents first (`CheckpointStore._pack`)."""
FIRST = "refs/checkpoints/first"
"""The commit whose tree the first snapshot's index is read from (`CheckpointStore._pack`)."""
MAX_PACKED = 256 * 1024 * 1024
"""Bytes of new files packed in one go at most; the rest are written as loose objects."""
MAX_SKIPPED_NAMED = 20
"""Skipped files named in a snapshot's record; the count says how many there were."""


@dataclass(frozen=True)
class Snapshot:
    """A snapshot's tree, and what it left out (``skipped``: a few of their names, ``skipped_count``: all)."""

    tree: str
    files: int
    skipped: tuple[str, ...] = ()
    skipped_count: int = 0


@dataclass(frozen=True)
class FileChange:
    """A file that differs between a checkpoint and now, as a restore sees it: ``added`` since (a restore deletes
    it), ``modified`` or ``deleted`` since (a restore writes it back)."""

    status: str
    path: str


@dataclass
class Restored:
    """What a restore did: files written back, files deleted, and those it could not touch (with why)."""

    written: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)


_STATUS = {"A": "added", "M": "modified", "T": "modified", "D": "deleted"}


class CheckpointStore:
    """One session's checkpoints: `snapshot` before a prompt, `changes_since` one of them, `restore` it."""

    def __init__(
        self, git_dir: Path, work_tree: Path, max_file_bytes: int, timeout: float = 60.0, hidden: Sequence[Path] = ()
    ) -> None:
        self.git_dir = git_dir
        self.work_tree = Path(os.path.realpath(work_tree))
        self.max_file_bytes = max_file_bytes
        self.timeout = timeout
        self.pack_from = PACK_FROM
        self.hidden = tuple(
            path.relative_to(self.work_tree).as_posix()
            for path in {Path(os.path.realpath(folder)) for folder in (*hidden, git_dir.parent)}
            if path.is_relative_to(self.work_tree) and path != self.work_tree
        )
        """The server's own files inside the work tree (its data folder, with the stores): never in a checkpoint."""
        self.index = git_dir / "checkpoint-index"
        """The store's own index (the folder's ``.git/index`` is never touched)."""
        self._lock = threading.Lock()
        self._binary: dict[str, tuple[int, int, int, bool]] = {}
        """Path → (size, mtime_ns, inode, binary): a file not changed since is not read again."""
        self._files: int | None = None
        """Files in the index after the last snapshot; None: none taken yet by this process, the next is a full
        pass (the index on disk may be an earlier server's, and git's own comparison is all a later one trusts)."""

    # -- git, hardened ---------------------------------------------------------------------------

    def _env(self) -> dict[str, str]:
        home = self.git_dir.parent / ".home"
        home.mkdir(parents=True, exist_ok=True)
        keep = {name: os.environ[name] for name in ("PATH", "LANG", "LC_ALL", "TZ") if name in os.environ}
        return {
            **keep,
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_DIR": str(self.git_dir),
            "GIT_WORK_TREE": str(self.work_tree),
            "GIT_INDEX_FILE": str(self.index),
            "GIT_LITERAL_PATHSPECS": "1",
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_OPTIONAL_LOCKS": "0",
        }

    def _git(self, *args: str, stdin: bytes = b"", deadline: float | None = None) -> bytes:
        """Run git on the store and its work tree; its output, bounded in time (``deadline``) and bytes."""
        return run_git(args, self._env(), self.work_tree, stdin, deadline or time.monotonic() + self.timeout)

    def _ensure(self, deadline: float) -> None:
        if (self.git_dir / "HEAD").exists():
            return
        self.git_dir.parent.mkdir(parents=True, exist_ok=True)
        env = {**self._env(), "GIT_DIR": str(self.git_dir)}
        env.pop("GIT_WORK_TREE")
        result = subprocess.run(
            ["git", *HARDENING, "init", "--bare", "-q", str(self.git_dir)],
            env=env,
            capture_output=True,
            timeout=max(1.0, deadline - time.monotonic()),
            check=False,
        )
        if result.returncode != 0:
            raise CheckpointFailed(f"git init failed: {result.stderr.decode(errors='replace').strip()[:300]}")
        # Not even listed: the server's own files, when the folder holds them (a session in the person's home).
        patterns = "".join("/" + escaped(relative) + "\n" for relative in self.hidden)
        (self.git_dir / "info").mkdir(exist_ok=True)
        (self.git_dir / "info" / "exclude").write_bytes(os.fsencode(patterns))

    # -- snapshot ----------------------------------------------------------------------------------

    def snapshot(self) -> Snapshot:
        """The work tree as it is now, as a tree in the store (only changed files are read again).

        Raises:
            CheckpointFailed: git failed or took longer than ``timeout``.
        """
        deadline = time.monotonic() + self.timeout
        with self._lock:
            self._ensure(deadline)
            return self._snapshot(deadline)

    def _snapshot(self, deadline: float) -> Snapshot:
        """A full pass over the folder the first time in this process, or when a ``.gitignore`` changed; else only
        the files git finds changed against the index (by size, times and inode: C, one ``lstat`` a file) and those
        not in it, so that Python's work grows with what changed rather than with the folder."""
        if self._files is not None:
            touched = names(
                self._git(
                    "ls-files", "-z", "-t", "--modified", "--deleted", "--others", "--exclude-standard",
                    deadline=deadline,
                )
            )  # fmt: skip
            paths = {name[2:]: not name.startswith("? ") for name in touched}
            if not any(path == ".gitignore" or path.endswith("/.gitignore") for path in paths):
                return self._update(paths, self._files, deadline)
        if not self.index.exists():  # a new store: nothing indexed, nothing to compare
            listed = names(self._git("ls-files", "-z", "--others", "--exclude-standard", deadline=deadline))
            return self._update(dict.fromkeys(listed, False), 0, deadline)
        listed = names(self._git("ls-files", "-z", "--cached", "--others", "--exclude-standard", deadline=deadline))
        ignored = set(
            names(self._git("ls-files", "-z", "--cached", "--ignored", "--exclude-standard", deadline=deadline))
        )
        indexed = set(names(self._git("ls-files", "-z", "--cached", deadline=deadline)))
        return self._update({name: name in indexed for name in listed if name not in ignored}, len(indexed), deadline)

    def _update(self, paths: dict[str, bool], files: int, deadline: float) -> Snapshot:
        """Bring the index up to date on ``paths`` (each: whether the index has it; every other entry is as the
        folder has it), of ``files`` entries, and write its tree."""
        included: list[str] = []
        dropped: list[str] = []
        skipped: list[str] = []
        folders: dict[str, bool] = {}
        empty = files == 0
        for name, indexed in paths.items():
            if any(name == h or name.startswith(h + "/") for h in self.hidden):
                verdict = "drop"
            elif name.endswith("/"):  # a repository of its own: never entered
                verdict = "skip"
            elif self._beyond_symlink(name, folders):
                verdict = "drop"  # a folder on its way is a symlink now: the file is not in the work tree any more
            else:
                verdict = self._bounded(name)
            if verdict == "keep":
                included.append(name)
                files += 0 if indexed else 1
            elif verdict == "gone":
                included.append(name)
                files -= 1 if indexed else 0
            else:
                if verdict == "skip":
                    skipped.append(name)
                if indexed:
                    dropped.append(name)
                    files -= 1
        kept = set(included)
        self._pack([name for name, indexed in paths.items() if not indexed and name in kept], deadline, first=empty)
        if dropped:
            self._git("update-index", "-z", "--force-remove", "--stdin", stdin=nul(dropped), deadline=deadline)
        if included:
            update = ("update-index", "-z", "--add", "--remove", "--replace", "--stdin")
            self._git(*update, stdin=nul(included), deadline=deadline)
        tree = self._git("write-tree", deadline=deadline).decode().strip()
        self._files = files
        return Snapshot(tree, files, tuple(skipped[:MAX_SKIPPED_NAMED]), len(skipped))

    def _pack(self, new: list[str], deadline: float, first: bool) -> None:
        """Put many new files' contents into the store as one pack (``git fast-import``), so that the index's update
        after it finds them there rather than writing each as a loose object; the ``first`` snapshot's trees too,
        read into the index (git writes a loose object as a file of its own: 10,000 files and 2,500 folders took
        seconds of the system's time alone)."""
        if len(new) < self.pack_from:
            return
        stream = bytearray()
        files: list[bytes] = []
        whole = True
        for number, name in enumerate(new, 1):
            path = self.work_tree / name
            try:
                info = os.lstat(path)
                if stat.S_ISLNK(info.st_mode):
                    target = os.fsencode(os.readlink(path))
                    files.append(b"M 120000 inline %s\ndata %d\n%s\n" % (quoted(name), len(target), target))
                    continue
                data = read_bounded(path, self.max_file_bytes)
            except OSError:
                whole = False  # gone, or changed: the index's update takes it as it finds it
                continue
            if data is None:
                whole = False
                continue
            mode = b"100755" if info.st_mode & stat.S_IXUSR else b"100644"
            stream += b"blob\nmark :%d\ndata %d\n" % (number, len(data)) + data + b"\n"
            files.append(b"M %s :%d %s\n" % (mode, number, quoted(name)))
            if len(stream) > MAX_PACKED:
                whole = False
                break  # the rest are written loose
        tree = first and whole
        if tree:
            stream += b"commit " + FIRST.encode() + b"\ncommitter checkpoint <checkpoint@localhost> 0 +0000\ndata 0\n"
            stream += b"".join(files) + b"\n"
        self._git("-c", "fastimport.unpackLimit=0", "fast-import", "--quiet", stdin=bytes(stream), deadline=deadline)
        if tree:
            self._git("read-tree", FIRST, deadline=deadline)

    def _beyond_symlink(self, name: str, folders: dict[str, bool]) -> bool:
        """Whether a folder on ``name``'s way is a symlink (``folders``: each folder's answer, found once)."""
        folder = os.path.dirname(name)
        if not folder:
            return False
        known = folders.get(folder)
        if known is None:
            known = self._beyond_symlink(folder, folders) or os.path.islink(self.work_tree / folder)
            folders[folder] = known
        return known

    def _bounded(self, name: str) -> Literal["keep", "gone", "skip", "drop"]:
        """``skip`` for a file left out (too big, or binary), ``drop`` for a folder now (no file of that name any
        more), ``gone`` for no such path (the index's update removes it); else ``keep`` (a symlink too)."""
        path = self.work_tree / name
        try:
            info = os.lstat(path)
        except OSError:
            return "gone"
        if stat.S_ISDIR(info.st_mode):
            return "drop"
        if not stat.S_ISREG(info.st_mode):
            return "keep"
        if info.st_size > self.max_file_bytes:
            return "skip"
        key = (info.st_size, info.st_mtime_ns, info.st_ino)
        known = self._binary.get(name)
        if known is not None and known[:3] == key:
            return "skip" if known[3] else "keep"
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            return "keep"
        try:
            binary = b"\0" in os.read(fd, BINARY_PROBE)
        finally:
            os.close(fd)
        self._binary[name] = (*key, binary)
        return "skip" if binary else "keep"

    # -- compare and restore -----------------------------------------------------------------------

    def changes_since(self, tree: str) -> list[FileChange]:
        """What a restore of ``tree`` would change: each file added, modified or deleted since, by path."""
        deadline = time.monotonic() + self.timeout
        with self._lock:
            self._ensure(deadline)
            now = self._snapshot(deadline).tree
            return self._diff(tree, now, deadline)

    def _diff(self, tree: str, now: str, deadline: float) -> list[FileChange]:
        check_id(tree)
        out = self._git(
            "diff-tree", "-r", "-z", "--name-status", "--no-renames", "--no-ext-diff", "--no-textconv", tree, now,
            deadline=deadline,
        )  # fmt: skip
        fields = out.split(b"\0")
        changes = []
        for index in range(0, len(fields) - 1, 2):
            status = fields[index].decode()[:1]
            changes.append(FileChange(_STATUS.get(status, "modified"), os.fsdecode(fields[index + 1])))
        return changes

    def restore(self, tree: str, workspace: Workspace) -> Restored:
        """Put the work tree back as ``tree`` has it: files changed or deleted since are written back, files
        created since deleted, each through ``workspace``'s path checks; files the snapshot left out are not touched.

        Raises:
            CheckpointFailed: git failed, took too long, or ``tree`` is not in the store.
        """
        deadline = time.monotonic() + self.timeout
        with self._lock:
            self._ensure(deadline)
            now = self._snapshot(deadline).tree
            changes = self._diff(tree, now, deadline)
            wanted = [change.path for change in changes if change.status != "added"]
            entries = self._entries(tree, wanted, deadline)
            blobs = self._blobs([oid for _, oid in entries.values()], deadline)
            done = Restored()
            # Deletions first: a file made where a folder was goes before the folder's files are written back.
            for change in sorted(changes, key=lambda change: change.status != "added"):
                try:
                    if change.status == "added":
                        delete_file(self.work_tree, workspace, change.path)
                        done.deleted.append(change.path)
                    else:
                        mode, oid = entries[change.path]
                        write_file(self.work_tree, workspace, change.path, mode, blobs[oid])
                        done.written.append(change.path)
                except (PathRefused, OSError, KeyError) as error:
                    done.refused.append((change.path, str(error) or type(error).__name__))
            self._binary.clear()
            self._snapshot(deadline)  # the index as the folder is now: the next snapshot reads only what changes
            return done

    def _entries(self, tree: str, paths: Sequence[str], deadline: float) -> dict[str, tuple[str, str]]:
        if not paths:
            return {}
        out = self._git("ls-tree", "-r", "-z", "--full-tree", tree, deadline=deadline)
        wanted = set(paths)
        entries = {}
        for line in out.split(b"\0"):
            if not line:
                continue
            meta, _, name = line.partition(b"\t")
            mode, _kind, oid = meta.decode().split(" ")
            path = os.fsdecode(name)
            if path in wanted:
                entries[path] = (mode, oid)
        return entries

    def _blobs(self, oids: Sequence[str], deadline: float) -> dict[str, bytes]:
        if not oids:
            return {}
        out = self._git("cat-file", "--batch", stdin="".join(f"{oid}\n" for oid in oids).encode(), deadline=deadline)
        blobs: dict[str, bytes] = {}
        at = 0
        while at < len(out):
            end = out.index(b"\n", at)
            oid, _kind, size = out[at:end].decode().split(" ")
            blobs[oid] = out[end + 1 : end + 1 + int(size)]
            at = end + 1 + int(size) + 1
        return blobs

    def delete(self) -> None:
        """Forget every checkpoint: the store goes (the session was deleted)."""
        with self._lock:
            shutil.rmtree(self.git_dir, ignore_errors=True)
