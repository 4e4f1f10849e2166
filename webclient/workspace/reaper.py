"""The watchdog that stops our subprocesses when the server dies, even by ``kill -9``.

Agents and terminal commands run in sessions of their own (so that the server can stop each one's whole
process group), which also means that nobody stops them when the server is killed: they are reparented to
PID 1 and live on. The server therefore starts this small program once (``python -m webclient.workspace.reaper``, in a
session of its own, so that a Ctrl+C in the server's terminal does not reach it first) and keeps a pipe to its
stdin. Over it the server reports each process group it starts and sees end, one line each:

    +PGID       a group was started
    -PGID       that group has ended
    bye         the server stops on purpose

When the pipe closes, with or without ``bye`` (the kernel closes it for a server killed by any signal), the
watchdog SIGKILLs every process of every group still listed, and every process whose session is one of
them (a process that left its group with ``setpgid`` stays in its session), then exits. A process that
started a session of its own (a daemon) is out of its reach.
"""

from __future__ import annotations

import atexit
import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterable
from pathlib import Path

from webclient.workspace import process_group

__all__ = ["GRACEFUL_SECONDS", "STOP_SECONDS", "Reaper", "main"]

logger = logging.getLogger(__name__)

GRACEFUL_SECONDS = 2
"""How long the server waits for open requests and WebSockets when it stops (uvicorn's
``timeout_graceful_shutdown``); a handler stuck on an agent that never answers is cancelled after it."""
STOP_SECONDS = 5.0
"""How long the sessions get to stop their agents and commands gracefully, all at once, before everything
still running is SIGKILLed (`webclient.workspace.process_group.stop_within`). With `GRACEFUL_SECONDS`, a stop takes
well under 10 seconds whatever the agents do."""

_PACKAGE_PARENT = Path(__file__).resolve().parents[2]
_EXIT_WAIT = 2.0  # seconds the server waits for the watchdog to exit after ``bye``
_KILL_ROUNDS = 50  # the watchdog kills until nothing is left, at most this many times, 20 ms apart


class Reaper:
    """The server's end of the watchdog: start it, report process groups to it, say goodbye.

    One per process, as the groups it is told of (`process_group`) are the process's: started with the first app
    (`for_this_process`), told ``bye`` when the process exits. An app started again in the same process (a test's)
    reuses it rather than paying a new interpreter each time."""

    _this_process: Reaper | None = None

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        assert process.stdin is not None
        self.process = process
        self._pipe = process.stdin
        self._broken = False

    @classmethod
    def for_this_process(cls) -> Reaper:
        """This process's watchdog, started now unless one already runs."""
        running = cls._this_process
        if running is None or running._broken or running.process.poll() is not None:
            running = cls._this_process = cls._start()
            atexit.register(running.close)
        return running

    @classmethod
    def _start(cls) -> Reaper:
        """Start the watchdog and report every owned process group (`webclient.workspace.process_group`) to it."""
        process = subprocess.Popen(
            # Only the standard library and this package, found from `cwd`: no site, no environment (it starts with
            # every server: a third less CPU without them).
            [sys.executable, "-E", "-s", "-S", "-m", "webclient.workspace.reaper"],
            stdin=subprocess.PIPE,  # our end is close-on-exec: no agent inherits it and keeps it open
            stdout=subprocess.DEVNULL,
            cwd=_PACKAGE_PARENT,  # so that ``-m`` finds this very package, installed or not
            start_new_session=True,
            bufsize=0,
        )
        reaper = cls(process)
        process_group.report_to(reaper.send)
        logger.info("watchdog pid %d started", process.pid)
        return reaper

    def send(self, line: str) -> None:
        """One line of the protocol; a dead watchdog is logged once and otherwise ignored."""
        if self._broken:
            return
        try:
            self._pipe.write(f"{line}\n".encode())
        except OSError as error:
            self._broken = True
            logger.error("the watchdog is gone (%s): processes may outlive a killed server", error)

    def close(self) -> None:
        """Stop reporting, say goodbye and wait (briefly) for the watchdog to exit."""
        if self.process.poll() is not None:
            return
        process_group.report_to(None)
        self.send("bye")
        try:
            self._pipe.close()
        except OSError:
            pass
        try:
            self.process.wait(_EXIT_WAIT)
        except subprocess.TimeoutExpired:
            logger.warning("watchdog pid %d did not exit: SIGKILL", self.process.pid)
            self.process.kill()
            self.process.wait()


def _kill(groups: set[int]) -> int:
    """SIGKILL every process of `groups` and of their sessions (`process_group.members`) until none is left;
    return how many were killed."""
    killed: set[int] = set()
    for _ in range(_KILL_ROUNDS):
        members = [pid for pid in process_group.members(groups) if pid != os.getpid()]
        if not members:
            break
        killed.update(members)
        for pgid in groups:
            try:
                os.killpg(pgid, signal.SIGKILL)
            except OSError:
                pass
        for pid in members:  # those that left their group
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.02)
    return len(killed)


def watch(lines: Iterable[bytes]) -> tuple[set[int], bool]:
    """Follow the protocol until the pipe closes; return the groups still listed and whether ``bye`` came."""
    groups: set[int] = set()
    clean = False
    for raw in lines:
        line = raw.strip()
        if line == b"bye":
            clean = True
        elif line[:1] in (b"+", b"-") and line[1:].isdigit() and int(line[1:]) > 1:
            (groups.add if line[:1] == b"+" else groups.discard)(int(line[1:]))
        elif line:
            print(f"webclient watchdog: ignoring {line[:80]!r}", file=sys.stderr, flush=True)
    return groups, clean


def main() -> None:
    # Our own session already keeps the terminal's Ctrl+C away; a stray SIGINT or SIGHUP must not stop us either.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    groups, clean = watch(sys.stdin.buffer)
    killed = _kill(groups) if groups else 0
    if killed:
        why = "stopped, leaving them running" if clean else "died"
        print(
            f"webclient watchdog: the server {why}; killed {killed} processes of groups {sorted(groups)}",
            file=sys.stderr,
            flush=True,
        )


if __name__ == "__main__":
    main()
