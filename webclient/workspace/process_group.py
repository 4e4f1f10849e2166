"""The process groups of the subprocesses we own: is any member still alive, and stopping them all.

Agents (`webclient.acp.process`) and the commands of agent terminals (`webclient.workspace.terminals`)
start in a session of their own (``start_new_session=True``), so each is the leader of a new process
group whose id is its pid, and what it starts (a dev server, a test watcher) stays in that group.
Stopping the leader alone would leave those running; these helpers stop the whole group.

Liveness is read from /proc and leaves out zombies: an orphaned member is reparented to PID 1, which in
a container is often not an init and may never reap it, and a zombie holds nothing open anyway.

The leader is signalled with ``os.kill``, never with ``Popen.send_signal`` (nor the asyncio transport's
``send_signal``, which calls it): in Python 3.11 that polls the child first, and a poll that reaps it
steals the exit status from asyncio's child watcher, which then reports 255 instead of the real -9.

Every group we start is *owned* (`own`) until we saw it end (`disown`). The owned groups are what the server
SIGKILLs when a graceful stop runs out of time (`kill_owned`), and what it reports, line by line, to the
watchdog that outlives a ``kill -9`` of the server (`webclient.workspace.reaper`). As a second line of defence each
child asks the kernel for SIGKILL when the server dies (`child_setup`: ``PR_SET_PDEATHSIG``); that reaches
the group leader only, which is why the watchdog exists.
"""

from __future__ import annotations

import asyncio
import ctypes
import logging
import os
import signal
import sys
from collections.abc import Awaitable, Callable, Collection

__all__ = [
    "alive",
    "child_setup",
    "disown",
    "kill_owned",
    "members",
    "own",
    "report_to",
    "send",
    "stop_within",
    "terminate",
]

logger = logging.getLogger(__name__)

POLL_INTERVAL = 0.02  # seconds between checks whether a signalled group is gone

_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
_SIGKILL = int(signal.SIGKILL)


def _load_prctl() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl: Callable[..., int] = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    return prctl


# Looked up once, here: the function that runs in a freshly forked child may import nothing and take no lock.
_prctl = _load_prctl()

_owned: set[int] = set()
_report: Callable[[str], None] | None = None


def child_setup(*, parent: int, cwd_fd: int | None = None) -> Callable[[], None]:
    """A ``preexec_fn`` for the subprocesses we own: SIGKILL when the server dies, and enter `cwd_fd`.

    ``PR_SET_PDEATHSIG`` fires when the *thread* that forked the child ends; we spawn from threads that live as
    long as the server: the spawner's (`webclient.workspace.spawning`: agents and their terminals) and the event
    loop's (a terminal sign-in). If the server died before the call, the child stops at once.
    ``fchdir`` enters the directory the caller opened (and checked), never a path that could have changed since.
    Runs in the child between fork and exec: no imports, no allocation worth the name, nothing that takes a lock.
    """
    prctl = _prctl

    def setup() -> None:
        if prctl is not None:
            prctl(_PR_SET_PDEATHSIG, _SIGKILL, 0, 0, 0)
            if os.getppid() != parent:
                os.kill(os.getpid(), _SIGKILL)
        if cwd_fd is not None:
            os.fchdir(cwd_fd)

    return setup


def own(pgid: int) -> None:
    """Note a process group we started; it is ours to stop until `disown`."""
    _owned.add(pgid)
    _tell(f"+{pgid}")


def disown(pgid: int) -> None:
    """The group has ended (or was never started): forget it. Idempotent."""
    if pgid in _owned:
        _owned.discard(pgid)
        _tell(f"-{pgid}")


def report_to(report: Callable[[str], None] | None) -> None:
    """Send ``+PGID`` for every owned group now, and ``+PGID`` / ``-PGID`` for every change from now on, to
    `report` (the watchdog's pipe); None stops reporting."""
    global _report
    _report = report
    for pgid in sorted(_owned):
        _tell(f"+{pgid}")


