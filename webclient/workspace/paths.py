"""Which paths an agent may use: the checks, and reading or writing a checked path through `no_follow`.

An agent names files by absolute path (ACP requires it), and it controls what lies in the workspace: it can
plant symlinks, FIFOs or ``..`` tricks. `Workspace.check` decides whether a path lies inside one of the
session's roots, first lexically and then after resolving symlinks, and that it is none of the server's own
files (its data folder, config and registry: ``hidden``), which no root makes an agent's, since the server reads
and writes for it outside any sandbox. `Workspace.read_bytes` and
`Workspace.write_bytes_atomic` then do not trust that answer for the open itself: they open through
`webclient.workspace.no_follow`, which walks from ``/`` one component at a time with ``O_NOFOLLOW``, so a
symlink swapped in between the check and the open makes the open fail instead of leading outside.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Literal, get_args

from webclient.workspace.no_follow import open_directory, read_file, write_file_atomic
from webclient.workspace.path_errors import FileTooLarge, PathRefused, file_kind, outside, show

__all__ = [
    "MAX_NAME_BYTES",
    "MAX_PATH_BYTES",
    "FileAccess",
    "FileTooLarge",
    "PathRefused",
    "Workspace",
    "open_directory",
    "show",
]

FileAccess = Literal["read-write", "read-only", "none"]
"""What an agent may do with its workspace's files through the client (not who may enter the server: web's Access)."""

MAX_PATH_BYTES = 4096
"""Longest path accepted, in UTF-8 bytes: Linux's PATH_MAX."""
MAX_NAME_BYTES = 255
"""Longest file or folder name accepted, in UTF-8 bytes: NAME_MAX of the common file systems."""


def _validate(path: object) -> str:
    """The path as a string, if it is one the kernel and the protocol can take at all."""
    if not isinstance(path, str):
        raise PathRefused(f"The path must be a string, not {type(path).__name__}.")
    if not path:
        raise PathRefused("The path is empty.")
    shown = show(path)
    if "\0" in path:
        raise PathRefused(f"The path {shown} contains a NUL character.")
    encoded = path.encode("utf-8", "surrogatepass")  # counts lone surrogates too, before refusing them below
    if len(encoded) > MAX_PATH_BYTES:
        raise PathRefused(f"The path {shown} is too long: {len(encoded):,} bytes, the limit is {MAX_PATH_BYTES}.")
    if any(len(name) > MAX_NAME_BYTES for name in encoded.split(b"/")):
        raise PathRefused(f"The path {shown} has a file or folder name longer than {MAX_NAME_BYTES} bytes.")
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        raise PathRefused(f"The path {shown} is not valid UTF-8.") from None
    if not os.path.isabs(path):
        raise PathRefused(f"The path {shown} is relative, but ACP requires absolute paths.")
    return path


def _lexical(path: str) -> Path:
    """`path` with ``.``, ``..`` and repeated slashes removed, without looking at the disk."""
    normal = os.path.normpath(path)
    return Path("/" + normal.lstrip("/"))  # normpath keeps a leading "//" (POSIX leaves it open); Linux does not


def _resolved(path: Path | str) -> Path:
    """``path`` with its symlinks resolved (a path that cannot be: as written)."""
    try:
        return Path(os.path.realpath(path))
    except (OSError, UnicodeEncodeError, ValueError):
        return _lexical(os.path.abspath(path))


def _within(path: Path, roots: Sequence[Path]) -> bool:
    return any(path.is_relative_to(root) for root in roots)


