"""Diffs and files that read like a code review: hunks with context, collapsed gaps, highlighted lines.

ACP gives whole texts (``oldText``/``newText``), so the changed lines are found here, with a patience
diff (lines that occur once on each side anchor it; difflib fills the small stretches between), which
stays near linear on big files with many changes where plain difflib takes seconds. Changes are grouped
into hunks with ``context`` lines around them; the unchanged runs in between become gaps that the page
opens on request. Lines are highlighted with Pygments (``hl-`` classes, as in
:mod:`webclient.markdown`) only when a row is shown, because lexing is by far the slowest step: a
20,000-line file takes Pygments over a second. Files up to ``FULL_LEX_CHARS`` are lexed whole, so
multi-line strings and comments colour right; bigger ones are lexed in windows that start at a line
that looks top-level (unindented, after a blank line). What was lexed is kept with the last few texts
(a small LRU keyed by a hash), so the request that opens a gap does not lex again.

The only HTML made here is a highlighted line: escaped token text in ``<span class="hl-…">``.
"""

from __future__ import annotations

import difflib
import hashlib
import re
import threading
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from itertools import zip_longest
from typing import Generic, Literal, TypeVar

from markupsafe import Markup, escape
from pygments.lexer import Lexer
from pygments.lexers import get_lexer_for_filename
from pygments.token import STANDARD_TYPES, _TokenType
from pygments.util import ClassNotFound

Kind = Literal["add", "del", "ctx"]
Status = Literal["added", "deleted", "modified", "unchanged"]
Op = tuple[str, int, int, int, int]  # difflib opcode: tag, old [i1, i2), new [j1, j2), 0-based
Marks = Sequence[tuple[int, int]]  # character ranges of a line to emphasise
T = TypeVar("T")

CONTEXT = 3
MIN_GAP = 2  # a single unchanged line is shown rather than hidden behind a row of the same height
SMALL_GAP = 40  # gaps up to this many lines come hidden in the page; bigger ones load on request
CHUNK = 2000  # lines one lazy request returns at most
FILE_WINDOW = 1000  # lines a file view shows at first; the rest loads on request
LARGE_ROWS = 400
LARGE_CHARS = 200_000
FULL_LEX_CHARS = 40_000  # texts up to this size are lexed whole (exact); bigger ones in windows
WINDOW_CHARS = 500_000  # a window longer than this stays plain: Pygments could take seconds on it
RESYNC_SCAN = 150  # lines searched back for a top-level line to start lexing at
LOOKBACK = 30  # lines lexed before a window when no such line was found
LOOKAHEAD = 60  # lines lexed after a window, so a comment that ends below it is still one token
EMPHASIS_CHARS = 400  # longer changed lines get no intra-line emphasis
EMPHASIS_LINES = 100  # nor do the lines of a bigger replaced block (a rewrite, not an edit)
CACHE_SIZE = 8

_WORDS = re.compile(r"\w+|\s+|[^\w\s]")


@lru_cache(maxsize=1024)
def _css_class(ttype: _TokenType) -> str:
    """The ``hl-`` class of the nearest standard token type; none for plain text and whitespace."""
    while ttype not in STANDARD_TYPES and ttype.parent is not None:
        ttype = ttype.parent
    short = STANDARD_TYPES.get(ttype, "")
    return f"hl-{short}" if short and short != "w" else ""


@lru_cache(maxsize=256)
def _lexer(name: str) -> Lexer | None:
    """The lexer for a file name (cached: Pygments scans all its lexers), None for plain text."""
    try:
        lexer = get_lexer_for_filename(name, stripnl=False, ensurenl=True)
    except ClassNotFound:
        return None
    return None if lexer.name == "Text only" else lexer


def _lexer_for(path: str) -> Lexer | None:
    return _lexer(path.replace("\\", "/").rsplit("/", 1)[-1])


