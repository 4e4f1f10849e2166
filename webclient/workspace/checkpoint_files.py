"""A checkpoint's files written back into the session's folder, and those made since deleted, never through a
symlink that leads out of it (`webclient.workspace.checkpoints`)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from webclient.workspace.path_errors import PathRefused
from webclient.workspace.paths import Workspace

SYMLINK = "120000"
"""A symlink's mode in a git tree."""


def _target(work_tree: Path, workspace: Workspace, path: str) -> tuple[Path, str]:
    """The folder ``path`` lies in, resolved and inside the work tree, and its name: never through a symlink
    that leads out."""
    absolute = work_tree / path
    parent = Path(os.path.realpath(absolute.parent))
    if not (parent == work_tree or parent.is_relative_to(work_tree)):
        raise PathRefused(f"{path}: a folder on the way leads outside the workspace")
    if workspace.hides(absolute):
        raise PathRefused(f"{path} is the server's own (its data, config, registry)")
    return parent, absolute.name


def delete_file(work_tree: Path, workspace: Workspace, path: str) -> None:
    """Delete ``path`` (relative to ``work_tree``): a symlink itself, never what it points to; then the folders it
    leaves empty."""
    parent, name = _target(work_tree, workspace, path)
    fd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        info = os.stat(name, dir_fd=fd, follow_symlinks=False)
        if stat.S_ISDIR(info.st_mode):
            raise PathRefused(f"{path} is a folder now")
        os.unlink(name, dir_fd=fd)  # a symlink itself, never what it points to
    except FileNotFoundError:
        return
    finally:
        os.close(fd)
    folder = parent
    while folder != work_tree and folder.is_relative_to(work_tree):
        try:
            folder.rmdir()  # only an empty one: what the agent made for the files it made
        except OSError:
            break
        folder = folder.parent


def write_file(work_tree: Path, workspace: Workspace, path: str, mode: str, data: bytes) -> None:
    """Write ``path`` (relative to ``work_tree``) back as a checkpoint has it (``mode``: git's), through
    ``workspace``'s checks; a symlink in its place is replaced, never written through."""
    if (work_tree / path).parent.is_dir():
        parent, name = _target(work_tree, workspace, path)
        try:
            info: os.stat_result | None = os.stat(parent / name, follow_symlinks=False)
        except FileNotFoundError:
            info = None
        if info is not None and (stat.S_ISLNK(info.st_mode) or mode == SYMLINK):
            delete_file(work_tree, workspace, path)  # a symlink now, or one then: replaced, never written through
    if mode == SYMLINK:  # made again as it was (it is never followed here)
        parent, name = _target(work_tree, workspace, path)
        fd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        try:
            os.symlink(os.fsdecode(data), name, dir_fd=fd)
        finally:
            os.close(fd)
        return
    written = workspace.write_bytes_atomic(str(work_tree / path), data)
    executable = mode == "100755"
    current = os.stat(written, follow_symlinks=False).st_mode
    if bool(current & stat.S_IXUSR) != executable:
        bits = current | 0o111 if executable else current & ~0o111
        os.chmod(written, stat.S_IMODE(bits), follow_symlinks=False)


def read_bounded(path: Path, limit: int) -> bytes | None:
    """A regular file's bytes, never through a symlink; None when it has more than ``limit``."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        with os.fdopen(fd, "rb", closefd=False) as file:
            data = file.read(limit + 1)
    finally:
        os.close(fd)
    return data if len(data) <= limit else None
