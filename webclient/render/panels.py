"""What the side panel and lazy diff requests show: a workspace file at a line, one change as a diff.

These read the disk, so they are plain functions the web layer runs in a thread. The user may look at
any file inside the session's workspace roots, whatever the agent's own file access is; nothing outside.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from webclient.render.diffs import DiffView, FileView, build_diff, file_view
from webclient.session.core import Session
from webclient.viewmodel.content import Diff, EmbeddedResource
from webclient.viewmodel.entries import FileChange, MessageEntry, ToolCall
from webclient.workspace.files import NotText, decode
from webclient.workspace.paths import PathRefused, Workspace

VIEW_LIMIT = 4 * 1024 * 1024
"""Bytes of a file the panel shows; bigger files get a message instead."""


@dataclass(frozen=True, slots=True)
class FilePanel:
    """A file to show, or why it cannot be shown."""

    display: str
    line: int | None
    view: FileView | None
    error: str | None = None


def _viewer(session: Session) -> Workspace:
    return session.workspace.read_only()


def _absolute(session: Session, path: str) -> str:
    """A path from the page: absolute as agents send them, or relative to the session's cwd."""
    return path if os.path.isabs(path) else os.path.join(session.workspace.roots[0], path)


def _read_text(session: Session, path: str) -> str:
    """The text of a workspace file; raises with a message the user can read."""
    _resolved, data = _viewer(session).read_bytes(path, max_bytes=VIEW_LIMIT)
    return decode(data).text


def _problem(error: Exception) -> str:
    if isinstance(error, FileNotFoundError):
        return "This file does not exist (any more)."
    if isinstance(error, NotText):
        return f"This is not a text file: {error}"
    if isinstance(error, PathRefused):
        return str(error)
    if isinstance(error, OSError):
        return str(error.strerror or error)
    return str(error)


def file_panel(session: Session, path: str, line: int | None) -> FilePanel:
    """A workspace file at ``line`` (1-based), highlighted."""
    absolute = _absolute(session, path)
    display = session.display_path(absolute)
    try:
        text = _read_text(session, absolute)
    except (OSError, ValueError, PathRefused) as error:
        return FilePanel(display, line, None, _problem(error))
    return FilePanel(display, line, file_view(text, display, line))


def embedded_resource(session: Session, seq: int, index: int) -> EmbeddedResource | None:
    """The ``index``-th (1-based) item of a message's attachments or of a tool call's content, if it is
    an embedded resource."""
    entry = session.thread.get(seq)
    items = (
        entry.attachments if isinstance(entry, MessageEntry) else entry.content if isinstance(entry, ToolCall) else []
    )
    item = items[index - 1] if 0 < index <= len(items) else None
    return item if isinstance(item, EmbeddedResource) else None


def resource_panel(resource: EmbeddedResource) -> FilePanel:
    """An embedded text resource, highlighted as a file named by its URI."""
    if resource.text is None:
        return FilePanel(resource.uri, None, None, "This resource is binary: download it to open it.")
    return FilePanel(resource.uri, None, file_view(resource.text, resource.uri.rsplit("/", 1)[-1], None))


def entry_diff(session: Session, seq: int, index: int) -> DiffView | None:
    """The ``index``-th (1-based) diff of a tool call, or the diff of a file the agent wrote."""
    entry = session.thread.get(seq)
    if isinstance(entry, FileChange) and index == 1:
        return build_diff(entry.old_text, entry.new_text, entry.display_path)
    if isinstance(entry, ToolCall) and 0 < index <= len(entry.content):
        item = entry.content[index - 1]
        if isinstance(item, Diff):
            return build_diff(item.old_text, item.new_text, session.display_path(item.path))
    return None


@dataclass(frozen=True, slots=True)
class ChangePanel:
    """One changed file against its state when the session began, or why it cannot be shown."""

    display: str
    diff: DiffView | None
    error: str | None = None


def change_diff(session: Session, display: str) -> ChangePanel | None:
    """The diff of a changed file named as the Changes list names it; None if it is not a changed file."""
    change = next((c for c in session.changes.files() if session.workspace.relative(c.path) == display), None)
    if change is None:
        return None
    before = session.changes.original(change.path)
    if before is None and change.status != "added":
        return ChangePanel(display, None, "This file was too big to keep a copy of, so its change cannot be shown.")
    try:
        old = decode(before).text if before is not None else None
        new = _read_text(session, str(change.path)) if change.status != "deleted" else None
    except (OSError, ValueError, PathRefused) as error:
        return ChangePanel(display, None, _problem(error))
    if old is None and new is None:
        return ChangePanel(display, None, "This file no longer exists.")
    return ChangePanel(display, build_diff(old, new, display))