def _split(text: str) -> tuple[list[str], bool]:
    """Lines without endings ("\\r\\n", "\\r" and "\\n" alike), and whether the last lacked one."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates could not be sent to the browser
        text = text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text:
        return [], False
    lines = text.split("\n")
    if lines[-1]:
        return lines, True
    lines.pop()
    return lines, False


class _Lines:
    """One text as lines, highlighted on demand; highlighted lines are remembered."""

    def __init__(self, text: str, lexer: Lexer | None) -> None:
        self.lines, self.no_newline = _split(text)
        self.chars = len(text)
        self.lexer = lexer
        self.keep_tokens: set[int] = set()  # lines that will need intra-line emphasis
        self._html: dict[int, str] = {}
        self._tokens: dict[int, list[tuple[str, str]]] = {}
        self._whole = False

    def __len__(self) -> int:
        return len(self.lines)

    def last(self, index: int) -> bool:
        """Whether line ``index`` is the last one and has no newline."""
        return self.no_newline and index == len(self.lines) - 1

    def prepare(self, ranges: Iterable[tuple[int, int]]) -> None:
        """Lex the lines of these ``[lo, hi)`` ranges (0-based) not lexed yet, in as few windows as possible."""
        if self.lexer is None or self._whole:
            return
        if self.chars <= FULL_LEX_CHARS:
            self._whole = True
            self._lex(0, len(self.lines), 0)
            return
        todo = sorted((lo, hi) for lo, hi in ranges if any(i not in self._html for i in range(lo, hi)))
        windows: list[list[int]] = []  # [start, stop, keep from]
        for lo, hi in todo:
            start = self._resync(lo)
            if windows and start <= windows[-1][1]:
                windows[-1][1] = max(windows[-1][1], hi)
            else:
                windows.append([start, hi, lo])
        for start, stop, keep in windows:
            self._lex(start, stop, keep)

    def _resync(self, lo: int) -> int:
        """A line before ``lo`` where a lexer can start fresh: unindented and after a blank line."""
        lines = self.lines
        if lo <= RESYNC_SCAN:
            return 0
        for i in range(min(lo, len(lines) - 1), lo - RESYNC_SCAN, -1):
            if lines[i][:1] not in ("", " ", "\t") and not lines[i - 1].strip():
                return i
        return lo - LOOKBACK

    def _lex(self, start: int, stop: int, keep: int) -> None:
        stop, end = min(stop, len(self.lines)), min(stop + LOOKAHEAD, len(self.lines))
        text = "\n".join(self.lines[start:end]) + "\n"
        index = start
        line: list[tuple[str, str]] = []
        try:
            tokens = self.lexer.get_tokens(text) if self.lexer and len(text) <= WINDOW_CHARS else ()
            for ttype, value in tokens:
                cls = _css_class(ttype)
                for k, part in enumerate(value.split("\n")):
                    if k:
                        self._store(index, line, keep, stop)
                        index, line = index + 1, []
                    if part and line and line[-1][0] == cls:
                        line[-1] = (cls, line[-1][1] + part)
                    elif part:
                        line.append((cls, part))
        except Exception:  # a lexer bug must not break the page: those lines stay plain
            pass
        finally:  # lines that could not be highlighted are done too: plain
            for index in range(keep, stop):
                self._html.setdefault(index, str(escape(self.lines[index])))

    def _store(self, index: int, tokens: list[tuple[str, str]], keep: int, stop: int) -> None:
        # Pygments may drop a byte-order mark or the like: a line whose tokens differ stays plain.
        if keep <= index < stop and "".join(text for _, text in tokens) == self.lines[index]:
            self._html[index] = _render(tokens)
            if index in self.keep_tokens:
                self._tokens[index] = tokens

    def html(self, index: int, marks: Marks = ()) -> Markup:
        """Line ``index`` as HTML: highlighted if it was prepared, with ``marks`` emphasised."""
        if marks:
            tokens = self._tokens.get(index) or [("", self.lines[index])]
            return Markup(_render(_with_marks(tokens, marks)))
        cached = self._html.get(index)
        return Markup(cached) if cached is not None else escape(self.lines[index])


def _render(tokens: Iterable[tuple[str, str]]) -> str:
    return "".join(f'<span class="{cls}">{escape(text)}</span>' if cls else str(escape(text)) for cls, text in tokens)


def _with_marks(tokens: list[tuple[str, str]], marks: Marks) -> list[tuple[str, str]]:
    """Tokens cut at the edges of ``marks``, the marked pieces with the ``d-chg`` class added."""
    out: list[tuple[str, str]] = []
    pos, m = 0, 0
    for cls, text in tokens:
        end, cut = pos + len(text), pos
        while cut < end:
            while m < len(marks) and marks[m][1] <= cut:
                m += 1
            inside = m < len(marks) and marks[m][0] <= cut
            stop = min(end, marks[m][1] if inside else marks[m][0] if m < len(marks) else end)
            out.append((f"{cls} d-chg".strip() if inside else cls, text[cut - pos : stop - pos]))
            cut = stop
        pos = end
    return out


def _paired(removed: int, added: int) -> int:
    """How many lines of a replaced block get intra-line emphasis: each with its counterpart, if few."""
    return min(removed, added) if min(removed, added) <= EMPHASIS_LINES else 0


def _emphasis(old: str, new: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The words that differ in a changed pair of lines; nothing when the lines are not alike."""
    if old == new or len(old) > EMPHASIS_CHARS or len(new) > EMPHASIS_CHARS:
        return [], []
    a, b = _WORDS.findall(old), _WORDS.findall(new)
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    if matcher.ratio() < 0.5:
        return [], []
    a_at, b_at = [0], [0]
    for word in a:
        a_at.append(a_at[-1] + len(word))
    for word in b:
        b_at.append(b_at[-1] + len(word))
    old_marks, new_marks = [], []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal" and i1 < i2:
            old_marks.append((a_at[i1], a_at[i2]))
        if tag != "equal" and j1 < j2:
            new_marks.append((b_at[j1], b_at[j2]))
    return old_marks, new_marks


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


