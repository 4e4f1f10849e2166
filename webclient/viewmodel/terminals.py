"""Terminals as the page shows them: a command, its output on an emulated screen, and how it ended.

A terminal is fed from one of two sources, and the view model does not care which: a command this client
runs for the agent (ACP ``terminal/*``), or a display-only terminal whose bytes the agent reports itself
(the ``_meta.terminal_output`` convention of claude-agent-acp and codex-acp). Tool calls embed terminals
by id; output may arrive before the tool call that shows it, so a terminal is created on first mention.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from webclient.viewmodel.events import TerminalChanged

if TYPE_CHECKING:  # imported at the first terminal: pyte and wcwidth are 1.5 MiB of an idle server
    from webclient.viewmodel.terminal_screen import TerminalScreen

TerminalStatus = Literal["running", "exited", "released"]

KEPT_BYTES = 256 * 1024
"""Output bytes an agent-owned terminal keeps (its newest) to lay them out again when the agent gives it a new
size."""


def _screen(*size: int) -> TerminalScreen:
    """A new `TerminalScreen` (``columns, rows``; none: the default size)."""
    from webclient.viewmodel.terminal_screen import TerminalScreen

    return TerminalScreen(*size)


@dataclass(eq=False)
class TerminalView:
    """One terminal; ``number`` names it in the page (agent ids are not safe as DOM ids)."""

    terminal_id: str
    number: int
    change: TerminalChanged = field(init=False, repr=False)
    """What the thread's listener is told when this terminal changes (one event, not one per output chunk)."""
    screen: TerminalScreen = field(default_factory=_screen)
    command: str | None = None
    cwd: str | None = None
    exit_code: int | None = None
    signal: str | None = None
    exited: bool = False
    released: bool = False
    size: tuple[int, int] | None = None
    """(columns, rows) the agent said its command uses (v2 ``terminal_update.size``); None: this client's default."""
    can_cancel: bool = False
    """The agent advertises ``capabilities.cancel`` on it now: the only time ``terminal/cancel`` may be sent."""
    stop_asked: bool = False
    """The user asked the agent to stop it: "Stopping…" until it exits."""
    resets: int = 0
    """Counts the times its output was replaced (a snapshot, a new size): a page re-renders it whole."""
    agent_owned: bool = False
    """The agent reports it with the v2 draft's ``terminal_update``: it may be given a size, so its output is kept."""
    kept: bytearray = field(default_factory=bytearray, repr=False)

    def __post_init__(self) -> None:
        self.change = TerminalChanged(self.number)

    @property
    def shown_state(self) -> str:
        """What a page compares to tell whether to re-render the terminal whole (its head changed, or its output was
        replaced) rather than append to its output."""
        return repr((self.state, self.resets, self.stoppable, self.stop_asked, self.command, self.cwd, self.size))

    @property
    def stoppable(self) -> bool:
        return self.can_cancel and not self.exited

    @property
    def state(self) -> TerminalStatus:
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
        if view.agent_owned:
            view.kept += data
            if len(view.kept) > KEPT_BYTES:
                del view.kept[: len(view.kept) - KEPT_BYTES]
        self._changed(view)

    def replace_output(self, terminal_id: str, data: bytes) -> None:
        """The agent's snapshot of all the terminal's bytes (v2 ``terminal_update.output``) replaces what it had."""
        view = self.terminal(terminal_id)
        view.kept = bytearray()
        self._redraw(view)
        self.output(terminal_id, data)

    def resize(self, terminal_id: str, size: tuple[int, int] | None) -> None:
        """The size the command's output is laid out for (None: this client's default): the output kept is laid
        out again."""
        view = self.terminal(terminal_id)
        if view.size != size:
            view.size = size
            self._redraw(view)
            view.screen.feed(bytes(view.kept))
            self._changed(view)

    def reopen(self, terminal_id: str) -> None:
        """Its exit status was cleared (patch semantics): it runs again as far as the page is concerned."""
        view = self.terminal(terminal_id)
        view.exited, view.exit_code, view.signal, view.stop_asked = False, None, None, False
        self._changed(view)

    def set_cancel(self, terminal_id: str, can_cancel: bool) -> None:
        view = self.terminal(terminal_id)
        view.can_cancel = can_cancel
        self._changed(view)

    def ask_stop(self, terminal_id: str) -> bool:
        """The user asked to stop it: True (and shown "Stopping…") when the agent advertises it can."""
        view = self.get(terminal_id)
        if view is None or not view.stoppable:
            return False
        view.stop_asked = True
        self._changed(view)
        return True

    @staticmethod
    def _redraw(view: TerminalView) -> None:
        columns, rows = view.size or (view.screen.columns, view.screen.rows)
        view.screen = _screen(columns, rows) if view.size else _screen()
        view.resets += 1

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
