"""One command an agent runs, on its own pseudo-terminal: started without a shell, read, waited for, killed.

A command runs in its own session and process group, with stdout and stderr on the slave side of a pty (so it
colours and draws progress bars as in a terminal) and stdin on /dev/null (so nothing waits for input that will
never come). The pty is not made the controlling terminal either: a program that opens ``/dev/tty`` to ask for
a password fails at once instead of hanging. Output goes to an `OutputBuffer` and, raw, to a listener.
Killing or releasing the terminal stops its whole process group, including background children; the group
is owned (`webclient.workspace.process_group.own`) until it has ended, so the watchdog stops it if the server dies.
The command starts in the directory that was checked, held open by descriptor (``fchdir``), never by a path
that could be swapped for a symlink between the check and the start. In a sandbox (`webclient.workspace.sandbox`)
bwrap is what starts there, and enters the folder by its path inside, where only the sandbox's folders exist.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import fcntl
import functools
import logging
import os
import pty
import shlex
import shutil
import signal
import struct
import subprocess
import termios
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from webclient.workspace import process_group, spawning
from webclient.workspace.no_follow import open_directory
from webclient.workspace.output_buffer import OutputBuffer
from webclient.workspace.path_errors import PathRefused
from webclient.workspace.sandbox import UNCONFINED, Sandbox

logger = logging.getLogger(__name__)

COLUMNS, ROWS = 120, 40
"""Window size of every pty; `webclient.viewmodel.terminal_screen.TerminalScreen` defaults to the same."""

_READ_CHUNK = 1 << 16
_KILL_GRACE = 2.0  # seconds between SIGTERM and SIGKILL, and the most we wait for a killed group to go
_DRAIN_GRACE = 0.5  # seconds we wait for the last output after exit when a background child holds the pty


@dataclass(frozen=True, slots=True)
class ExitStatus:
    """How a command ended: an exit code, or the name of the signal that killed it (``"SIGKILL"``)."""

    exit_code: int | None
    signal: str | None

    @classmethod
    def from_returncode(cls, returncode: int) -> ExitStatus:
        """Convert a subprocess return code (negative: killed by that signal)."""
        if returncode >= 0:
            return cls(returncode, None)
        try:
            return cls(None, signal.Signals(-returncode).name)
        except ValueError:
            return cls(None, f"SIG{-returncode}")


class TerminalProcess:
    """One command on its own pty; create it with `TerminalProcess.start`."""

    def __init__(
        self,
        command_line: str,
        pid: int,
        exit_watch: spawning.ExitWatch,
        master: int,
        buffer: OutputBuffer,
        on_output: Callable[[bytes], None],
        on_exit: Callable[[ExitStatus], None],
    ) -> None:
        self.command_line = command_line
        self.pid = pid
        self.exit_status: ExitStatus | None = None
        self._exit = exit_watch
        self._master: int | None = master
        self._buffer = buffer
        self._on_output = on_output
        self._on_exit = on_exit
        self._loop = asyncio.get_running_loop()
        self._eof = asyncio.Event()
        self._released = False
        self._group_gone = False
        self._loop.add_reader(master, self._read)
        self._watcher = self._loop.create_task(self._watch())

    @classmethod
    async def start(
        cls,
        command: str,
        args: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        output_byte_limit: int | None,
        on_output: Callable[[bytes], None],
        on_exit: Callable[[ExitStatus], None],
        sandbox: Sandbox = UNCONFINED,
    ) -> TerminalProcess:
        """Start `command` (looked up on the PATH of `env` unless it contains a slash) with `args`, no shell.

        Args:
            cwd: the working directory, absolute and without symlinks (as the caller checked it); it is opened
                without following symlinks and entered by descriptor, so a folder on the way swapped for a
                symlink since the check makes the start fail instead of running the command elsewhere.
            env: the complete environment (the caller merges); TERM, COLUMNS and LINES are set to match the
                pty, PAGER and GIT_PAGER default to ``cat`` so nothing waits in a pager.
            output_byte_limit: bytes of output kept for `output`; None keeps everything.
            on_output: every chunk of output, raw, as it arrives.
            on_exit: the exit status, once the command exited and its output was read.
            sandbox: where it runs (bwrap's command line around it, when confined).

        Raises:
            OSError: the command could not be started; ``strerror`` says why in words (FileNotFoundError for a
                missing command, NotADirectoryError for a bad `cwd`, PermissionError, ...).
        """
        if not command:
            raise FileNotFoundError(errno.ENOENT, "empty command")
        argv = [command, *args]
        command_line = shlex.join(argv)
        if sandbox.confined and os.sep not in command and shutil.which(command, path=env.get("PATH")) is None:
            raise FileNotFoundError(errno.ENOENT, f"command {command!r} not found on PATH", command)  # not bwrap's
        try:
            cwd_fd = open_directory(Path(cwd))
        except PathRefused as refused:
            raise NotADirectoryError(errno.ENOTDIR, f"working directory changed: {refused}", str(cwd)) from None
        except (FileNotFoundError, NotADirectoryError):
            reason = f"working directory {str(cwd)!r} is not a directory"
            raise NotADirectoryError(errno.ENOTDIR, reason, str(cwd)) from None
        except OSError as exc:
            reason = f"cannot enter working directory {str(cwd)!r}: {exc.strerror}"
            raise type(exc)(exc.errno, reason, str(cwd)) from None
        full_env = {**env, "TERM": "xterm-256color", "COLUMNS": str(COLUMNS), "LINES": str(ROWS)}
        full_env.setdefault("PAGER", "cat")
        full_env.setdefault("GIT_PAGER", "cat")
        try:
            master, slave = pty.openpty()
        except OSError:
            os.close(cwd_fd)
            raise
        try:
            _configure_pty(slave)
            os.set_blocking(master, False)
            full_command = sandbox.command(argv, cwd)
        except BaseException as exc:
            for fd in (master, slave, cwd_fd):
                os.close(fd)
            if isinstance(exc, OSError):
                raise _start_error(exc, command, cwd, full_env) from exc
            raise
        setup = process_group.child_setup(parent=os.getpid(), cwd_fd=cwd_fd)

        def start() -> subprocess.Popen[bytes]:  # in the spawner's thread
            try:
                return subprocess.Popen(
                    full_command,
                    stdin=subprocess.DEVNULL,
                    stdout=slave,
                    stderr=slave,
                    env=full_env,
                    start_new_session=True,
                    preexec_fn=setup,
                )
            finally:
                os.close(slave)  # the child has its copies; ours would keep the pty from ever reaching EOF
                os.close(cwd_fd)

        try:
            popen = await spawning.start(start, functools.partial(_stop_unwanted, master=master))
        except asyncio.CancelledError:
            raise  # the pty is closed and the command stopped (`_stop_unwanted`) once the start is done
        except OSError as exc:
            os.close(master)
            raise _start_error(exc, command, cwd, full_env) from exc
        except subprocess.SubprocessError:  # fchdir failed in the child: the folder may not be entered
            os.close(master)
            reason = f"cannot enter working directory {str(cwd)!r}: {os.strerror(errno.EACCES)}"
            raise PermissionError(errno.EACCES, reason, str(cwd)) from None
        process_group.own(popen.pid)
        logger.info("terminal pid %d started in %s (sandbox %s): %s", popen.pid, cwd, sandbox.name, command_line)
        exit_watch = spawning.ExitWatch(popen)
        return cls(command_line, popen.pid, exit_watch, master, OutputBuffer(output_byte_limit), on_output, on_exit)

    def output(self) -> tuple[str, bool, ExitStatus | None]:
        """The kept output as text, whether some was dropped, and the exit status once exited."""
        return self._buffer.text(), self._buffer.truncated, self.exit_status

    async def wait_for_exit(self) -> ExitStatus:
        """Wait until the command exited and its output was read (or `_DRAIN_GRACE` passed, if a background
        child keeps the pty open)."""
        await asyncio.shield(self._watcher)  # a cancelled caller must not cancel the watch
        assert self.exit_status is not None
        return self.exit_status

    async def kill(self) -> None:
        """Stop the command and everything in its process group: SIGTERM, then SIGKILL after a grace period.

        Also stops what a command that already exited left running. The terminal stays valid: `output` and
        `wait_for_exit` work afterwards. Never raises for processes that are already gone.
        """
        # start_new_session made the command the leader: pgid == pid.
        await process_group.terminate(
            self.pid,
            running=self._running,
            leader_running=lambda: not self._exit.exited.done(),
            grace=_KILL_GRACE,
            label=f"terminal pid {self.pid}",
        )
        await asyncio.wait([self._watcher], timeout=_KILL_GRACE)

    async def release(self) -> None:
        """Kill what still runs, close the pty and stop reading. Idempotent."""
        if self._released:
            return
        self._released = True
        await self.kill()
        if not self._watcher.done():
            logger.warning("terminal pid %d did not exit after SIGKILL; no longer watched", self.pid)
            self._watcher.cancel()
            self._exit.close()
        self._close_pty()

    def _running(self) -> bool:
        if not self._exit.exited.done():
            return True
        if self._group_gone:
            return False
        # Once the group is empty its id may be reused by an unrelated process: never signal it again.
        self._group_gone = not process_group.alive(self.pid)
        if self._group_gone:
            process_group.disown(self.pid)
        return not self._group_gone

    def _read(self) -> None:
        assert self._master is not None
        data = read_pty(self._master, self.pid, "terminal")
        if data is None:
            return
        if not data:
            self._close_pty()
            return
        self._buffer.append(data)
        try:
            self._on_output(data)
        except Exception:
            logger.exception("terminal output listener failed")

    def _close_pty(self) -> None:
        if self._master is not None:
            self._loop.remove_reader(self._master)
            os.close(self._master)
            self._master = None
        self._eof.set()

    async def _watch(self) -> None:
        returncode = await self._exit.exited
        try:
            await asyncio.wait_for(self._eof.wait(), _DRAIN_GRACE)
        except TimeoutError:
            logger.info("terminal pid %d exited, but something else still holds its pty open", self.pid)
        self._buffer.finish()
        self._running()  # notes whether the group is gone already, before its id can be reused
        self.exit_status = ExitStatus.from_returncode(returncode)
        logger.info("terminal pid %d exited: %s", self.pid, self.exit_status)
        try:
            self._on_exit(self.exit_status)
        except Exception:
            logger.exception("terminal exit listener failed")


def _stop_unwanted(popen: subprocess.Popen[bytes] | None, master: int) -> None:
    """A command started (or not) for a caller that is gone: kill its group, close the pty and reap it (in the
    spawner's thread, where this runs once the start is done)."""
    os.close(master)
    if popen is not None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(popen.pid, signal.SIGKILL)
        popen.wait()


def _configure_pty(slave: int) -> None:
    """Keep "\\n" as "\\n" in the output the agent reads (no ONLCR), and give the pty its window size."""
    attributes = termios.tcgetattr(slave)
    attributes[1] &= ~termios.ONLCR  # oflag
    termios.tcsetattr(slave, termios.TCSANOW, attributes)
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))