class _Pair:
    """The two texts of a diff and how their unchanged lines line up; shared by its hunks and gaps."""

    def __init__(self, old: _Lines, new: _Lines, ops: list[Op]) -> None:
        self.old, self.new = old, new
        self.equal = [(j1, j2, i1) for tag, i1, _, j1, j2 in ops if tag == "equal"]
        self.hunks: list[tuple[Op, ...]] = []
        self.small_gaps: list[tuple[int, int]] = []  # shown with the page: lexed with the hunks
        self._prepared = False
        for i1, i2, j1, j2 in (op[1:] for op in ops if op[0] == "replace"):
            old.keep_tokens.update(range(i1, i1 + _paired(i2 - i1, j2 - j1)))
            new.keep_tokens.update(range(j1, j1 + _paired(i2 - i1, j2 - j1)))

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


@dataclass(frozen=True, eq=False)
class HunkBlock:
    """Changed lines with their context; the rows of both views are built when first asked for."""

    old_start: int
    old_count: int
    new_start: int
    new_count: int
    ops: tuple[Op, ...] = field(repr=False)
    pair: _Pair = field(repr=False)
    is_gap = False

    @property
    def header(self) -> str:
        return f"@@ -{self.old_start},{self.old_count} +{self.new_start},{self.new_count} @@"

    @cached_property
    def unified_rows(self) -> list[UnifiedRow]:
        self.pair.prepare()
        old, new = self.pair.old, self.pair.new
        rows: list[UnifiedRow] = []
        for tag, i1, i2, j1, j2 in self.ops:
            if tag == "equal":
                rows += [
                    UnifiedRow("ctx", i1 + k + 1, j + 1, new.html(j), new.last(j)) for k, j in enumerate(range(j1, j2))
                ]
                continue
            paired = _paired(i2 - i1, j2 - j1)
            pairs = [_emphasis(old.lines[i1 + k], new.lines[j1 + k]) for k in range(paired)]
            for k, i in enumerate(range(i1, i2)):
                rows.append(
                    UnifiedRow("del", i + 1, None, old.html(i, pairs[k][0] if k < len(pairs) else ()), old.last(i))
                )
            for k, j in enumerate(range(j1, j2)):
                rows.append(
                    UnifiedRow("add", None, j + 1, new.html(j, pairs[k][1] if k < len(pairs) else ()), new.last(j))
                )
        return rows

    @cached_property
    def split_rows(self) -> list[SplitRow]:
        """Old left, new right; a replaced block pairs its deleted and added lines one by one."""
        rows: list[SplitRow] = []
        dels: list[Cell] = []
        adds: list[Cell] = []
        for row in [*self.unified_rows, None]:
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

    @property
    def row_count(self) -> int:
        return sum(
            (i2 - i1 if tag != "insert" else 0) + (j2 - j1 if tag in ("insert", "replace") else 0)
            for tag, i1, i2, j1, j2 in self.ops
        )


