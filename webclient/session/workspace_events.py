"""What the agent did in the workspace, shown in the session: a file written, a terminal's life.

The protocol adapter reports here whatever the agent did through the client (ACP: ``fs/write_text_file``,
``terminal/*``); the thread shows it, and the Changes view learns which files to look at again.
"""

from __future__ import annotations

from pathlib import Path

from webclient.session.agent_spec import command_display
from webclient.viewmodel.thread import Thread
from webclient.workspace.changes import ChangeTracker
from webclient.workspace.files import WriteResult
from webclient.workspace.paths import Workspace
from webclient.workspace.terminals import ExitStatus


class WorkspaceEvents:
    """The agent's work in one session's workspace, as the session shows it."""

    def __init__(self, thread: Thread, workspace: Workspace, changes: ChangeTracker) -> None:
        self.thread = thread
        self.workspace = workspace
        self.changes = changes

    def file_written(self, result: WriteResult) -> None:
        self.thread.add_file_change(self.workspace.relative(result.path), result.old_text, result.new_text)
        self.changes.note_write(result.path)

    def terminal_started(self, terminal_id: str, command: str, args: list[str], cwd: Path) -> None:
        where = self.workspace.relative(cwd) if cwd != self.workspace.roots[0] else None
        self.thread.terminals.started(terminal_id, command_display(command, args), where)

    def terminal_output(self, terminal_id: str, data: bytes) -> None:
        self.thread.terminals.output(terminal_id, data)

    def terminal_exited(self, terminal_id: str, status: ExitStatus) -> None:
        self.thread.terminals.exited(terminal_id, status.exit_code, status.signal)

    def terminal_released(self, terminal_id: str) -> None:
        self.thread.terminals.released(terminal_id)
