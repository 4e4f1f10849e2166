"""The commands an agent runs through ACP ``terminal/*``: each on its own pseudo-terminal, owned and reaped.

This module keeps one session's terminals by id (`Terminals`), with a limit, and stops them all when the
session ends. Each command runs in a `webclient.workspace.terminal_process.TerminalProcess`: no shell, its own
pty and process group, started in a directory held open by descriptor. Its output is kept, bounded, in a
`webclient.workspace.output_buffer.OutputBuffer` for ``terminal/output`` and handed on raw to the session, which
shows it through `webclient.viewmodel.terminal_screen`.
Spec: https://agentclientprotocol.com/protocol/terminals
"""

from __future__ import annotations

import asyncio
import errno
import functools
import secrets
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from webclient.workspace.output_buffer import OutputBuffer
from webclient.workspace.sandbox import UNCONFINED, Sandbox
from webclient.workspace.terminal_process import ExitStatus, TerminalProcess

__all__ = ["ExitStatus", "OutputBuffer", "TerminalProcess", "Terminals", "TooManyTerminals", "UnknownTerminal"]


class UnknownTerminal(KeyError):
    """No terminal of that id in this session: never created, or already released."""

    def __init__(self, terminal_id: str) -> None:
        super().__init__(f"unknown terminal {terminal_id!r} (never created in this session, or already released)")
        self.terminal_id = terminal_id

    def __str__(self) -> str:  # KeyError would show the message in quotes
        return str(self.args[0])


class TooManyTerminals(OSError):
    """The session has `Terminals.max_terminals` unreleased terminals; an OSError like every start failure."""

    def __init__(self, limit: int) -> None:
        super().__init__(errno.EAGAIN, f"the session already has {limit} terminals; release one first")


class Terminals:
    """The terminals of one session, by id; `close` stops them all when the session ends."""

    def __init__(self, sandbox: Sandbox = UNCONFINED, *, max_terminals: int = 32) -> None:
        self.sandbox = sandbox
        """Where every command runs: the sandbox of the session's agent (its `environment` is theirs too)."""
        self.max_terminals = max_terminals
        self._terminals: dict[str, TerminalProcess] = {}
        self._starting = 0
        self._closed = False

    async def create(
        self,
        command: str,
        args: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        output_byte_limit: int | None,
        on_output: Callable[[str, bytes], None],
        on_exit: Callable[[str, ExitStatus], None],
    ) -> str:
        """Start a command (see `TerminalProcess.start`) and return its new id; the callbacks also get the id.

        Raises:
            OSError: it could not be started, `TooManyTerminals`, or the session is closing.
        """
        if self._closed:
            raise OSError(errno.ESHUTDOWN, "the session is closing")
        if len(self._terminals) + self._starting >= self.max_terminals:
            raise TooManyTerminals(self.max_terminals)
        terminal_id = f"term-{secrets.token_hex(4)}"
        while terminal_id in self._terminals:
            terminal_id = f"term-{secrets.token_hex(4)}"
        self._starting += 1
        try:
            process = await TerminalProcess.start(
                command,
                args,
                cwd=cwd,
                env=env,
                output_byte_limit=output_byte_limit,
                on_output=functools.partial(on_output, terminal_id),
                on_exit=functools.partial(on_exit, terminal_id),
                sandbox=self.sandbox,
            )
        finally:
            self._starting -= 1
        if self._closed:  # closed while it started: nobody would ever stop it
            await process.release()
            raise OSError(errno.ESHUTDOWN, "the session is closing")
        self._terminals[terminal_id] = process
        return terminal_id

    def get(self, terminal_id: str) -> TerminalProcess:
        """The terminal of that id; raises `UnknownTerminal` for unknown and released ones."""
        try:
            return self._terminals[terminal_id]
        except KeyError:
            raise UnknownTerminal(terminal_id) from None

    def __len__(self) -> int:
        return len(self._terminals)

    async def release(self, terminal_id: str) -> None:
        """Kill the terminal if it still runs and forget it: its id becomes unknown."""
        process = self._terminals.pop(terminal_id, None)
        if process is None:
            raise UnknownTerminal(terminal_id)
        await process.release()

    def reopen(self) -> None:
        """Take new terminals again after `close` (the session's agent is resumed)."""
        self._closed = False

    async def close(self) -> None:
        """Kill and release every terminal (session end, server stop); later `create` calls fail."""
        self._closed = True
        processes = list(self._terminals.values())
        self._terminals.clear()
        await asyncio.gather(*(process.release() for process in processes))