@dataclass(frozen=True, slots=True)
class FileLine:
    no: int
    html: Markup
    target: bool = False
    no_newline: bool = False


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
    source: _Lines = field(repr=False)


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
    pair: _Pair = field(repr=False)

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
_FILES: _Cache[_Lines] = _Cache(CACHE_SIZE)


def _key(*parts: str | None) -> bytes:
    digest = hashlib.blake2b(digest_size=20)
    for part in parts:
        data = b"" if part is None else part.encode("utf-8", "surrogatepass")
        digest.update(b"N" if part is None else len(data).to_bytes(8, "big"))
        digest.update(data)
    return digest.digest()


def _anchors(a: list[object], b: list[object], alo: int, ahi: int, blo: int, bhi: int) -> list[tuple[int, int]]:
    """Lines found once on each side, longest run in the same order (patience diff's anchors)."""
    seen_a: dict[object, int] = {}
    for i in range(alo, ahi):
        seen_a[a[i]] = -1 if a[i] in seen_a else i
    seen_b: dict[object, int] = {}
    for j in range(blo, bhi):
        if seen_a.get(b[j], -1) >= 0:
            seen_b[b[j]] = -1 if b[j] in seen_b else j
    unique = sorted((seen_a[line], j) for line, j in seen_b.items() if j >= 0)
    tails: list[int] = []  # the smallest last j of an increasing run of each length
    ends: list[int] = []  # which candidate ends that run
    previous = [-1] * len(unique)
    for k, (_, j) in enumerate(unique):
        pos = bisect_left(tails, j)
        tails[pos : pos + 1], ends[pos : pos + 1] = [j], [k]
        previous[k] = ends[pos - 1] if pos else -1
    run, k = [], ends[-1] if ends else -1
    while k >= 0:
        run.append(unique[k])
        k = previous[k]
    return run[::-1]


def _opcodes(a: list[object], b: list[object]) -> list[Op]:
    """Opcodes as difflib's, from a patience diff: unique lines anchor it, difflib fills small gaps.

    Plain difflib is quadratic when changes are many (a rename across a big file takes seconds);
    anchoring on unique lines is near linear and aligns code the way a reader expects.
    """
    pairs: list[tuple[int, int]] = []
    todo = [(0, len(a), 0, len(b))]
    while todo:
        alo, ahi, blo, bhi = todo.pop()
        while alo < ahi and blo < bhi and a[alo] == b[blo]:
            pairs.append((alo, blo))
            alo, blo = alo + 1, blo + 1
        while alo < ahi and blo < bhi and a[ahi - 1] == b[bhi - 1]:
            ahi, bhi = ahi - 1, bhi - 1
            pairs.append((ahi, bhi))
        if alo == ahi or blo == bhi:
            continue
        anchors = _anchors(a, b, alo, ahi, blo, bhi)
        if not anchors:
            matcher = difflib.SequenceMatcher(None, a[alo:ahi], b[blo:bhi], autojunk=ahi - alo > 2000)
            pairs += [(alo + i + k, blo + j + k) for i, j, size in matcher.get_matching_blocks() for k in range(size)]
            continue
        for i, j in anchors:
            todo.append((alo, i, blo, j))
            pairs.append((i, j))
            alo, blo = i + 1, j + 1
        todo.append((alo, ahi, blo, bhi))
    ops: list[Op] = []
    i = j = 0
    for pi, pj in [*sorted(pairs), (len(a), len(b))]:
        if pi > i or pj > j:
            ops.append(("replace" if pi > i and pj > j else "delete" if pi > i else "insert", i, pi, j, pj))
        if pi < len(a) and ops and ops[-1][0] == "equal" and ops[-1][2] == pi:
            ops[-1] = ("equal", ops[-1][1], pi + 1, ops[-1][3], pj + 1)
        elif pi < len(a):
            ops.append(("equal", pi, pi + 1, pj, pj + 1))
        i, j = pi + 1, pj + 1
    return ops


