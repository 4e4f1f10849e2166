"""A git patch (the v2 draft's ``patch: {format: "git_patch", text}``) as files and hunks of diff rows, drawn by the
same row macro as every other diff (``_diff.html``).

The patch is the agent's text: lines are escaped, never interpreted beyond the ``diff --git`` / ``---`` / ``+++`` /
``@@`` structure, and paths are only shown. A long patch is cut (``MAX_ROWS`` rows in all), said so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from markupsafe import Markup, escape

from webclient.render.diff_rows import UnifiedRow

MAX_ROWS = 5000
"""Rows drawn per patch at most."""

_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")


@dataclass(slots=True)
class PatchHunk:
    header: str
    rows: list[UnifiedRow] = field(default_factory=list)


@dataclass(slots=True)
class PatchFile:
    path: str
    hunks: list[PatchHunk] = field(default_factory=list)
    binary: bool = False
    added: int = 0
    removed: int = 0
    cut: bool = False


def _path(value: str) -> str:
    """The path of a ``---``/``+++`` line: its ``a/``/``b/`` prefix and any tab-separated timestamp left out."""
    value = value.split("\t", 1)[0].strip()
    if value.startswith('"') and value.endswith('"') and len(value) > 1:
        value = value[1:-1]
    return value[2:] if value[:2] in ("a/", "b/") else value


def git_patch(text: str) -> list[PatchFile]:
    """The files of a git patch, in order, with their hunks as unified rows (old and new line numbers)."""
    files: list[PatchFile] = []
    current: PatchFile | None = None
    hunk: PatchHunk | None = None
    old_no = new_no = 0
    budget = MAX_ROWS
    for line in text.splitlines():
        if line.startswith("diff --git "):
            parts = line[len("diff --git ") :].split(" b/", 1)
            current, hunk = PatchFile(_path("b/" + parts[1]) if len(parts) == 2 else line[11:]), None
            files.append(current)
            continue
        if current is None:
            current = PatchFile("(patch)")
            files.append(current)
        if hunk is None or line[:1] not in (" ", "+", "-", "\\") or line.startswith(("--- ", "+++ ")) and not hunk.rows:
            if line.startswith("+++ ") and _path(line[4:]) != "/dev/null":
                current.path = _path(line[4:])
            elif line.startswith("--- ") and _path(line[4:]) != "/dev/null" and current.path == "(patch)":
                current.path = _path(line[4:])
            elif line.startswith(("Binary files ", "GIT binary patch")):
                current.binary = True
            elif match := _HUNK.match(line):
                old_no, new_no = int(match.group(1)), int(match.group(2))
                hunk = PatchHunk(line)
                current.hunks.append(hunk)
            continue
        if budget <= 0:
            current.cut = True
            continue
        kind = line[:1]
        body = Markup(escape(line[1:]))
        if kind == "\\":
            if hunk.rows:  # "\ No newline at end of file": about the row before
                last = hunk.rows[-1]
                hunk.rows[-1] = UnifiedRow(last.kind, last.old_no, last.new_no, last.html, True)
            continue
        if kind == "+":
            hunk.rows.append(UnifiedRow("add", None, new_no, body))
            new_no += 1
            current.added += 1
        elif kind == "-":
            hunk.rows.append(UnifiedRow("del", old_no, None, body))
            old_no += 1
            current.removed += 1
        else:
            hunk.rows.append(UnifiedRow("ctx", old_no, new_no, body))
            old_no += 1
            new_no += 1
        budget -= 1
    return files
