"""Linux's inotify, called directly (ctypes): one instance whose set of watched folders changes one folder at a time.

A library watch (watchfiles) is one inotify instance over a fixed set of folders: changing the set means a new
instance, and a user may hold 128 instances in all (``/proc/sys/fs/inotify/max_user_instances``). Here the server
holds one instance, and adds and removes a watch per folder (``max_user_watches``, about 8,000 to 500,000).
"""

from __future__ import annotations

import ctypes
import errno
import functools
import os
import struct
from collections.abc import Iterator
from typing import NamedTuple

__all__ = ["Event", "Inotify", "explain"]

IN_MODIFY = 0x00000002
IN_ATTRIB = 0x00000004
IN_CLOSE_WRITE = 0x00000008
IN_MOVED_FROM = 0x00000040
IN_MOVED_TO = 0x00000080
IN_CREATE = 0x00000100
IN_DELETE = 0x00000200
IN_DELETE_SELF = 0x00000400
IN_MOVE_SELF = 0x00000800
IN_Q_OVERFLOW = 0x00004000
IN_IGNORED = 0x00008000
IN_ONLYDIR = 0x01000000
IN_EXCL_UNLINK = 0x04000000
IN_ISDIR = 0x40000000

FOLDER_MASK = (
    IN_MODIFY
    | IN_ATTRIB
    | IN_CLOSE_WRITE
    | IN_MOVED_FROM
    | IN_MOVED_TO
    | IN_CREATE
    | IN_DELETE
    | IN_DELETE_SELF
    | IN_MOVE_SELF
    | IN_ONLYDIR
    | IN_EXCL_UNLINK
)
"""What a watched folder reports: a file written, made, deleted or moved, and the folder itself going away."""

_HEADER = struct.Struct("iIII")  # struct inotify_event: wd, mask, cookie, len; then len bytes of NUL-padded name
_READ_BYTES = 64 * 1024


class Event(NamedTuple):
    """One inotify event: the watch it came from (-1 for a queue overflow), what happened, and the entry's name in
    the watched folder (empty for the folder itself)."""

    watch: int
    mask: int
    name: bytes


@functools.cache
def _libc() -> ctypes.CDLL:
    # The process's own symbols, libc's among them: `ctypes.util.find_library` would run `ldconfig -p` each time.
    libc = ctypes.CDLL(None, use_errno=True)
    libc.inotify_init1.argtypes = [ctypes.c_int]
    libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
    libc.inotify_rm_watch.argtypes = [ctypes.c_int, ctypes.c_int]
    return libc


class Inotify:
    """One inotify instance (non-blocking, close-on-exec): watch folders by path, read events in batches."""

    def __init__(self) -> None:
        """Raises:
        OSError: the system's limit of instances is reached (EMFILE), or inotify is not available."""
        self._libc = _libc()
        fd = self._libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if fd < 0:
            raise _error("inotify_init1")
        self.fd: int = fd

    def add_watch(self, folder: str | bytes | os.PathLike[str], mask: int = FOLDER_MASK) -> int:
        """Watch ``folder`` (its entries, not its subfolders' entries); the watch's number, the same one for a folder
        watched already.

        Raises:
            OSError: ENOSPC when the limit of watches is reached, ENOENT/ENOTDIR when the folder is gone.
        """
        watch = self._libc.inotify_add_watch(self.fd, os.fsencode(folder), mask)
        if watch < 0:
            raise _error("inotify_add_watch", folder)
        return int(watch)

    def rm_watch(self, watch: int) -> None:
        """Stop a watch (quietly if it is gone already: its folder was deleted)."""
        self._libc.inotify_rm_watch(self.fd, watch)

    def read(self) -> list[Event]:
        """The events waiting (none if there are none)."""
        events: list[Event] = []
        while True:
            try:
                data = os.read(self.fd, _READ_BYTES)
            except BlockingIOError:
                return events
            events.extend(_parse(data))
            if len(data) < _READ_BYTES // 2:
                return events

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def explain(error: OSError) -> str:
    """Why watching failed, in words for the page (inotify's limits named as such)."""
    if error.errno in (errno.EMFILE, errno.ENOSPC):
        return f"the system's limit on file watches was reached: {error}"
    return str(error) or type(error).__name__


def _parse(data: bytes) -> Iterator[Event]:
    offset = 0
    while offset + _HEADER.size <= len(data):
        watch, mask, _cookie, length = _HEADER.unpack_from(data, offset)
        offset += _HEADER.size
        yield Event(watch, mask, data[offset : offset + length].rstrip(b"\0"))
        offset += length


def _error(call: str, path: str | bytes | os.PathLike[str] | None = None) -> OSError:
    number = ctypes.get_errno()
    if path is None:
        return OSError(number, f"{call}: {os.strerror(number)}")
    return OSError(number, os.strerror(number), os.fsdecode(path))
