"""Git for checkpoints, run as the folder it reads is untrusted: no system or global configuration, no hooks, no
fsmonitor, nothing a folder's files could make it run; bounded in time and in the output read
(`webclient.workspace.checkpoints`)."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from collections.abc import Sequence
from pathlib import Path

MIB = 1024 * 1024
MAX_OUTPUT = 64 * MIB
"""Bytes of git's output read at most (a file list of a huge folder, a restore's blobs): beyond it the call fails."""

HARDENING = (
    "-c", "core.hooksPath=/dev/null",
    "-c", "core.fsmonitor=false",
    "-c", "core.untrackedCache=false",
    "-c", "core.symlinks=true",
    "-c", "core.autocrlf=false",
    "-c", "core.safecrlf=false",
    "-c", "gc.auto=0",
    "-c", "maintenance.auto=false",
    "-c", "diff.renames=false",
    "-c", "core.quotePath=false",
)  # fmt: skip
"""Settings that keep a workspace's files from making git run anything or rewrite what it reads."""


class CheckpointFailed(Exception):
    """A snapshot or restore that could not be made (git missing, too slow, too much output, refused)."""


class CheckpointTooSlow(CheckpointFailed):
    """Git did not finish within the time a checkpoint is given."""


def run_git(args: Sequence[str], env: dict[str, str], cwd: Path, stdin: bytes, deadline: float) -> bytes:
    """Run ``git args`` hardened (`HARDENING`) in ``cwd`` with only ``env``; its output, read until ``deadline``
    (`time.monotonic`) and `MAX_OUTPUT` bytes at most.

    Raises:
        CheckpointFailed: git did not start, failed, took too long or said too much.
    """
    command = next((arg for arg in args if not arg.startswith("-") and "=" not in arg), "")
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise CheckpointTooSlow("out of time")
    try:
        process = subprocess.Popen(
            ["git", *HARDENING, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=env,
        )
    except OSError as error:
        raise CheckpointFailed(f"git did not start: {error}") from None
    killed = threading.Event()

    def kill() -> None:
        killed.set()
        process.kill()

    timer = threading.Timer(remaining, kill)
    timer.start()
    errors: list[bytes] = []
    helpers = [
        threading.Thread(target=_feed, args=(process, stdin), daemon=True),
        threading.Thread(target=lambda: errors.append(_drain(process)), daemon=True),
    ]
    try:
        for helper in helpers:
            helper.start()
        assert process.stdout is not None
        out = process.stdout.read(MAX_OUTPUT + 1)
        if len(out) > MAX_OUTPUT:
            kill()
            raise CheckpointFailed(f"git {command} said more than {MAX_OUTPUT // MIB} MB")
        code = process.wait()
    finally:
        timer.cancel()
        if process.poll() is None:
            process.kill()
            process.wait()
        for helper in helpers:
            if helper.ident is not None:
                helper.join()
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()
    if killed.is_set():
        raise CheckpointTooSlow(f"git {command} took too long")
    if code != 0:
        said = b"".join(errors).decode(errors="replace").strip()[:300]
        raise CheckpointFailed(f"git {command} failed: {said}")
    return out


def _feed(process: subprocess.Popen[bytes], data: bytes) -> None:
    assert process.stdin is not None
    try:
        if data:
            process.stdin.write(data)
    except (BrokenPipeError, OSError):
        pass
    finally:
        try:
            process.stdin.close()
        except OSError:
            pass


def _drain(process: subprocess.Popen[bytes]) -> bytes:
    assert process.stderr is not None
    said = process.stderr.read(64 * 1024)
    while process.stderr.read(64 * 1024):  # the rest is not kept, but read, so that git never waits on it
        pass
    return said


def quoted(name: str) -> bytes:
    """A path as ``git fast-import`` reads it: C-style quoted when it would not read plainly."""
    raw = os.fsencode(name)
    if b"\n" not in raw and not raw.startswith(b'"'):
        return raw
    return b'"' + raw.replace(b"\\", b"\\\\").replace(b'"', b'\\"').replace(b"\n", b"\\n") + b'"'


def escaped(relative: str) -> str:
    """``relative`` as a gitignore pattern that matches it alone: its special characters escaped."""
    return "".join("\\" + char if char in "\\*?[]!# " else char for char in relative)


def names(out: bytes) -> list[str]:
    """The paths of git's ``-z`` output."""
    return [os.fsdecode(name) for name in out.split(b"\0") if name]


def nul(paths: object) -> bytes:
    """Paths as git's ``--stdin -z`` reads them."""
    assert isinstance(paths, (set, list))
    return b"".join(os.fsencode(name) + b"\0" for name in paths)


def check_id(tree: str) -> None:
    """Refuse what is not an object id (a tree named by the page is never an option or a path to git)."""
    if not (4 <= len(tree) <= 64 and all(c in "0123456789abcdef" for c in tree)):
        raise CheckpointFailed("not a checkpoint of this session")
