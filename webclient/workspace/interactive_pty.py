"""A command a person drives by hand: on a pseudo-terminal that is its controlling terminal, keystrokes in.

The agents' own commands (`webclient.workspace.terminal_process`) get no input and no controlling terminal, so
that nothing waits for a person. A sign-in command is the opposite: it asks for a code or a choice, may open
``/dev/tty`` to read a password, draws a menu for the window's size. So here stdin, stdout and stderr are all the
slave side of the pty, which becomes the command's controlling terminal (``TIOCSCTTY`` in its new session), and a
resize reaches it as ``SIGWINCH``.

In a sandbox (`webclient.workspace.sandbox`) bwrap runs the little program below that takes the terminal, and it
the command: it makes a session of its own inside bwrap's and takes the pty as that session's controlling terminal.

The same ownership as every subprocess of ours: its own session and process group, owned
(`webclient.workspace.process_group.own`) until it ended, so the watchdog stops it if the server dies; `close`
stops the whole group. The output kept for a page that (re)connects is bounded (`OUTPUT_LIMIT`, oldest dropped).
"""

from __future__ import annotations

import asyncio
import errno
import fcntl
import logging
import os
import pty
import shlex
import shutil
import signal
import struct
import subprocess
import sys
import termios
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from webclient.workspace import process_group
from webclient.workspace.sandbox import UNCONFINED, Sandbox
from webclient.workspace.sandbox_host import installation
from webclient.workspace.terminal_process import ExitStatus, _start_error, read_pty

__all__ = ["OUTPUT_LIMIT", "InteractivePty"]

logger = logging.getLogger(__name__)

OUTPUT_LIMIT = 256 * 1024
"""Bytes of output kept for a page that connects late or again (a sign-in prints a screenful, not a log)."""
INPUT_LIMIT = 4096
"""Bytes one keystroke message may carry (a pasted code is far shorter); more is cut."""
COLUMNS, ROWS = 100, 24

_KILL_GRACE = 2.0
_DRAIN_GRACE = 0.5


# Runs in the child, as the program exec'd after ``setsid`` and the ``dup2`` of the pty onto 0, 1 and 2 (a
# ``preexec_fn`` cannot do it: uvloop, which uvicorn uses, calls it before either), then becomes the command. In a
# sandbox it is not the leader of bwrap's new session (bwrap's init is): it makes a session of its own first.
_TAKE_TERMINAL = (
    "import fcntl, os, sys, termios\n"
    "if os.getsid(0) != os.getpid():\n"
    "    os.setsid()\n"
    "fcntl.ioctl(0, termios.TIOCSCTTY, 0)\n"
    "try:\n"
    "    os.execvp(sys.argv[1], sys.argv[1:])\n"
    "except OSError as error:\n"
    "    print(f'{sys.argv[1]}: {error.strerror}', file=sys.stderr)\n"
    "    sys.exit(127)\n"
)


