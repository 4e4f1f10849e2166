"""The highlighted rows of a diff or a file view, built only when a row is shown.

Lexing is by far the slowest step of showing a diff, so nothing is highlighted until a row needs it:
`TextPair` holds the two texts of one diff and lexes, in one pass over each, what its hunks and the gaps that
come with the page show. A replaced block pairs its deleted and added lines one by one, and each pair has its
changed characters emphasised (:func:`webclient.render.highlight.emphasis`). The rows carry the highlighted
lines as markup; the templates ``_diff.html`` and ``_file_view.html`` lay them out.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import zip_longest
from typing import Literal

from markupsafe import Markup

from webclient.render.highlight import Lines, emphasis, paired
from webclient.workspace.patience import Op

Kind = Literal["add", "del", "ctx"]


@dataclass(frozen=True, slots=True)
class UnifiedRow:
    kind: Kind
    old_no: int | None
    new_no: int | None
    html: Markup
    no_newline: bool = False
    """This is the last line of its file and has no newline at its end."""


@dataclass(frozen=True, slots=True)
class Cell:
    kind: Kind
    no: int
    html: Markup
    no_newline: bool = False


@dataclass(frozen=True, slots=True)
class SplitRow:
    left: Cell | None
    right: Cell | None


@dataclass(frozen=True, slots=True)
class FileLine:
    no: int
    html: Markup
    target: bool = False
    no_newline: bool = False


class TextPair:
    """The two texts of a diff and how their unchanged lines line up; shared by its hunks and gaps."""

    def __init__(self, old: Lines, new: Lines, ops: list[Op]) -> None:
        self.old, self.new = old, new
        self.equal = [(j1, j2, i1) for tag, i1, _, j1, j2 in ops if tag == "equal"]
        self.hunks: list[tuple[Op, ...]] = []
        self.small_gaps: list[tuple[int, int]] = []  # shown with the page: lexed with the hunks
        self._prepared = False
        for i1, i2, j1, j2 in (op[1:] for op in ops if op[0] == "replace"):
            old.keep_tokens.update(range(i1, i1 + paired(i2 - i1, j2 - j1)))
            new.keep_tokens.update(range(j1, j1 + paired(i2 - i1, j2 - j1)))

    def prepare(self) -> None:
        """Lex what every hunk shows, both texts at once (windows shared between nearby hunks)."""
        if not self._prepared:
            self._prepared = True
            changed = [[op for op in ops if op[0] in ("delete", "replace")] for ops in self.hunks]
            self.old.prepare((ops[0][1], ops[-1][2]) for ops in changed if ops)
            self.new.prepare([*((ops[0][3], ops[-1][4]) for ops in self.hunks), *self.small_gaps])

    def old_no(self, new_no: int) -> int:
        """The old line number of an unchanged new line (the same number if it is not unchanged)."""
        for j1, j2, i1 in self.equal:
            if j1 < new_no <= j2:
                return i1 + new_no - j1
        return new_no


def unified_rows(pair: TextPair, ops: tuple[Op, ...]) -> list[UnifiedRow]:
    """The rows of one hunk in one column: its context, then each change's deleted and added lines."""
    pair.prepare()
    old, new = pair.old, pair.new
    rows: list[UnifiedRow] = []
    for tag, i1, i2, j1, j2 in ops:
        if tag == "equal":
            rows += [
                UnifiedRow("ctx", i1 + k + 1, j + 1, new.html(j), new.last(j)) for k, j in enumerate(range(j1, j2))
            ]
            continue
        pairs = [emphasis(old.lines[i1 + k], new.lines[j1 + k]) for k in range(paired(i2 - i1, j2 - j1))]
        for k, i in enumerate(range(i1, i2)):
            rows.append(UnifiedRow("del", i + 1, None, old.html(i, pairs[k][0] if k < len(pairs) else ()), old.last(i)))
        for k, j in enumerate(range(j1, j2)):
            rows.append(UnifiedRow("add", None, j + 1, new.html(j, pairs[k][1] if k < len(pairs) else ()), new.last(j)))
    return rows


def split_rows(unified: list[UnifiedRow]) -> list[SplitRow]:
    """Old left, new right; a replaced block pairs its deleted and added lines one by one."""
    rows: list[SplitRow] = []
    dels: list[Cell] = []
    adds: list[Cell] = []
    for row in [*unified, None]:
        if row is not None and row.kind == "del":
            dels.append(Cell("del", row.old_no or 0, row.html, row.no_newline))
        elif row is not None and row.kind == "add":
            adds.append(Cell("add", row.new_no or 0, row.html, row.no_newline))
        else:
            rows += [SplitRow(left, right) for left, right in zip_longest(dels, adds)]
            dels, adds = [], []
            if row is not None:
                left = Cell("ctx", row.old_no or 0, row.html, row.no_newline)
                rows.append(SplitRow(left, Cell("ctx", row.new_no or 0, row.html, row.no_newline)))
    return rows


def context_rows(pair: TextPair, start: int, end: int) -> list[UnifiedRow]:
    """The unchanged lines ``start``..``end`` (new-file numbers, within the file) as context rows."""
    new = pair.new
    pair.prepare()  # lexes hunks and small gaps together, the way the page shows them
    new.prepare([(start - 1, end)])
    rows = []
    for j1, j2, i1 in pair.equal:
        for j in range(max(j1, start - 1), min(j2, end)):
            rows.append(UnifiedRow("ctx", i1 + j - j1 + 1, j + 1, new.html(j), new.last(j)))
    return rows


def file_lines(source: Lines, start: int, end: int, target: int | None) -> list[FileLine]:
    """Lines ``start``..``end`` of a file (clamped to it), ``target`` marked."""
    start, end = max(start, 1), min(end, len(source))
    source.prepare([(start - 1, end)])
    return [FileLine(no, source.html(no - 1), no == target, source.last(no - 1)) for no in range(start, end + 1)]
