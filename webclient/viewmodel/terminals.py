"""Terminals as the page shows them: a command, its output on an emulated screen, and how it ended.

A terminal is fed from one of two sources, and the view model does not care which: a command this client
runs for the agent (ACP ``terminal/*``), or a display-only terminal whose bytes the agent reports itself
(the ``_meta.terminal_output`` convention of claude-agent-acp and codex-acp). Tool calls embed terminals
by id; output may arrive before the tool call that shows it, so a terminal is created on first mention.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from webclient.viewmodel.changes import TerminalChanged
from webclient.viewmodel.terminal_screen import TerminalScreen

TerminalState = Literal["running", "exited", "released"]


@dataclass(eq=False)
class TerminalView:
    """One terminal; ``number`` names it in the page (agent ids are not safe as DOM ids)."""

    terminal_id: str
    number: int
    change: TerminalChanged = field(init=False, repr=False)
    """What the thread's listener is told when this terminal changes (one event, not one per output chunk)."""
    screen: TerminalScreen = field(default_factory=TerminalScreen)
    command: str | None = None
    cwd: str | None = None
    exit_code: int | None = None
    signal: str | None = None
    exited: bool = False
    released: bool = False

    def __post_init__(self) -> None:
        self.change = TerminalChanged(self.number)

    @property
    def state(self) -> TerminalState:
        if self.released and not self.exited:
            return "released"
        return "exited" if self.exited else "running"


class TerminalSet:
    """The terminals of one thread, and which tool calls embed each of them."""

    def __init__(self, listener: Callable[[TerminalChanged], None]) -> None:
        self._listener = listener
        self._by_id: dict[str, TerminalView] = {}
        self._in_order: list[TerminalView] = []
        self._embeds: dict[str, dict[int, None]] = {}

    def get(self, terminal_id: str) -> TerminalView | None:
        return self._by_id.get(terminal_id)

    def __len__(self) -> int:
        return len(self._by_id)

    def terminal(self, terminal_id: str) -> TerminalView:
        """The terminal named ``terminal_id``, created empty if this is its first mention."""
        view = self._by_id.get(terminal_id)
        if view is None:
            view = self._by_id[terminal_id] = TerminalView(terminal_id, number=len(self._in_order) + 1)
            self._in_order.append(view)
        return view

    def embedded_in(self, terminal_id: str) -> list[int]:
        """The ``seq`` of every tool call that shows this terminal, in order."""
        return list(self._embeds.get(terminal_id, ()))

    def embed(self, terminal_id: str, seq: int) -> None:
        self.terminal(terminal_id)
        self._embeds.setdefault(terminal_id, {})[seq] = None

    def started(self, terminal_id: str, command: str | None, cwd: str | None) -> None:
        view = self.terminal(terminal_id)
        view.command = command if command is not None else view.command
        view.cwd = cwd if cwd is not None else view.cwd
        self._changed(view)

    def output(self, terminal_id: str, data: bytes) -> None:
        view = self.terminal(terminal_id)
        view.screen.feed(data)
        self._changed(view)

    def exited(self, terminal_id: str, exit_code: int | None, signal: str | None) -> None:
        view = self.terminal(terminal_id)
        view.exit_code, view.signal, view.exited = exit_code, signal, True
        self._changed(view)

    def released(self, terminal_id: str) -> None:
        """The agent let go of the terminal: it keeps showing its final output."""
        view = self.terminal(terminal_id)
        view.released = True
        self._changed(view)

    def _changed(self, view: TerminalView) -> None:
        self._listener(view.change)

    def by_number(self, number: int) -> TerminalView | None:
        return self._in_order[number - 1] if 0 < number <= len(self._in_order) else None
