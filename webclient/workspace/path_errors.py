"""What a refused path says: the errors of `webclient.workspace.paths` and `webclient.workspace.no_follow`, and
the words they use (a path shown so that a user can read it, what a file that is not a regular file is)."""

from __future__ import annotations

import errno
import stat
from collections.abc import Sequence
from pathlib import Path

_SHOWN_CHARS = 120  # longer paths are shortened in messages


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


def file_kind(mode: int) -> str:
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


def outside(shown: str, roots: Sequence[Path]) -> PathRefused:
    """The refusal of a path that lies in none of ``roots``."""
    return PathRefused(f"The path {shown} is outside the workspace ({', '.join(str(root) for root in roots)}).")