class InteractivePty:
    """One command on a pty of its own; make it with `start`."""

    def __init__(self, argv: Sequence[str], process: asyncio.subprocess.Process, master: int) -> None:
        self.command_line = shlex.join(argv)
        self.pid = process.pid
        self.exit_status: ExitStatus | None = None
        self.listeners: set[Callable[[bytes], None]] = set()
        """Told every chunk of output as it arrives (the pages watching)."""
        self._process = process
        self._master: int | None = master
        self._kept = bytearray()
        self._loop = asyncio.get_running_loop()
        self._eof = asyncio.Event()
        self._loop.add_reader(master, self._read)
        self.exited: asyncio.Task[ExitStatus] = self._loop.create_task(self._watch(), name=f"sign-in-pty-{self.pid}")
        """Ends with the exit status once the command exited and its last output was read."""

    @classmethod
    async def start(
        cls, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], sandbox: Sandbox = UNCONFINED
    ) -> InteractivePty:
        """Start ``argv`` (no shell) in ``cwd`` with the complete environment ``env`` (TERM set to match), in
        ``sandbox`` (which may then also read the server's Python, which takes the terminal).

        Raises:
            OSError: it could not be started; the message says which command and why.
        """
        if not argv or not argv[0]:
            raise FileNotFoundError(errno.ENOENT, "empty command")
        full_env = {**env, "TERM": "xterm-256color", "COLUMNS": str(COLUMNS), "LINES": str(ROWS)}
        # 256 colours, not 24-bit: the page's terminal draws 24-bit colours with style attributes, which the page's
        # Content-Security-Policy refuses (docs/deployment.md, "Front-end files").
        full_env.pop("COLORTERM", None)
        if os.sep not in argv[0] and shutil.which(argv[0], path=full_env.get("PATH", os.defpath)) is None:
            raise FileNotFoundError(errno.ENOENT, f"command {argv[0]!r} not found on PATH", argv[0])
        master, slave = pty.openpty()
        try:
            fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
            os.set_blocking(master, False)
            taking = sandbox.reading(*installation([sys.executable], ""))
            process = await asyncio.create_subprocess_exec(
                *taking.command([sys.executable, "-I", "-c", _TAKE_TERMINAL, *argv], cwd),
                stdin=slave,
                stdout=slave,
                stderr=slave,
                cwd=cwd,
                env=full_env,
                start_new_session=True,
                preexec_fn=process_group.child_setup(parent=os.getpid()),
            )
        except OSError as exc:
            os.close(master)
            raise _start_error(exc, argv[0], cwd, full_env) from exc
        except subprocess.SubprocessError as exc:
            os.close(master)
            raise OSError(errno.EIO, f"cannot start {argv[0]!r} on a terminal: {exc}") from None
        finally:
            os.close(slave)  # the child has its copies; ours would keep the pty from reaching EOF
        process_group.own(process.pid)
        logger.info("sign-in terminal pid %d started in %s: %s", process.pid, cwd, shlex.join(argv))
        return cls(argv, process, master)

    @property
    def output(self) -> bytes:
        """The output kept so far (at most `OUTPUT_LIMIT` bytes, the newest)."""
        return bytes(self._kept)

    def write(self, data: bytes) -> None:
        """Keystrokes (or a paste) to the command; dropped once it ended, cut at `INPUT_LIMIT`."""
        if self._master is None or self.exit_status is not None:
            return
        try:
            os.write(self._master, data[:INPUT_LIMIT])
        except (BlockingIOError, OSError) as exc:  # a full pty buffer: the person types again
            logger.info("sign-in terminal pid %d: input dropped (%s)", self.pid, exc)

    def resize(self, columns: int, rows: int) -> None:
        """Give the pty a new window size (the kernel tells the command with SIGWINCH)."""
        if self._master is None or not (1 <= columns <= 1000 and 1 <= rows <= 500):
            return
        fcntl.ioctl(self._master, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))

    async def close(self) -> None:
        """Stop the command and its whole process group (SIGHUP, as a closed terminal would, then SIGTERM, then
        SIGKILL), close the pty. Idempotent; never raises for processes already gone."""
        if self._process.returncode is None:
            process_group.send(self.pid, signal.SIGHUP, leader_running=True)
        await process_group.terminate(
            self.pid,
            running=self._running,
            leader_running=lambda: self._process.returncode is None,
            grace=_KILL_GRACE,
            label=f"sign-in terminal pid {self.pid}",
        )
        await asyncio.wait([self.exited], timeout=_KILL_GRACE)
        if not self.exited.done():
            self.exited.cancel()
        self._close_pty()

    def _running(self) -> bool:
        if self._process.returncode is None:
            return True
        if process_group.alive(self.pid):
            return True
        process_group.disown(self.pid)
        return False

    def _read(self) -> None:
        assert self._master is not None
        data = read_pty(self._master, self.pid, "sign-in terminal")
        if data is None:
            return
        if not data:
            self._close_pty()
            return
        self._kept += data
        if len(self._kept) > OUTPUT_LIMIT:
            del self._kept[: len(self._kept) - OUTPUT_LIMIT]
        for listener in list(self.listeners):
            try:
                listener(data)
            except Exception:
                logger.exception("sign-in terminal output listener failed")

    def _close_pty(self) -> None:
        if self._master is not None:
            self._loop.remove_reader(self._master)
            os.close(self._master)
            self._master = None
        self._eof.set()

    async def _watch(self) -> ExitStatus:
        returncode = await self._process.wait()
        try:
            await asyncio.wait_for(self._eof.wait(), _DRAIN_GRACE)
        except TimeoutError:
            logger.info("sign-in terminal pid %d exited, but something else still holds its pty open", self.pid)
        self._running()  # disowns the group if it is gone already, before its id can be reused
        self.exit_status = ExitStatus.from_returncode(returncode)
        logger.info("sign-in terminal pid %d exited: %s", self.pid, self.exit_status)
        return self.exit_status
