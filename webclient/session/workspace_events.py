"""What the agent did in the workspace, shown in the session: a file written, a terminal's life.

The protocol adapter reports here whatever the agent did through the client (ACP: ``fs/write_text_file``,
``terminal/*``); the thread shows it, and the Changes view learns which files to look at again.
"""

from __future__ import annotations

import json
from pathlib import Path

from webclient.session.agent_spec import command_display
from webclient.session.recorder import FILE, TERMINAL, Recorder
from webclient.viewmodel.thread import Thread
from webclient.workspace.changes import ChangeTracker
from webclient.workspace.files import WriteResult
from webclient.workspace.paths import Workspace
from webclient.workspace.terminals import ExitStatus


class WorkspaceEvents:
    """The agent's work in one session's workspace, as the session shows it."""

    def __init__(self, thread: Thread, workspace: Workspace, changes: ChangeTracker, recorder: Recorder) -> None:
        self.thread = thread
        self.workspace = workspace
        self.changes = changes
        self.recorder = recorder

    def _record(self, kind: str, **body: object) -> None:
        self.recorder.record(kind, "agent", json.dumps(body))

    def file_written(self, result: WriteResult) -> None:
        self._record(FILE, path=str(result.path), old_text=result.old_text, new_text=result.new_text)
        self.thread.add_file_change(self.workspace.relative(result.path), result.old_text, result.new_text)
        self.changes.note_write(result.path)

    def terminal_started(self, terminal_id: str, command: str, args: list[str], cwd: Path) -> None:
        where = self.workspace.relative(cwd) if cwd != self.workspace.roots[0] else None
        self._record(TERMINAL, terminal=terminal_id, event="started", command=command, args=args, cwd=str(cwd))
        self.thread.terminals.started(terminal_id, command_display(command, args), where)

    def terminal_output(self, terminal_id: str, data: bytes) -> None:
        # Bytes that are not UTF-8 survive as lone surrogates, which JSON escapes (\udcXX).
        self._record(TERMINAL, terminal=terminal_id, event="output", data=data.decode("utf-8", "surrogateescape"))
        self.thread.terminals.output(terminal_id, data)

    def terminal_exited(self, terminal_id: str, status: ExitStatus) -> None:
        self._record(TERMINAL, terminal=terminal_id, event="exited", exit_code=status.exit_code, signal=status.signal)
        self.thread.terminals.exited(terminal_id, status.exit_code, status.signal)

    def terminal_released(self, terminal_id: str) -> None:
        self._record(TERMINAL, terminal=terminal_id, event="released")
        self.thread.terminals.released(terminal_id)