def _group(ops: list[Op], pair: _Pair, context: int) -> list[HunkBlock | GapBlock]:
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


def _keys(side: _Lines) -> list[object]:
    """What is compared: the lines, the last one marked when it has no newline (a change git shows)."""
    keys: list[object] = list(side.lines)
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
    lexer = _lexer_for(path)
    a, b = _Lines(old or "", lexer), _Lines(new or "", lexer)
    if old is None or new is None:
        ops: list[Op] = [("insert", 0, 0, 0, len(b))] if old is None else [("delete", 0, len(a), 0, 0)]
        ops = ops if len(a) + len(b) else []
    else:
        ops = _opcodes(_keys(a), _keys(b))
    changed = [op for op in ops if op[0] != "equal"]
    status: Status = "added" if old is None else "deleted" if new is None else "modified" if changed else "unchanged"
    pair = _Pair(a, b, ops)
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
    start, end = max(start, 1), min(end, len(diff.pair.new))
    new = diff.pair.new
    diff.pair.prepare()  # lexes hunks and small gaps together, the way the page shows them
    new.prepare([(start - 1, end)])
    rows = []
    for j1, j2, i1 in diff.pair.equal:
        for j in range(max(j1, start - 1), min(j2, end)):
            rows.append(UnifiedRow("ctx", i1 + j - j1 + 1, j + 1, new.html(j), new.last(j)))
    return rows


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


def _file_lines(source: _Lines, start: int, end: int, target: int | None) -> list[FileLine]:
    start, end = max(start, 1), min(end, len(source))
    source.prepare([(start - 1, end)])
    return [FileLine(no, source.html(no - 1), no == target, source.last(no - 1)) for no in range(start, end + 1)]


def _file_view(source: _Lines, path: str, language: str | None, target: int | None) -> FileView:
    total = len(source)
    target = target if target is not None and 1 <= target <= total else None
    lo = max(1, (target or 1) - FILE_WINDOW // 4)
    hi = min(total, lo + FILE_WINDOW - 1)
    lo = max(1, hi - FILE_WINDOW + 1)
    before = GapBlock(1, lo - 1, 1, lo - 1) if lo > 1 else None
    after = GapBlock(hi + 1, total, hi + 1, total) if hi < total else None
    lines = _file_lines(source, lo, hi, target)
    return FileView(path, language, total, target, lines, before, after, source.no_newline, source)


def file_view(text: str, path: str, target_line: int | None = None) -> FileView:
    """``text`` as the file ``path``, around ``target_line`` (marked) if given; the rest loads lazily."""
    lexer = _lexer_for(path)
    source = _FILES.get(_key(path, text), lambda: _Lines(text, lexer))
    return _file_view(source, path, lexer.name if lexer else None, target_line)


def expand_file(view: FileView, start: int, end: int) -> Expansion[FileLine]:
    """The lines that opening the hidden part ``start``..``end`` of a file view shows."""
    lo, hi, before, after = _chunk(start, end, view.total_lines, lambda no: no)
    return Expansion(_file_lines(view.source, lo, hi, view.target_line), before, after)


def parse_gap(value: str) -> tuple[int, int]:
    """``"START-END"`` from a gap URL as two line numbers; ValueError if it is anything else."""
    match = re.fullmatch(r"(\d{1,9})-(\d{1,9})", value)
    if not match or int(match[1]) < 1 or int(match[2]) < int(match[1]):
        raise ValueError(f"expected a line range like '12-40', got {value[:40]!r}")
    return int(match[1]), int(match[2])
