"""Which paths an agent may use, and opening them so that nothing outside the workspace is read or written.

An agent names files by absolute path (ACP requires it), and it controls what lies in the workspace: it can
plant symlinks, FIFOs or ``..`` tricks. `Workspace.check` decides whether a path lies inside one of the
session's roots, first lexically and then after resolving symlinks. `Workspace.read_bytes` and
`Workspace.write_bytes_atomic` then do not trust that answer for the open itself: they walk from ``/`` one
component at a time with ``O_NOFOLLOW``, so a symlink swapped in between the check and the open makes the
open fail instead of leading outside.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Literal, get_args

__all__ = [
    "MAX_NAME_BYTES",
    "MAX_PATH_BYTES",
    "Access",
    "FileTooLarge",
    "PathRefused",
    "Workspace",
    "open_directory",
    "show",
]

Access = Literal["read-write", "read-only", "none"]

MAX_PATH_BYTES = 4096
"""Longest path accepted, in UTF-8 bytes: Linux's PATH_MAX."""
MAX_NAME_BYTES = 255
"""Longest file or folder name accepted, in UTF-8 bytes: NAME_MAX of the common file systems."""

_SHOWN_CHARS = 120  # longer paths are shortened in messages
# O_PATH: walking needs no read permission on the folders, only search permission, as the kernel's own lookup.
_O_PATH: int = getattr(os, "O_PATH", os.O_RDONLY)
# O_NONBLOCK: opening a FIFO that slipped past the type check must not wait for a writer.
_DIR_FLAGS = _O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_CHUNK = 1 << 20


class PathRefused(Exception):
    """A path the agent may not use; ``str(error)`` says why in one sentence and names the path."""


class FileTooLarge(OSError):
    """A file larger than the caller is willing to read into memory."""

    def __init__(self, shown: str, size: int, limit: int) -> None:
        self.message = f"{shown} is too large to read: {size:,} bytes, the limit is {limit:,} bytes."
        super().__init__(errno.EFBIG, self.message)
        self.size = size
        self.limit = limit

    def __str__(self) -> str:
        return self.message


def show(path: str) -> str:
    """A path as a user can read it in a message: as it is when short and printable, else escaped (``repr``)
    and shortened in the middle."""
    if len(path) > _SHOWN_CHARS:
        half = _SHOWN_CHARS // 2
        return f"{path[:half]!r}…{path[-half:]!r} ({len(path):,} characters)"
    return path if path.isprintable() else repr(path)


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


def _within(path: Path, roots: Sequence[Path]) -> bool:
    return any(path.is_relative_to(root) for root in roots)


def _kind(mode: int) -> str:
    """What a file that is not a regular file is, as the end of a sentence."""
    if stat.S_ISDIR(mode):
        return "is a directory, not a file"
    if stat.S_ISFIFO(mode):
        return "is a named pipe (FIFO), not a regular file"
    if stat.S_ISSOCK(mode):
        return "is a socket, not a regular file"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "is a device, not a regular file"
    if stat.S_ISLNK(mode):
        return "is a symlink that changed while it was being opened"
    return "is not a regular file"


def _changed(shown: str) -> PathRefused:
    return PathRefused(f"The path {shown} changed while it was being opened: a folder on the way is now a symlink.")


def _rename_error(error: OSError, text: str) -> OSError:
    """The same error, naming the path the agent asked for rather than one component of it."""
    return type(error)(error.errno, error.strerror, text)


