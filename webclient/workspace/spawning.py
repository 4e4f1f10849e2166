"""Starting the processes we own from a thread of their own, and learning of their end from a pidfd: the event loop
never forks.

A fork of a server of 100 MiB took 20-40 ms (``preexec_fn`` forces one, and uvloop's libuv always forks), during
which every session waited: for each agent started, and for each command an agent runs in a terminal. So `start`
runs ``subprocess.Popen`` in one thread that lives as long as the server (``PR_SET_PDEATHSIG`` fires when the
thread that forked the child ends: `webclient.workspace.process_group.child_setup`), and `ExitWatch` reads the end
on the loop, whose own child watching knows only the processes it started.
"""

from __future__ import annotations

import asyncio
import functools
import os
import subprocess
import threading
import weakref
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

__all__ = ["ExitWatch", "start"]

_SPAWNER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="spawner")

Popen = subprocess.Popen[bytes]


async def start(popen: Callable[[], Popen], unwanted: Callable[[Popen | None], None]) -> Popen:
    """The process ``popen`` started, called in the spawner's thread.

    A caller cancelled meanwhile leaves nothing running nor open: once the start is done, ``unwanted`` gets the
    process to stop (None if it did not start), in the spawner's thread (the loop may be closing: a server stopping
    while an agent starts, and a callback it never ran would leave the process running and its descriptors open).

    Raises:
        OSError: the process could not be started (as ``subprocess.Popen`` raises it).
        subprocess.SubprocessError: ``preexec_fn`` failed in the child.
    """
    spawning = _SPAWNER.submit(popen)
    try:
        return await asyncio.shield(asyncio.wrap_future(spawning))
    except (asyncio.CancelledError, GeneratorExit):  # cancelled, or its loop closed with it pending: destroyed
        spawning.add_done_callback(functools.partial(_abandoned, unwanted=unwanted))
        raise


def _abandoned(spawning: Future[Popen], unwanted: Callable[[Popen | None], None]) -> None:
    unwanted(spawning.result() if not spawning.cancelled() and spawning.exception() is None else None)


class ExitWatch:
    """The end of a process `start` started, on the loop: `exited` holds its return code once it is reaped.

    A watch let go of before its process was reaped (its loop ended first, or `close`) leaves no zombie and no open
    pidfd: a thread of the process's own waits for it (`_let_go`)."""

    def __init__(self, popen: Popen) -> None:
        loop = asyncio.get_running_loop()
        self.exited: asyncio.Future[int] = loop.create_future()
        self._popen = popen
        self._loop = loop
        self._pidfd: list[int] = []
        """The pidfd while it is watched (a list the finalizer shares: it closes what `close` has not)."""
        try:
            pidfd = os.pidfd_open(popen.pid)
        except OSError:  # no pidfd (Linux before 5.3): a thread waits
            waiting = loop.run_in_executor(None, popen.wait)
            waiting.add_done_callback(lambda done: self._ended(done.result()))
        else:
            self._pidfd.append(pidfd)
            loop.add_reader(pidfd, self._reap)
        weakref.finalize(self, _let_go, popen, self._pidfd)

    @property
    def returncode(self) -> int | None:
        """The exit status once the process has ended and was reaped (negative: killed by that signal)."""
        return self.exited.result() if self.exited.done() else None

    def close(self) -> None:
        """Stop watching: the process is reaped when this watch is let go of. Idempotent."""
        if self._pidfd:
            pidfd = self._pidfd.pop()
            self._loop.remove_reader(pidfd)
            os.close(pidfd)

    def _reap(self) -> None:
        code = self._popen.poll()  # the pidfd is readable once the process has exited: this reaps it
        if code is not None:
            self.close()
            self._ended(code)

    def _ended(self, code: int) -> None:
        if not self.exited.done():
            self.exited.set_result(code)


def _let_go(popen: Popen, pidfd: list[int]) -> None:
    """A watch is gone: wait for its process in a thread if nothing reaped it (its loop ended before it exited)."""
    while pidfd:
        os.close(pidfd.pop())  # its loop is gone (else the watch would still be held by the reader)
    if popen.poll() is None:
        threading.Thread(target=popen.wait, name=f"reap-{popen.pid}", daemon=True).start()
