"""Diffs and files that read like a code review: hunks with context, collapsed gaps, highlighted lines.

ACP gives whole texts (``oldText``/``newText``), so the changed lines are found here, with the patience
diff of :mod:`webclient.workspace.patience`. Changes are grouped into hunks with ``context`` lines around them;
the unchanged runs in between become gaps that the page opens on request. Lines are highlighted by
:mod:`webclient.render.highlight` only when a row is shown, because lexing is by far the slowest step; what
was built and lexed is kept with the last few texts (a small LRU keyed by a hash), so the request that
opens a gap does not diff or lex again.

This module is the model: hunks, gaps, views and what opening a gap shows, and which layout (unified or split)
a diff is drawn in. The highlighted rows are built by :mod:`webclient.render.diff_rows`; this module makes no HTML
of its own, the templates ``_diff.html`` and ``_file_view.html`` lay the rows out.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Generic, Literal, TypeVar

from webclient.render.diff_rows import (
    Cell,
    FileLine,
    SplitRow,
    TextPair,
    UnifiedRow,
    context_rows,
    file_lines,
    split_rows,
    unified_rows,
)
from webclient.render.highlight import Lines, lexer_for
from webclient.workspace.patience import Op, opcodes

__all__ = [
    "CHUNK",
    "CONTEXT",
    "FILE_WINDOW",
    "Cell",
    "DiffLayout",
    "DiffView",
    "Expansion",
    "FileLine",
    "FileView",
    "GapBlock",
    "HunkBlock",
    "SplitRow",
    "UnifiedRow",
    "build_diff",
    "diff_layout",
    "expand_file",
    "expand_gap",
    "file_view",
    "gap_rows",
    "parse_gap",
]

DiffLayout = Literal["unified", "split"]
Status = Literal["added", "deleted", "modified", "unchanged"]
T = TypeVar("T")

CONTEXT = 3
MIN_GAP = 2  # a single unchanged line is shown rather than hidden behind a row of the same height
SMALL_GAP = 40  # gaps up to this many lines come hidden in the page; bigger ones load on request
CHUNK = 2000  # lines one lazy request returns at most
FILE_WINDOW = 1000  # lines a file view shows at first; the rest loads on request
LARGE_ROWS = 400
LARGE_CHARS = 200_000
CACHE_SIZE = 8


@dataclass(frozen=True, slots=True)
class GapBlock:
    """Unchanged lines left out: ``start``..``end`` in the new file, ``old_start``..``old_end`` in the old."""

    start: int
    end: int
    old_start: int
    old_end: int
    is_gap = True

    @property
    def count(self) -> int:
        return self.end - self.start + 1

    @property
    def is_small(self) -> bool:
        """Small enough to come hidden with the page rather than load when opened."""
        return self.count <= SMALL_GAP


@dataclass(frozen=True, eq=False)
class HunkBlock:
    """Changed lines with their context; the rows of both views are built when first asked for."""

    old_start: int
    old_count: int
    new_start: int
    new_count: int
    ops: tuple[Op, ...] = field(repr=False)
    pair: TextPair = field(repr=False)
    is_gap = False

    @property
    def header(self) -> str:
        return f"@@ -{self.old_start},{self.old_count} +{self.new_start},{self.new_count} @@"

    @cached_property
    def unified_rows(self) -> list[UnifiedRow]:
        return unified_rows(self.pair, self.ops)

    @cached_property
    def split_rows(self) -> list[SplitRow]:
        """Old left, new right; a replaced block pairs its deleted and added lines one by one."""
        return split_rows(self.unified_rows)

    @property
    def row_count(self) -> int:
        return sum(
            (i2 - i1 if tag != "insert" else 0) + (j2 - j1 if tag in ("insert", "replace") else 0)
            for tag, i1, i2, j1, j2 in self.ops
        )


@dataclass(frozen=True, eq=False)
class FileView:
    """A file as numbered, highlighted lines; long files show a window and load the rest on request."""

    path: str
    language: str | None
    total_lines: int
    target_line: int | None
    lines: list[FileLine]
    before: GapBlock | None
    after: GapBlock | None
    no_newline_at_end: bool
    source: Lines = field(repr=False)


@dataclass(frozen=True, slots=True)
class Expansion(Generic[T]):
    """What one click on a gap shows: rows, and what stays hidden before or after them."""

    rows: list[T]
    before: GapBlock | None = None
    after: GapBlock | None = None


@dataclass(frozen=True, eq=False)
class DiffView:
    path: str
    status: Status
    added: int
    removed: int
    language: str | None
    total_lines: int
    """Lines of the new file (of the old one when it was deleted)."""
    blocks: list[HunkBlock | GapBlock]
    no_newline_at_end_old: bool
    no_newline_at_end_new: bool
    rendered_chars: int = field(repr=False)
    pair: TextPair = field(repr=False)

    @property
    def rendered_rows(self) -> int:
        if self.status in ("added", "deleted"):
            return self.total_lines
        return sum(1 if isinstance(block, GapBlock) else block.row_count for block in self.blocks)

    @property
    def is_large(self) -> bool:
        """Too big to show unasked: the page collapses it and loads the body when opened."""
        return self.rendered_rows > LARGE_ROWS or self.rendered_chars > LARGE_CHARS

    @property
    def digits(self) -> int:
        """Width of the longest line number, so that the gutters do not shift when gaps open."""
        return len(str(max(len(self.pair.old), len(self.pair.new))))

    @property
    def open_by_default(self) -> bool:
        return not self.is_large and self.status != "deleted"

    @cached_property
    def file(self) -> FileView | None:
        """A new file shows as a file (not a wall of green), a deleted one as the file it was."""
        if self.status not in ("added", "deleted"):
            return None
        source = self.pair.new if self.status == "added" else self.pair.old
        return _file_view(source, self.path, self.language, None)


class _Cache(Generic[T]):
    """The last few results by a hash of their inputs: a lazy request asks about what was just built."""

    def __init__(self, size: int) -> None:
        self._items: OrderedDict[bytes, T] = OrderedDict()
        self._size = size
        self._lock = threading.Lock()

    def get(self, key: bytes, make: Callable[[], T]) -> T:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        value = make()
        with self._lock:
            self._items[key] = value
            while len(self._items) > self._size:
                self._items.popitem(last=False)
        return value


_DIFFS: _Cache[DiffView] = _Cache(CACHE_SIZE)
_FILES: _Cache[Lines] = _Cache(CACHE_SIZE)


def _key(*parts: str | None) -> bytes:
    digest = hashlib.blake2b(digest_size=20)
    for part in parts:
        data = b"" if part is None else part.encode("utf-8", "surrogatepass")
        digest.update(b"N" if part is None else len(data).to_bytes(8, "big"))
        digest.update(data)
    return digest.digest()


def _group(ops: list[Op], pair: TextPair, context: int) -> list[HunkBlock | GapBlock]:
    """Hunks of changes with ``context`` lines around, and gaps for the unchanged runs between."""
    blocks: list[HunkBlock | GapBlock] = []
    hunk: list[Op] = []

    def close() -> None:
        if hunk:
            first, last = hunk[0], hunk[-1]
            blocks.append(
                HunkBlock(first[1] + 1, last[2] - first[1], first[3] + 1, last[4] - first[3], tuple(hunk), pair)
            )
            pair.hunks.append(tuple(hunk))
            hunk.clear()

    for index, (tag, i1, i2, j1, j2) in enumerate(ops):
        lead = context if index > 0 else 0  # lines kept after the change before
        trail = context if index < len(ops) - 1 else 0  # and before the change after
        if tag != "equal" or i2 - i1 - lead - trail < MIN_GAP:
            hunk.append((tag, i1, i2, j1, j2))
            continue
        if lead:
            hunk.append(("equal", i1, i1 + lead, j1, j1 + lead))
        close()
        blocks.append(gap := GapBlock(j1 + lead + 1, j2 - trail, i1 + lead + 1, i2 - trail))
        if gap.is_small:
            pair.small_gaps.append((gap.start - 1, gap.end))
        if trail:
            hunk.append(("equal", i2 - trail, i2, j2 - trail, j2))
    close()
    return blocks


def _keys(side: Lines) -> list[Hashable]:
    """What is compared: the lines, the last one marked when it has no newline (a change git shows)."""
    keys: list[Hashable] = list(side.lines)
    if side.no_newline:
        keys[-1] = (keys[-1], "no newline")
    return keys


def build_diff(old: str | None, new: str | None, path: str, *, context: int = CONTEXT) -> DiffView:
    """The diff of two texts of ``path`` (None: the file did not exist before / does not any more).

    Cheap to call again with the same texts: the result, and what was highlighted of it, is cached.
    """
    if old is None and new is None:
        raise ValueError(f"a diff of {path!r} needs an old or a new text; both are None")
    return _DIFFS.get(_key(path, old, new, str(context)), lambda: _build(old, new, path, context))


def _build(old: str | None, new: str | None, path: str, context: int) -> DiffView:
    lexer = lexer_for(path)
    a, b = Lines(old or "", lexer), Lines(new or "", lexer)
    if old is None or new is None:
        ops: list[Op] = [("insert", 0, 0, 0, len(b))] if old is None else [("delete", 0, len(a), 0, 0)]
        ops = ops if len(a) + len(b) else []
    else:
        ops = opcodes(_keys(a), _keys(b))
    changed = [op for op in ops if op[0] != "equal"]
    status: Status = "added" if old is None else "deleted" if new is None else "modified" if changed else "unchanged"
    pair = TextPair(a, b, ops)
    blocks = _group(ops, pair, context)
    chars = 0
    for block in blocks:
        for tag, i1, i2, j1, j2 in block.ops if isinstance(block, HunkBlock) else ():
            chars += sum(map(len, b.lines[j1:j2])) + (sum(map(len, a.lines[i1:i2])) if tag != "equal" else 0)
    return DiffView(
        path=path,
        status=status,
        added=sum(j2 - j1 for _, _, _, j1, j2 in changed),
        removed=sum(i2 - i1 for _, i1, i2, _, _ in changed),
        language=lexer.name if lexer else None,
        total_lines=len(a) if status == "deleted" else len(b),
        blocks=blocks,
        no_newline_at_end_old=a.no_newline,
        no_newline_at_end_new=b.no_newline,
        rendered_chars=chars,
        pair=pair,
    )


def gap_rows(diff: DiffView, start: int, end: int) -> list[UnifiedRow]:
    """The unchanged lines ``start``..``end`` (new-file numbers) as context rows, highlighted now."""
    if diff.status in ("added", "deleted"):  # no unchanged lines: these show as files (see ``expand_file``)
        return []
    return context_rows(diff.pair, max(start, 1), min(end, len(diff.pair.new)))


def _chunk(
    start: int, end: int, total: int, old_no: Callable[[int], int]
) -> tuple[int, int, GapBlock | None, GapBlock | None]:
    """The part of a gap one request shows: near the change below at the top of a file, else the start."""
    start, end = max(start, 1), min(end, total)
    if end - start < CHUNK:
        return start, end, None, None
    if start == 1 and end < total:
        lo = end - CHUNK + 1
        return lo, end, GapBlock(start, lo - 1, old_no(start), old_no(lo - 1)), None
    hi = start + CHUNK - 1
    return start, hi, None, GapBlock(hi + 1, end, old_no(hi + 1), old_no(end))


def expand_gap(diff: DiffView, start: int, end: int) -> Expansion[UnifiedRow]:
    """The rows that opening the gap ``start``..``end`` shows (at most ``CHUNK``) and what stays hidden."""
    lo, hi, before, after = _chunk(start, end, len(diff.pair.new), diff.pair.old_no)
    return Expansion(gap_rows(diff, lo, hi), before, after)


def _file_view(source: Lines, path: str, language: str | None, target: int | None) -> FileView:
    total = len(source)
    target = target if target is not None and 1 <= target <= total else None
    lo = max(1, (target or 1) - FILE_WINDOW // 4)
    hi = min(total, lo + FILE_WINDOW - 1)
    lo = max(1, hi - FILE_WINDOW + 1)
    before = GapBlock(1, lo - 1, 1, lo - 1) if lo > 1 else None
    after = GapBlock(hi + 1, total, hi + 1, total) if hi < total else None
    lines = file_lines(source, lo, hi, target)
    return FileView(path, language, total, target, lines, before, after, source.no_newline, source)


def file_view(text: str, path: str, target_line: int | None = None) -> FileView:
    """``text`` as the file ``path``, around ``target_line`` (marked) if given; the rest loads lazily."""
    lexer = lexer_for(path)
    source = _FILES.get(_key(path, text), lambda: Lines(text, lexer))
    return _file_view(source, path, lexer.name if lexer else None, target_line)


def expand_file(view: FileView, start: int, end: int) -> Expansion[FileLine]:
    """The lines that opening the hidden part ``start``..``end`` of a file view shows."""
    lo, hi, before, after = _chunk(start, end, view.total_lines, lambda no: no)
    return Expansion(file_lines(view.source, lo, hi, view.target_line), before, after)


def parse_gap(value: str) -> tuple[int, int]:
    """``"START-END"`` from a gap URL as two line numbers; ValueError if it is anything else."""
    match = re.fullmatch(r"(\d{1,9})-(\d{1,9})", value)
    if not match or int(match[1]) < 1 or int(match[2]) < int(match[1]):
        raise ValueError(f"expected a line range like '12-40', got {value[:40]!r}")
    return int(match[1]), int(match[2])


def diff_layout(choice: object) -> DiffLayout:
    """The layout diffs are drawn in, from what the user chose (the ``diff_mode`` cookie, the page's message,
    a template's ``diff_mode``): side by side only when that is ``"split"``, one column otherwise."""
    return "split" if choice == "split" else "unified"
