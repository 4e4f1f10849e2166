"""Tests for webclient.workspace.spawning: processes started off the event loop, and their end read from a pidfd."""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import subprocess
import sys
import threading
import time
import warnings
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


def test_a_start_whose_loop_closes_before_it_is_done_leaves_nothing_running_nor_open(tmp_path: Path) -> None:
    """A loop closed with a start still pending (a test's app, or a server, gone while an agent starts): the task is
    never resumed, nor cancelled, but destroyed. The process started meanwhile was left running and its pipes open
    (found by the garbage collector later, in another test: "subprocess is still running", "unclosed file")."""
    marker = str(tmp_path / "orphaned-start")
    release = threading.Event()

    def slow_start() -> subprocess.Popen[bytes]:
        release.wait(10)  # the loop is gone by the time the process starts
        argv = [sys.executable, "-c", "import time; time.sleep(30)", marker]
        return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def stop(popen: subprocess.Popen[bytes] | None) -> None:
        if popen is not None:
            popen.kill()
            for pipe in (popen.stdout, popen.stderr):
                assert pipe is not None
                pipe.close()
            popen.wait()
        stopped.append(popen)

    stopped: list[subprocess.Popen[bytes] | None] = []
    loop = asyncio.new_event_loop()
    task = loop.create_task(spawning.start(slow_start, stop))
    loop.run_until_complete(asyncio.sleep(0.05))  # the start is under way in the spawner's thread
    loop.close()  # as a loop that ends with the task pending
    del task
    with warnings.catch_warnings():
        warnings.simplefilter("error", ResourceWarning)
        gc.collect()  # the task and its coroutine go: the start learns that nobody awaits it any more
        release.set()
        spawning._SPAWNER.submit(lambda: None).result(timeout=10)  # the start, and what follows it, are done
        gc.collect()
    assert len(stopped) == 1 and stopped[0] is not None and stopped[0].returncode is not None