def _tell(line: str) -> None:
    if _report is not None:
        try:
            _report(line)
        except Exception:
            logger.exception("reporting %s to the watchdog failed", line)


def kill_owned() -> None:
    """SIGKILL every owned group at once (a stop that ran out of time). Their owners still reap and disown them."""
    for pgid in sorted(_owned):
        if alive(pgid):
            logger.warning("process group %d still running at the deadline: SIGKILL", pgid)
            send(pgid, signal.SIGKILL, leader_running=False)


def members(groups: Collection[int]) -> list[int]:
    """Live (non-zombie) processes whose process group or session is one of `groups`, from /proc.

    Every group we start is also a session of its own (its id is the session id), so a process that left
    the group with ``setpgid`` (a shell's job, a tool that puts its workers in a group) is still found by its
    session. Only a process that starts a session of its own escapes.
    """
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue  # exited meanwhile
        # After the command name: state, ppid, pgrp, session.
        if len(fields) > 3 and fields[0] not in (b"Z", b"X") and (int(fields[2]) in groups or int(fields[3]) in groups):
            found.append(int(entry))
    return found


def alive(pgid: int) -> bool:
    """Whether any live (non-zombie) process is in process group `pgid`, or in the session of that id."""
    try:
        return bool(members((pgid,)))
    except OSError:  # no procfs: ask the kernel (counts zombies too, which is the safe side)
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            pass
        return True


def send(pgid: int, sig: signal.Signals, *, leader_running: bool) -> None:
    """Send `sig` to process group `pgid`, to the processes of the session of that id that left the group, and to
    the leader (pid `pgid`) too while it has not exited.

    The leader may have moved itself to another group, hence the extra signals; once asyncio has seen it
    exit, its pid may belong to someone else, hence `leader_running`. Never raises for processes that are
    already gone.
    """
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        pass
    except PermissionError:
        logger.warning("not allowed to signal process group %d", pgid)
    try:
        strays = [pid for pid in members((pgid,)) if pid != pgid]
    except OSError:
        strays = []
    if leader_running:
        strays.append(pgid)
    for pid in strays:
        try:
            os.kill(pid, sig)  # not Popen.send_signal: see the module docstring
        except ProcessLookupError:
            pass


async def terminate(
    pgid: int,
    *,
    running: Callable[[], bool],
    leader_running: Callable[[], bool],
    grace: float,
    label: str,
) -> None:
    """SIGTERM the group, then SIGKILL it if it still runs `grace` seconds later; wait up to `grace` after that.

    Args:
        running: whether something that must stop still runs (the leader, or any member of the group);
            polled every `POLL_INTERVAL` seconds.
        leader_running: whether the leader has not exited yet (see `send`).
        label: names the group in the log, e.g. ``"terminal pid 123"``.
    """
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if not running():
            return
        logger.info("%s: %s to its process group", label, sig.name)
        send(pgid, sig, leader_running=leader_running())
        deadline = loop.time() + grace
        while running() and loop.time() < deadline:
            await asyncio.sleep(POLL_INTERVAL)


async def stop_within(deadline: float, stopping: Awaitable[object]) -> None:
    """Give a graceful stop `deadline` seconds; then SIGKILL every owned group and let it finish (briefly).

    The server's stop is bounded this way whatever the agents do: ignore EOF and SIGTERM, hold commands
    running, never answer. What is still stopping a second after the kill is cancelled.
    """
    task = asyncio.ensure_future(stopping)
    done, _ = await asyncio.wait([task], timeout=deadline)
    if not done:
        logger.warning("stopping took longer than %.1fs: killing what still runs", deadline)
        kill_owned()
        done, _ = await asyncio.wait([task], timeout=1.0)
    if not done:
        task.cancel()
    await asyncio.gather(task, return_exceptions=True)
