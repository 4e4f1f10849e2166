"""Opening the files and folders of a workspace so that a symlink swapped in after the check cannot lead outside.

`webclient.workspace.paths` decides whether a path may be used; the open itself does not trust that answer. It
walks from ``/`` one component at a time with ``O_NOFOLLOW``, so a folder swapped for a symlink between the check
and the open makes the open fail instead of leading outside. A descriptor of a checked directory
(`open_directory`) lets a command start there (``fchdir``) without naming it by path again.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path

from webclient.workspace.path_errors import FileTooLarge, PathRefused, file_kind, outside, show

# O_PATH: walking needs no read permission on the folders, only search permission, as the kernel's own lookup.
_O_PATH: int = getattr(os, "O_PATH", os.O_RDONLY)
# O_NONBLOCK: opening a FIFO that slipped past the type check must not wait for a writer.
_DIR_FLAGS = _O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_CHUNK = 1 << 20


def read_file(roots: Sequence[Path], resolved: Path, text: str, *, max_bytes: int) -> bytes:
    """Read `resolved`, a path `Workspace.check` accepted below one of `roots`; `text` is the path as the agent
    wrote it, for messages. A symlink met on the way, or a file that is not a regular one, is refused.

    Raises:
        PathRefused: the path changed while it was being opened, or is not a regular file.
        FileNotFoundError: the file does not exist (``filename`` is `text`).
        FileTooLarge: the file has more than `max_bytes` bytes.
    """
    shown = show(text)
    with _parent(roots, resolved, text, create=False) as (dir_fd, name):
        try:
            st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except OSError as error:
            raise _rename_error(error, text) from None
        if not stat.S_ISREG(st.st_mode):  # refused before opening: opening a device can have effects
            raise PathRefused(f"The path {shown} {file_kind(st.st_mode)}.")
        try:
            fd = os.open(name, _READ_FLAGS, dir_fd=dir_fd)
        except OSError as error:
            if error.errno == errno.ELOOP:
                raise _changed(shown) from None
            raise _rename_error(error, text) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise PathRefused(f"The path {shown} {file_kind(st.st_mode)}.")
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


def write_file_atomic(roots: Sequence[Path], resolved: Path, text: str, data: bytes) -> None:
    """Replace (or create) `resolved`, a path `Workspace.check` accepted below one of `roots`, with `data`, by
    renaming a synced temporary file over it; `text` is the path as the agent wrote it, for messages. Missing
    folders on the way are made; a symlink met on the way is refused.

    Raises:
        PathRefused: a folder on the way is a file or changed into a symlink, or the target is not a regular file.
        OSError: the disk said no (permissions, space).
    """
    shown = show(text)
    with _parent(roots, resolved, text, create=True) as (dir_fd, name):
        try:
            old: os.stat_result | None = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            old = None
        if old is not None and not stat.S_ISREG(old.st_mode):
            raise PathRefused(f"The path {shown} {file_kind(old.st_mode)}.")
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
def _parent(roots: Sequence[Path], resolved: Path, text: str, *, create: bool) -> Iterator[tuple[int, str]]:
    """Open the folder holding `resolved` by walking from ``/``, never following a symlink; yield its fd
    and the file's name in it. With `create`, missing folders below the root are made on the way."""
    root = max((root for root in roots if resolved.is_relative_to(root)), key=lambda r: len(r.parts), default=None)
    if root is None:  # not from check(): refuse rather than walk anywhere
        raise outside(show(text), roots)
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


def _changed(shown: str) -> PathRefused:
    return PathRefused(f"The path {shown} changed while it was being opened: a folder on the way is now a symlink.")


def _rename_error(error: OSError, text: str) -> OSError:
    """The same error, naming the path the agent asked for rather than one component of it."""
    return type(error)(error.errno, error.strerror, text)


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
