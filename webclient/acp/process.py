"""Spawning and owning an agent subprocess: argv without a shell, stderr always drained, clean kills.

The agent runs in its own session (``start_new_session=True``), so it and everything it starts form one
process group that `AgentProcess.shutdown` stops as a whole (with `webclient.workspace.process_group`). The group is
owned from its start until it has ended, so the watchdog (`webclient.workspace.reaper`) stops it if the server dies.
It is started off the event loop (`webclient.workspace.spawning`), and its pipes and exit are then watched by the
loop (`_Child`).
With a sandbox (`webclient.workspace.sandbox`) the process started is bwrap, which runs the agent inside; its
environment is then the sandbox's allow-list, never the server's.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import functools
import logging
import os
import shlex
import shutil
import signal
import subprocess
from collections import deque
from collections.abc import Callable, Mapping
from pathlib import Path
from types import TracebackType
from typing import IO

from webclient.workspace import process_group, spawning
from webclient.workspace.sandbox import UNCONFINED, Sandbox

__all__ = ["AgentProcess", "AgentStartError", "StderrLog"]

logger = logging.getLogger(__name__)

_STREAM_LIMIT = 1 << 20  # StreamReader buffer before the pipe is paused; generous so big lines flow
_STDERR_CHUNK = 1 << 16


class AgentStartError(Exception):
    """The agent could not be started (missing executable, bad working directory, ...)."""

    def __init__(self, argv: list[str], reason: str) -> None:
        super().__init__(f"cannot start agent `{shlex.join(argv)}`: {reason}")
        self.argv = argv
        self.reason = reason


class StderrLog:
    """Bounded in-memory log of an agent's stderr (ring buffer; keeps the last `max_bytes`, default 1 MiB,
    and counts what was dropped).

    Sizes are counted in characters of the decoded text, which equals bytes for ASCII output.
    """

    def __init__(self, max_bytes: int = 1 << 20) -> None:
        if max_bytes <= 0:
            raise ValueError(f"max_bytes must be positive, got {max_bytes}")
        self.max_bytes = max_bytes
        self.dropped_bytes = 0
        self._chunks: deque[str] = deque()
        self._size = 0
        self._listeners: list[Callable[[str], None]] = []

    def append(self, text: str) -> None:
        """Add text, dropping the oldest contents beyond `max_bytes`; listeners see every piece."""
        if not text:
            return
        for listener in list(self._listeners):
            try:
                listener(text)
            except Exception:
                logger.exception("stderr listener failed")
        if len(text) >= self.max_bytes:
            self.dropped_bytes += self._size + len(text) - self.max_bytes
            self._chunks = deque([text[-self.max_bytes :]])
            self._size = self.max_bytes
            return
        self._chunks.append(text)
        self._size += len(text)
        while self._size > self.max_bytes:
            first = self._chunks[0]
            excess = self._size - self.max_bytes
            if len(first) <= excess:
                self._chunks.popleft()
                self._size -= len(first)
                self.dropped_bytes += len(first)
            else:
                self._chunks[0] = first[excess:]
                self._size -= excess
                self.dropped_bytes += excess

    def text(self) -> str:
        """Return the current contents."""
        joined = "".join(self._chunks)
        self._chunks = deque([joined]) if joined else deque()  # later calls need not join again
        return joined

    def tail(self, lines: int = 20) -> str:
        """Return the last `lines` lines of the current contents."""
        if lines <= 0:
            return ""
        return "\n".join(self.text().splitlines()[-lines:])

    def add_listener(self, listener: Callable[[str], None]) -> Callable[[], None]:
        """Call `listener` with each appended piece of text; returns a function that removes it."""
        self._listeners.append(listener)

        def remove() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return remove


class AgentProcess:
    """A running agent subprocess with its stdio pipes; create it with `AgentProcess.spawn`."""

    def __init__(self, argv: list[str], process: _Child, stderr_log: StderrLog) -> None:
        self.argv = argv
        self.stdin: asyncio.StreamWriter = process.stdin
        self.stdout: asyncio.StreamReader = process.stdout
        self.pid: int = process.pid
        self.stderr_log = stderr_log
        self._process = process
        self._stderr_task = asyncio.get_running_loop().create_task(self._drain_stderr(process.stderr))
        self._shutdown: asyncio.Task[int | None] | None = None

    @classmethod
    async def spawn(
        cls,
        argv: list[str],
        *,
        cwd: Path,
        env: Mapping[str, str] | None = None,
        stderr_log: StderrLog | None = None,
        sandbox: Sandbox = UNCONFINED,
    ) -> AgentProcess:
        """Start `argv` (no shell) in `cwd` with piped stdio.

        Args:
            argv: the command; ``argv[0]`` is looked up on PATH.
            cwd: working directory of the agent.
            env: extra variables merged over ``os.environ`` (but for the server's own ``WEBCLIENT_*``), which
                the agent gets (so API keys reach it).
            stderr_log: where stderr goes; a fresh 1 MiB `StderrLog` if None.
            sandbox: where it runs: as the server's own process (`UNCONFINED`), or inside bwrap, where its
                environment is ``env`` over the sandbox's allow-list of the server's variables.

        Raises:
            AgentStartError: the executable is missing or not executable, or `cwd` is not a directory.
        """
        if not argv:
            raise AgentStartError(argv, "empty command")
        if not Path(cwd).is_dir():
            raise AgentStartError(argv, f"working directory {str(cwd)!r} does not exist or is not a directory")
        # The server's own settings (its sign-in token, the key people's secrets are kept with) are not the agent's.
        full_env = sandbox.environment(os.environ, env)
        if sandbox.confined and os.sep not in argv[0] and shutil.which(argv[0], path=full_env.get("PATH")) is None:
            raise AgentStartError(argv, f"executable {argv[0]!r} not found on PATH")  # else bwrap would say it
        try:
            command = sandbox.command(argv, cwd)
        except OSError as exc:  # no way to give the sandbox what it asks for (its network): never without it
            raise AgentStartError(argv, f"{exc.strerror or exc}") from exc
        setup = process_group.child_setup(parent=os.getpid())

        def start() -> subprocess.Popen[bytes]:
            return subprocess.Popen(
                command,
                bufsize=0,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=cwd,
                env=full_env,
                start_new_session=True,
                preexec_fn=setup,
            )

        try:
            popen = await spawning.start(start, _stop_unwanted)  # a cancelled caller leaves no agent
        except FileNotFoundError as exc:
            where = "" if os.sep in argv[0] else " on PATH"
            raise AgentStartError(argv, f"executable {argv[0]!r} not found{where}") from exc
        except PermissionError as exc:
            raise AgentStartError(argv, f"executable {argv[0]!r} is not executable ({exc.strerror})") from exc
        except OSError as exc:
            raise AgentStartError(argv, f"{exc.strerror or exc}") from exc
        process_group.own(popen.pid)
        process = await _Child.attach(popen)
        logger.info("started agent pid %d (sandbox %s): %s", process.pid, sandbox.name, shlex.join(argv))
        return cls(list(argv), process, stderr_log if stderr_log is not None else StderrLog())

    @property
    def returncode(self) -> int | None:
        """The exit status once the process has exited (negative: killed by that signal), else None."""
        return self._process.returncode

    async def wait(self) -> int:
        """Wait until the process has exited and its stdio pipes are closed; return its exit status."""
        return await self._process.wait()

    async def shutdown(self, grace: float = 2.0) -> int | None:
        """Stop the agent and everything in its process group; return its exit status.

        Closes stdin and waits up to `grace` seconds; then SIGTERMs the process group and waits `grace`;
        then SIGKILLs it. Group members left behind by an agent that exited on its own are treated the
        same way. Idempotent (later calls share the first one's work) and never raises for a process
        that is already gone.
        """
        if self._shutdown is None:
            self._shutdown = asyncio.get_running_loop().create_task(self._stop(grace))
        # shield: a cancelled caller must not leave the agent half-killed.
        return await asyncio.shield(self._shutdown)

    async def __aenter__(self) -> AgentProcess:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.shutdown()

    async def _stop(self, grace: float) -> int | None:
        try:
            self.stdin.close()
        except Exception:  # an already broken pipe
            logger.debug("closing agent stdin failed", exc_info=True)
        if not await self._wait_for(grace):
            logger.info("agent pid %d still running %.1fs after stdin closed: SIGTERM", self.pid, grace)
            self._signal(signal.SIGTERM)
            if not await self._wait_for(grace):
                logger.warning("agent pid %d ignored SIGTERM for %.1fs: SIGKILL", self.pid, grace)
                self._signal(signal.SIGKILL)
                await self._wait_for(grace)  # bounded: a pipe may be held by a process outside the group
        await self._stop_stragglers(grace)
        if not process_group.alive(self.pid):
            process_group.disown(self.pid)  # else the watchdog still stops what SIGKILL could not
        # Closing the transport closes our pipe ends, which also finishes wait() if something outside
        # the group still holds the other ends.
        self._process.close()
        await asyncio.wait([self._stderr_task], timeout=grace)  # let the log take the last words
        self._stderr_task.cancel()
        return self.returncode

    async def _stop_stragglers(self, grace: float) -> None:
        """Terminate group members that outlived the agent (children it left running)."""
        await process_group.terminate(
            self.pid,
            running=lambda: process_group.alive(self.pid),
            leader_running=self._running,
            grace=grace,
            label=f"agent pid {self.pid} left processes in its group",
        )

    async def _wait_for(self, timeout: float) -> bool:
        try:
            await asyncio.wait_for(self._process.wait(), timeout)
        except TimeoutError:
            return False
        return True

    def _running(self) -> bool:
        return self._process.returncode is None

    def _signal(self, sig: signal.Signals) -> None:
        # The pgid is the agent's pid: start_new_session made it the leader. Not self._process.send_signal,
        # which can reap the agent behind asyncio's back (see webclient.workspace.process_group).
        process_group.send(self.pid, sig, leader_running=self._running())

    async def _drain_stderr(self, reader: asyncio.StreamReader) -> None:
        # Always drained: an agent blocked on a full stderr pipe would stop answering.
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        try:
            while chunk := await reader.read(_STDERR_CHUNK):
                self.stderr_log.append(decoder.decode(chunk))
        except (ConnectionError, OSError) as exc:
            logger.warning("reading agent stderr failed: %s", exc)
        self.stderr_log.append(decoder.decode(b"", final=True))


def _stop_unwanted(popen: subprocess.Popen[bytes] | None) -> None:
    """An agent started for a caller that is gone: kill it, close our ends of its pipes and reap it (in the spawner's
    thread, where this runs once the start is done)."""
    if popen is None:  # it did not start
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(popen.pid, signal.SIGKILL)
    for pipe in (popen.stdin, popen.stdout, popen.stderr):
        if pipe is not None:
            pipe.close()
    popen.wait()


class _LibuvEnd:
    """A pipe as uvloop is given it: `fileno` a duplicate of its descriptor, which libuv owns and closes, and `close`
    the original. uvloop gives libuv the file's own descriptor, and when the transport closes it closes the file too:
    one number closed twice, the second time perhaps another thread's by then (MagicStack/uvloop#763). Here that was
    the pipe of an agent starting in the spawner's thread (its start failed with EBADF, the agent left running) or
    of a checkpoint's git."""

    def __init__(self, file: IO[bytes]) -> None:
        self._file = file
        self._duplicate = os.dup(file.fileno())

    def fileno(self) -> int:
        return self._duplicate

    def close(self) -> None:
        self._file.close()


def _for_loop(loop: asyncio.AbstractEventLoop, file: IO[bytes]) -> IO[bytes] | _LibuvEnd:
    """``file`` as ``loop`` may take it as a pipe: as it is for asyncio's own loop, which closes it once."""
    return _LibuvEnd(file) if type(loop).__module__.partition(".")[0] == "uvloop" else file


class _Pipe(asyncio.StreamReaderProtocol):
    """A pipe of the agent's, attached to the loop: `closed` once it is."""

    def __init__(self, reader: asyncio.StreamReader, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(reader, loop=loop)
        self.closed: asyncio.Future[None] = loop.create_future()

    def eof_received(self) -> bool:
        super().eof_received()
        return False  # a pipe has no other half to keep open: close the transport (uvloop keeps it open on True)

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        if not self.closed.done():
            self.closed.set_result(None)


class _Child:
    """A process started off the loop (`webclient.workspace.spawning`), its pipes attached to the loop, its end read
    from a pidfd (`spawning.ExitWatch`)."""

    def __init__(self, popen: subprocess.Popen[bytes], loop: asyncio.AbstractEventLoop) -> None:
        self.pid = popen.pid
        self._exit = spawning.ExitWatch(popen)
        self._transports: list[asyncio.BaseTransport] = []
        self._pipes: list[_Pipe] = []
        self.stdin: asyncio.StreamWriter
        self.stdout = asyncio.StreamReader(limit=_STREAM_LIMIT, loop=loop)
        self.stderr = asyncio.StreamReader(limit=_STREAM_LIMIT, loop=loop)

    @classmethod
    async def attach(cls, popen: subprocess.Popen[bytes]) -> _Child:
        """Attach the pipes of a started process; a caller cancelled (or failing) midway leaves no pipe open and no
        process running: each attach awaits the loop, and one attached before is not closed by the next's failure."""
        loop = asyncio.get_running_loop()
        child = cls(popen, loop)
        assert popen.stdin is not None and popen.stdout is not None and popen.stderr is not None
        try:
            for reader, pipe in ((child.stdout, popen.stdout), (child.stderr, popen.stderr)):
                transport, protocol = await loop.connect_read_pipe(
                    functools.partial(_Pipe, reader, loop), _for_loop(loop, pipe)
                )
                child._transports.append(transport)
                child._pipes.append(protocol)
            writing, protocol = await loop.connect_write_pipe(
                functools.partial(_Pipe, asyncio.StreamReader(loop=loop), loop), _for_loop(loop, popen.stdin)
            )
        except BaseException:
            child.close()
            for pipe in (popen.stdin, popen.stdout, popen.stderr):
                pipe.close()  # those not attached yet (closing an attached one's file again is harmless)
            raise
        child._transports.append(writing)
        child.stdin = asyncio.StreamWriter(writing, protocol, None, loop)
        return child

    @property
    def returncode(self) -> int | None:
        """The exit status once the process has ended and was reaped (negative: killed by that signal)."""
        return self._exit.returncode

    async def wait(self) -> int:
        """The exit status, once the process has exited and its stdout and stderr are closed (or `close`d)."""
        code = await asyncio.shield(self._exit.exited)
        await asyncio.gather(*(pipe.closed for pipe in self._pipes))
        return code

    def close(self) -> None:
        """Close our ends of the pipes (and kill the process if it still runs, as asyncio's transport does)."""
        if not self._exit.exited.done():
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)  # not reaped yet (that is ours to do): still this process
        for transport in self._transports:
            transport.close()
