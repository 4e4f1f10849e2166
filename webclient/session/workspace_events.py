"""What the agent did in the workspace, shown in the session: a file written, a terminal's life.

The protocol adapter reports here whatever the agent did through the client (ACP: ``fs/write_text_file``,
``terminal/*``); the thread shows it, and the Changes view learns which files to look at again. Each event is
recorded as it is shown, and `show_again` shows a recorded one again when the thread is rebuilt from the journal.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from webclient.session.agent_spec import command_display
from webclient.session.recorder import FILE, ORIGINAL, TERMINAL, Recorder
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
        changes.on_original = self.original_found

    def _show(self, kind: str, event: dict[str, Any]) -> None:
        self.recorder.record(kind, "agent", json.dumps(event))
        show_again(self.thread, kind, event)

    def file_written(self, result: WriteResult) -> None:
        path, shown_as = str(result.path), self.workspace.relative(result.path)
        self._show(FILE, {"path": path, "shown": shown_as, "old_text": result.old_text, "new_text": result.new_text})
        self.changes.note_write(result.path)

    def original_found(self, path: Path, content: bytes | None) -> None:
        """A file is listed as changed for the first time: what it was is journalled, for Changes after a restart."""
        text = content.decode("utf-8", "surrogateescape") if content is not None else None
        self.recorder.record(ORIGINAL, "agent", json.dumps({"path": str(path), "content": text}))

    def terminal_started(self, terminal_id: str, command: str, args: list[str], cwd: Path) -> None:
        where = self.workspace.relative(cwd) if cwd != self.workspace.roots[0] else None
        event = {"terminal": terminal_id, "event": "started", "command": command, "args": args, "cwd": str(cwd)}
        self._show(TERMINAL, {**event, "where": where})

    def terminal_output(self, terminal_id: str, data: bytes) -> None:
        # Bytes that are not UTF-8 survive as lone surrogates, which JSON escapes (\udcXX).
        text = data.decode("utf-8", "surrogateescape")
        self._show(TERMINAL, {"terminal": terminal_id, "event": "output", "data": text})

    def terminal_exited(self, terminal_id: str, status: ExitStatus) -> None:
        event = {"terminal": terminal_id, "event": "exited", "exit_code": status.exit_code, "signal": status.signal}
        self._show(TERMINAL, event)

    def terminal_released(self, terminal_id: str) -> None:
        self._show(TERMINAL, {"terminal": terminal_id, "event": "released"})


def originals(kind: str, event: dict[str, Any]) -> tuple[Path, bytes | None] | None:
    """The original of a file a journal's record gives (a written file's old text, an ``original`` record), or None."""
    if kind == ORIGINAL:
        content = event["content"]
        return Path(event["path"]), content.encode("utf-8", "surrogateescape") if content is not None else None
    if kind == FILE:
        old = event["old_text"]
        return Path(event["path"]), old.encode("utf-8", "surrogateescape") if old is not None else None
    return None


def show_again(thread: Thread, kind: str, event: dict[str, Any]) -> None:
    """Show one recorded workspace event on the thread, as `WorkspaceEvents` did when it happened."""
    if kind == FILE:
        thread.add_file_change(event["shown"], event["old_text"], event["new_text"])
        return
    terminal_id, terminals = event["terminal"], thread.terminals
    match event["event"]:
        case "started":
            terminals.started(terminal_id, command_display(event["command"], event["args"]), event.get("where"))
        case "output":
            terminals.output(terminal_id, event["data"].encode("utf-8", "surrogateescape"))
        case "exited":
            terminals.exited(terminal_id, event["exit_code"], event["signal"])
        case "released":
            terminals.released(terminal_id)
