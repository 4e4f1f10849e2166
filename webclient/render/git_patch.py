"""A git patch (the v2 draft's ``patch: {format: "git_patch", text}``) as files and hunks of diff rows, drawn by the
same row macro as every other diff (``_diff.html``).

The patch is the agent's text: lines are escaped (and highlighted by the file's language, as every diff's, each side
lexed as one text of its hunks' lines), never interpreted beyond the ``diff --git`` / ``---`` / ``+++`` / ``@@``
structure, and paths are only shown. A long patch is cut (``MAX_ROWS`` rows in all), said so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from markupsafe import Markup

from webclient.render.diff_rows import Kind, UnifiedRow
from webclient.render.highlight import Lines, lexer_for

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
    lines: list[tuple[PatchHunk, Kind, int, int, str, bool]] = field(default_factory=list, repr=False)
    """Each line as read (its hunk, kind, old and new number, text, no newline at its end), until `finish` makes
    the rows."""

    def finish(self) -> None:
        """The rows of every hunk, each side's lines highlighted as one text."""
        lexer = lexer_for(self.path)
        old = [text for _, kind, _, _, text, _ in self.lines if kind != "add"]
        new = [text for _, kind, _, _, text, _ in self.lines if kind != "del"]
        sides = Lines("\n".join(old), lexer), Lines("\n".join(new), lexer)
        for lexed in sides:
            lexed.prepare([(0, len(lexed))])
        at = [0, 0]  # the next line of each side
        for hunk, kind, old_no, new_no, text, no_newline in self.lines:
            side = 0 if kind == "del" else 1
            lexed, index = sides[side], at[side]
            html = lexed.html(index) if index < len(lexed) and lexed.lines[index] == text else Markup.escape(text)
            at[0] += kind != "add"
            at[1] += kind != "del"
            hunk.rows.append(
                UnifiedRow(kind, None if kind == "add" else old_no, None if kind == "del" else new_no, html, no_newline)
            )
        self.lines = []


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
    old_no = new_no = read = 0  # read: lines of the current hunk so far
    budget = MAX_ROWS
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):  # line ends as `Lines` reads them
        if line.startswith("diff --git "):
            parts = line[len("diff --git ") :].split(" b/", 1)
            current, hunk = PatchFile(_path("b/" + parts[1]) if len(parts) == 2 else line[11:]), None
            files.append(current)
            continue
        if current is None:
            if not line.strip():
                continue
            current = PatchFile("(patch)")
            files.append(current)
        if hunk is None or line[:1] not in (" ", "+", "-", "\\") or line.startswith(("--- ", "+++ ")) and not read:
            if line.startswith("+++ ") and _path(line[4:]) != "/dev/null":
                current.path = _path(line[4:])
            elif line.startswith("--- ") and _path(line[4:]) != "/dev/null" and current.path == "(patch)":
                current.path = _path(line[4:])
            elif line.startswith(("Binary files ", "GIT binary patch")):
                current.binary = True
            elif match := _HUNK.match(line):
                old_no, new_no = int(match.group(1)), int(match.group(2))
                hunk, read = PatchHunk(line), 0
                current.hunks.append(hunk)
            continue
        if budget <= 0:
            current.cut = True
            continue
        kind = line[:1]
        if kind == "\\":
            if current.lines:  # "\ No newline at end of file": about the line before
                current.lines[-1] = (*current.lines[-1][:5], True)
            continue
        row_kind: Kind = "add" if kind == "+" else "del" if kind == "-" else "ctx"
        current.lines.append((hunk, row_kind, old_no, new_no, line[1:], False))
        old_no += row_kind != "add"
        new_no += row_kind != "del"
        current.added += row_kind == "add"
        current.removed += row_kind == "del"
        budget -= 1
        read += 1
    for file in files:
        file.finish()
    return files