def _start_error(exc: OSError, command: str, cwd: Path, env: Mapping[str, str]) -> OSError:
    """The same kind of OSError, with a message that says which command could not start, and why."""
    if exc.filename == str(cwd):  # subprocess reports a failed chdir with the directory as filename
        reason = f"cannot enter working directory {str(cwd)!r}: {exc.strerror}"
    elif isinstance(exc, FileNotFoundError):
        if os.sep not in command and shutil.which(command, path=env.get("PATH", os.defpath)) is None:
            reason = f"command {command!r} not found on PATH"
        elif os.sep in command and not (Path(cwd) / command).exists():
            reason = f"command {command!r} does not exist"
        else:
            reason = f"cannot execute {command!r}: its interpreter (#! line) was not found"
    elif isinstance(exc, PermissionError):
        reason = f"command {command!r} is not executable"
    else:
        reason = f"cannot execute {command!r}: {exc.strerror or exc}"
    return type(exc)(exc.errno, reason, command)


def read_pty(master: int, pid: int, what: str) -> bytes | None:
    """One read of a pty's master end (non-blocking): its bytes, ``b""`` once every slave end is closed (Linux says
    so with EIO), or None when nothing is there yet."""
    try:
        return os.read(master, _READ_CHUNK)
    except BlockingIOError:
        return None
    except OSError as exc:
        if exc.errno != errno.EIO:
            logger.warning("reading %s pid %d failed: %s", what, pid, exc)
        return b""
