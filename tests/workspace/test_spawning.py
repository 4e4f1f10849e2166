"""Tests for webclient.workspace.spawning: processes started off the event loop, and their end read from a pidfd."""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.support.probes import descriptors_held
from webclient.workspace import spawning


def pidfds() -> list[tuple[str, str]]:
    return descriptors_held(lambda target: target == "anon_inode:[pidfd]")


def reaped(pid: int) -> bool:
    """Whether ``pid`` is gone from the process table: not running and not a zombie waiting for its parent."""
    return not Path(f"/proc/{pid}").exists()


def test_a_watch_let_go_before_its_process_ended_leaves_no_zombie_and_no_pidfd() -> None:
    """A loop that ends while a process it watched still runs (a test's, or a server's at its very end): the process
    is reaped all the same once it exits, and its pidfd closed (Popen would otherwise warn that it still runs)."""
    held = pidfds()

    async def watched() -> int:
        popen = await spawning.start(
            lambda: subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"]), lambda started: None
        )
        spawning.ExitWatch(popen)  # nobody waits for it: the loop ends before the process does
        return popen.pid

    pid = asyncio.run(watched())
    os.kill(pid, signal.SIGKILL)
    gc.collect()  # the loop, and with it the watch
    deadline = time.monotonic() + 10
    while not reaped(pid):
        assert time.monotonic() < deadline, "the process was never reaped"
        time.sleep(0.02)
    assert pidfds() == held