class Workspace:
    """The folders one session's agent may use, and how: ``read-write``, ``read-only`` or ``none``.

    Args:
        roots: ``roots[0]`` is the session's working directory, the others extra folders the user added.
        access: what the agent may do with files inside them.
        hidden: the server's own files and folders (its data folder, config, registry): never read or written
            through the workspace, even where a root holds them.
    """

    def __init__(self, roots: Sequence[Path], access: FileAccess = "read-write", hidden: Sequence[Path] = ()) -> None:
        if not roots:
            raise ValueError("a workspace needs at least one root folder")
        if access not in get_args(FileAccess):
            raise ValueError(f"access must be one of {', '.join(get_args(FileAccess))}, not {access!r}")
        self.roots: tuple[Path, ...] = tuple(Path(os.path.realpath(root)) for root in roots)
        # The roots as given, too: the agent names files below the cwd it was told, even when that goes through
        # a symlink (/home -> /data/home). What it may reach is still decided against the resolved roots.
        self._given = tuple(_lexical(os.path.abspath(root)) for root in roots)
        self.access: FileAccess = access
        # Both as given and resolved: a path is refused by what it is written as and by what it leads to.
        self.hidden: tuple[Path, ...] = tuple(
            dict.fromkeys(path for folder in hidden for path in (_lexical(os.path.abspath(folder)), _resolved(folder)))
        )
        # A root given inside a hidden folder (a session's worktree in the data folder) is the agent's all the same:
        # what lies in it is not hidden, as a writable folder in a hidden one is the agent's in its sandbox.
        self._given_inside_hidden = tuple(
            root for root in dict.fromkeys(self.roots + self._given) if _within(root, self.hidden)
        )

    def read_only(self) -> Workspace:
        """The same roots and hidden files, for reading only (what the server shows a person of them)."""
        return Workspace(self.roots, "read-only", self.hidden)

    def hides(self, path: Path, *, resolve: bool = True) -> bool:
        """Whether ``path`` (as written, or once resolved) is, or lies in, one of the server's own files.

        ``resolve=False`` looks at the path as written only: enough for a walk from a resolved root that follows no
        symlinks (`lexically_hides`), where every folder is already what it resolves to, and far cheaper per file.
        """
        if not self.hidden:
            return False
        return self._in_hidden(_lexical(str(path))) or resolve and self._in_hidden(_resolved(path))

    def _in_hidden(self, path: Path) -> bool:
        return _within(path, self.hidden) and not _within(path, self._given_inside_hidden)

    def lexically_hides(self, path: Path) -> bool:
        """`hides` without resolving symlinks: for walks of the roots that follow none (Changes, the ``@`` menu), whose
        symlinks are never read through."""
        return self.hides(path, resolve=False)

    def __repr__(self) -> str:
        return f"Workspace({list(self.roots)!r}, access={self.access!r})"

    def check(self, path: object, *, write: bool = False) -> Path:
        """Decide whether the agent may read (or write) `path`; return it resolved (no symlinks, absolute).

        The path must be absolute, lie inside a root both as written (after removing ``..``) and after
        resolving symlinks, and name a regular file or nothing yet. An existing target is only looked at
        (``stat``), never opened.

        Raises:
            PathRefused: with a message for the user and the agent, naming the path.
        """
        text = _validate(path)
        shown = show(text)
        if self.access == "none":
            raise PathRefused(
                f"Cannot {'write' if write else 'read'} {shown}: file access is turned off for this agent."
            )
        if write and self.access == "read-only":
            raise PathRefused(f"Cannot write {shown}: this agent may only read files.")
        if not _within(_lexical(text), self.roots + self._given):
            raise outside(shown, self.roots)
        if self.hides(Path(text)):
            raise PathRefused(f"The path {shown} cannot be used: it is the server's own (its data, config, registry).")
        try:
            resolved = Path(os.path.realpath(text))
        except OSError as error:
            raise PathRefused(f"The path {shown} cannot be resolved: {error.strerror or error}.") from None
        if not _within(resolved, self.roots):
            raise PathRefused(f"The path {shown} cannot be used: a symlink leads outside the workspace.")
        try:
            st = os.stat(resolved)
        except OSError as error:
            if error.errno == errno.ELOOP:
                raise PathRefused(f"The path {shown} goes through a symlink loop.") from None
            return resolved  # missing, or not ours to look at: opening it reports that
        if not stat.S_ISREG(st.st_mode):
            raise PathRefused(f"The path {shown} {file_kind(st.st_mode)}.")
        return resolved

    def contains(self, path: Path) -> bool:
        """Whether `path`, once its symlinks are resolved, lies inside one of the roots (never for a name no file
        can have: a NUL, or a lone surrogate the file system encoding cannot hold)."""
        try:
            resolved = os.path.realpath(path)
        except (UnicodeEncodeError, ValueError):
            return False
        return _within(Path(resolved), self.roots) and not self.hides(path)

    def relative(self, path: Path) -> str:
        """`path` for display: relative to the session's folder, ``<root name>/...`` in an extra root, else
        absolute."""
        for roots in (self.roots, self._given):
            for index, root in enumerate(roots):
                if path.is_relative_to(root):
                    below = path.relative_to(root).as_posix()
                    if index == 0:
                        return below
                    return root.name if below == "." else f"{root.name}/{below}"
        return str(path)

    def read_bytes(self, path: object, *, max_bytes: int) -> tuple[Path, bytes]:
        """Read a whole regular file inside the workspace; return its resolved path and its contents.

        Raises:
            PathRefused: see `check`; also when the path changed into a symlink while being opened.
            FileNotFoundError: the file does not exist (``filename`` is the path as asked).
            FileTooLarge: the file has more than `max_bytes` bytes.
        """
        resolved = self.check(path)
        assert isinstance(path, str)  # check() refuses anything else
        return resolved, read_file(self.roots, resolved, path, max_bytes=max_bytes)

    def write_bytes_atomic(self, path: object, data: bytes) -> Path:
        """Replace (or create) a file inside the workspace with `data`, all at once; return its resolved path.

        Missing parent folders are created. The data goes to a temporary file in the same folder, is synced,
        and renamed over the target, so a reader sees the old or the new contents, never a mix, and a crash
        leaves the old file intact. An existing file keeps its permission bits (and its owner, where allowed).

        Raises:
            PathRefused: see `check`; also when a folder on the way is a file or changed into a symlink.
            OSError: the disk said no (permissions, space).
        """
        resolved = self.check(path, write=True)
        assert isinstance(path, str)  # check() refuses anything else
        write_file_atomic(self.roots, resolved, path, data)
        return resolved
