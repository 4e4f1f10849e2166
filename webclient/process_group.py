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
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from collections.abc import Callable

__all__ = ["alive", "send", "terminate"]

logger = logging.getLogger(__name__)

POLL_INTERVAL = 0.02  # seconds between checks whether a signalled group is gone


def alive(pgid: int) -> bool:
    """Whether any live (non-zombie) process is in process group `pgid`."""
    try:
        entries = os.listdir("/proc")
    except OSError:  # no procfs: ask the kernel (counts zombies too, which is the safe side)
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            pass
        return True
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue  # exited meanwhile
        # After the command name: state, ppid, pgrp.
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            return True
    return False


def send(pgid: int, sig: signal.Signals, *, leader_running: bool) -> None:
    """Send `sig` to process group `pgid`, and to its leader (pid `pgid`) too while it has not exited.

    The leader may have moved itself to another group, hence the second signal; once asyncio has seen it
    exit, its pid may belong to someone else, hence `leader_running`. Never raises for processes that are
    already gone.
    """
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        pass
    except PermissionError:
        logger.warning("not allowed to signal process group %d", pgid)
    if leader_running:
        try:
            os.kill(pgid, sig)  # not Popen.send_signal: see the module docstring
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