class Workspace:
    """The folders one session's agent may use, and how: ``read-write``, ``read-only`` or ``none``.

    Args:
        roots: ``roots[0]`` is the session's working directory, the others extra folders the user added.
        access: what the agent may do with files inside them.
    """

    def __init__(self, roots: Sequence[Path], access: Access = "read-write") -> None:
        if not roots:
            raise ValueError("a workspace needs at least one root folder")
        if access not in get_args(Access):
            raise ValueError(f"access must be one of {', '.join(get_args(Access))}, not {access!r}")
        self.roots: tuple[Path, ...] = tuple(Path(os.path.realpath(root)) for root in roots)
        # The roots as given, too: the agent names files below the cwd it was told, even when that goes through
        # a symlink (/home -> /data/home). What it may reach is still decided against the resolved roots.
        self._given = tuple(_lexical(os.path.abspath(root)) for root in roots)
        self.access: Access = access

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
            raise PathRefused(f"The path {shown} is outside the workspace ({self._describe_roots()}).")
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
            raise PathRefused(f"The path {shown} {_kind(st.st_mode)}.")
        return resolved

    def contains(self, path: Path) -> bool:
        """Whether `path`, once its symlinks are resolved, lies inside one of the roots (never for a name no file
        can have: a NUL, or a lone surrogate the file system encoding cannot hold)."""
        try:
            resolved = os.path.realpath(path)
        except (UnicodeEncodeError, ValueError):
            return False
        return _within(Path(resolved), self.roots)

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
        return resolved, self._read_checked(resolved, path, max_bytes=max_bytes)

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
        self._write_checked(resolved, path, data)
        return resolved

    # -- opening without following symlinks ----------------------------------------------------------

    def _read_checked(self, resolved: Path, text: str, *, max_bytes: int) -> bytes:
        """Read `resolved`, which `check` accepted; `text` is the path as the agent wrote it, for messages."""
        shown = show(text)
        with self._parent(resolved, text, create=False) as (dir_fd, name):
            try:
                st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            except OSError as error:
                raise _rename_error(error, text) from None
            if not stat.S_ISREG(st.st_mode):  # refused before opening: opening a device can have effects
                raise PathRefused(f"The path {shown} {_kind(st.st_mode)}.")
            try:
                fd = os.open(name, _READ_FLAGS, dir_fd=dir_fd)
            except OSError as error:
                if error.errno == errno.ELOOP:
                    raise _changed(shown) from None
                raise _rename_error(error, text) from None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise PathRefused(f"The path {shown} {_kind(st.st_mode)}.")
            if st.st_size > max_bytes:
                raise FileTooLarge(shown, st.st_size, max_bytes)
            chunks: list[bytes] = []
            size = 0
            while chunk := os.read(fd, min(_READ_CHUNK, max_bytes + 1 - size)):
                chunks.append(chunk)
                size += len(chunk)
                if size > max_bytes:  # grew since fstat
                    raise FileTooLarge(shown, size, max_bytes)
            return b"".join(chunks)
        finally:
            os.close(fd)

    def _write_checked(self, resolved: Path, text: str, data: bytes) -> None:
        """Write `resolved`, which `check` accepted; `text` is the path as the agent wrote it, for messages."""
        shown = show(text)
        with self._parent(resolved, text, create=True) as (dir_fd, name):
            try:
                old: os.stat_result | None = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            except FileNotFoundError:
                old = None
            if old is not None and not stat.S_ISREG(old.st_mode):
                raise PathRefused(f"The path {shown} {_kind(old.st_mode)}.")
            temp = f".{name[:40]}.{secrets.token_hex(6)}.tmp"
            # A new file gets 0o666 less the umask, as any program would create it.
            fd = os.open(temp, _TEMP_FLAGS, 0o666 if old is None else 0o600, dir_fd=dir_fd)
            try:
                try:
                    view = memoryview(data)
                    while view:
                        view = view[os.write(fd, view) :]
                    if old is not None:
                        _copy_owner_and_mode(fd, old)
                    os.fsync(fd)
                finally:
                    os.close(fd)
                os.rename(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
            except BaseException:
                with suppress(OSError):
                    os.unlink(temp, dir_fd=dir_fd)
                raise
            _sync_dir(dir_fd)

    @contextmanager
    def _parent(self, resolved: Path, text: str, *, create: bool) -> Iterator[tuple[int, str]]:
        """Open the folder holding `resolved` by walking from ``/``, never following a symlink; yield its fd
        and the file's name in it. With `create`, missing folders below the root are made on the way."""
        root = max(
            (root for root in self.roots if resolved.is_relative_to(root)), key=lambda r: len(r.parts), default=None
        )
        if root is None:  # not from check(): refuse rather than walk anywhere
            raise PathRefused(f"The path {show(text)} is outside the workspace ({self._describe_roots()}).")
        if resolved == root:
            raise PathRefused(f"The path {show(text)} is a directory, not a file.")
        below = resolved.relative_to(root).parts
        fd = os.open("/", _DIR_FLAGS)
        try:
            fd = _walk(fd, root.parts[1:], text, create=False)
            fd = _walk(fd, below[:-1], text, create=create)
            yield fd, below[-1]
        finally:
            os.close(fd)

    def _describe_roots(self) -> str:
        return ", ".join(str(root) for root in self.roots)


def open_directory(path: Path) -> int:
    """Open the directory `path` (absolute, symlinks already resolved, as `os.path.realpath` gives it) by walking
    from ``/`` with ``O_NOFOLLOW``; return an ``O_PATH`` descriptor of it, close-on-exec.

    The descriptor stays on the directory that was checked: a command started in it with ``fchdir`` runs
    there even if the path is swapped for a symlink afterwards, and a swap before the walk makes it fail.

    Raises:
        PathRefused: a folder on the way is now a symlink.
        OSError: it is missing or not a directory (``filename`` is `path`), or may not be entered.
    """
    text = str(path)
    if not path.is_absolute():
        raise ValueError(f"not an absolute path: {text!r}")
    fd = os.open("/", _DIR_FLAGS)
    try:
        result = _walk(fd, path.parts[1:], text, create=False)
    except BaseException:
        os.close(fd)
        raise
    return result


def _walk(fd: int, names: Sequence[str], text: str, *, create: bool) -> int:
    """Descend from the folder `fd` through `names`, one ``openat(O_NOFOLLOW)`` each; return the last fd.

    `fd` is consumed: on success only the returned fd is open, on failure `fd` is still open for the caller's
    ``finally`` to close, and nothing else is.
    """
    start = fd
    for name in names:
        try:
            next_fd = _open_dir(fd, name, text, create=create)
        except BaseException:
            if fd != start:
                os.close(fd)
            raise
        if fd != start:
            os.close(fd)
        fd = next_fd
    if fd != start:
        os.close(start)
    return fd


def _open_dir(dir_fd: int, name: str, text: str, *, create: bool) -> int:
    shown = show(text)
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
    except FileNotFoundError:
        if not create:
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), text) from None
    except OSError as error:
        if error.errno not in (errno.ENOTDIR, errno.ELOOP):
            raise _rename_error(error, text) from None
        if _is_symlink(dir_fd, name):
            raise _changed(shown) from None
        if not create:
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), text) from None
        raise PathRefused(f"Cannot write {shown}: {name!r} on the way is a file, not a folder.") from None
    try:
        os.mkdir(name, 0o777, dir_fd=dir_fd)
    except FileExistsError:
        pass  # made meanwhile by someone else: opened (or refused) below like any other
    except OSError as error:
        raise _rename_error(error, text) from None
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
    except OSError as error:
        if error.errno in (errno.ENOTDIR, errno.ELOOP):
            raise _changed(shown) from None
        raise _rename_error(error, text) from None


def _is_symlink(dir_fd: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _copy_owner_and_mode(fd: int, old: os.stat_result) -> None:
    """Give the replacement the old file's owner (where we may) and permission bits.

    Set-user/group-ID bits are dropped, as the kernel drops them when an ordinary process writes to a file:
    a program the agent rewrote must not keep running with its owner's rights.
    """
    if (old.st_uid, old.st_gid) != (os.geteuid(), os.getegid()):
        with suppress(OSError):  # only root, or a group we are in, may give files away
            os.fchown(fd, old.st_uid, old.st_gid)
    os.fchmod(fd, stat.S_IMODE(old.st_mode) & ~(stat.S_ISUID | stat.S_ISGID))  # after chown, which clears them


def _sync_dir(dir_fd: int) -> None:
    """Make the rename durable; best effort, as some file systems refuse to sync folders."""
    with suppress(OSError):
        fd = os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=dir_fd)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
