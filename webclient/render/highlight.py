"""Lines of a text highlighted by Pygments, lazily and in windows, with changed words emphasised.

Highlighting is by far the slowest step of showing a diff or a file: Pygments takes about two seconds
on a 20,000-line Python file, where the patience diff of such a file takes hundredths of one. So a text
is split into lines once, and a line is highlighted only when a row shows it. Texts up to
``FULL_LEX_CHARS`` are lexed whole, so that multi-line strings and comments colour right; bigger ones
are lexed in windows that start at a line that looks top-level (unindented, after a blank line) and run
a little past what is shown. A lexer that fails or drops characters leaves its lines plain rather than
breaking the page.

Within a replaced block, each line is paired with its counterpart and the words that differ are marked
(``d-chg``), on top of the Pygments classes (``hl-…``, as in :mod:`webclient.render.markdown`).

The only HTML made here is a highlighted line: escaped token text in ``<span class="hl-…">``.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from markupsafe import Markup, escape

from webclient.workspace.files import split_lines

if TYPE_CHECKING:  # Pygments is imported at the first text highlighted: an idle server shows none
    from pygments.lexer import Lexer
    from pygments.token import _TokenType

__all__ = ["COLOURED", "Lines", "Marks", "coloured", "emphasis", "lexer_for", "paired"]

Marks = Sequence[tuple[int, int]]  # character ranges of a line to emphasise

FULL_LEX_CHARS = 40_000  # texts up to this size are lexed whole (exact); bigger ones in windows
WINDOW_CHARS = 500_000  # a window longer than this stays plain: Pygments could take seconds on it
RESYNC_SCAN = 150  # lines searched back for a top-level line to start lexing at
LOOKBACK = 30  # lines lexed before a window when no such line was found
LOOKAHEAD = 60  # lines lexed after a window, so a comment that ends below it is still one token
EMPHASIS_CHARS = 400  # longer changed lines get no intra-line emphasis
EMPHASIS_LINES = 100  # nor do the lines of a bigger replaced block (a rewrite, not an edit)

_WORDS = re.compile(r"\w+|\s+|[^\w\s]")


@lru_cache(maxsize=1024)
def _css_class(ttype: _TokenType) -> str:
    """The ``hl-`` class of the nearest standard token type; none for plain text and whitespace."""
    from pygments.token import STANDARD_TYPES  # once a token type: it is cached

    while ttype not in STANDARD_TYPES and ttype.parent is not None:
        ttype = ttype.parent
    short = STANDARD_TYPES.get(ttype, "")
    return f"hl-{short}" if short and short != "w" else ""


COLOURED = frozenset(
    "hl-" + short
    for short in (
        "bp c c1 ch cm cp cpf cs dl fm gd ge gh gi gs gu il k kc kd kn kp kr kt m mb mf mh mi mo na nb nc nd ne nf no "
        "nt nv ow s s1 s2 sa sb sc sd se sh si sr ss vc vg vi"
    ).split()
)
"""The classes the style sheets colour (`static/*.css`): a token of any other class is plain text."""


def coloured(code: str, lexer: Lexer) -> str:
    """``code`` highlighted for a message: escaped text, with ``<span class="hl-…">`` only where a style sheet
    colours it, one span for a run of tokens of one class. Names, punctuation and operators stay plain (they were
    most of a highlighted block's bytes, sent to every page for nothing)."""
    html: list[str] = []
    run_class, run = "", list[str]()
    for ttype, value in lexer.get_tokens(code):
        css = _css_class(ttype)
        if css not in COLOURED:
            css = ""
        if css != run_class and run:
            text = "".join(run)
            html.append(f'<span class="{run_class}">{escape(text)}</span>' if run_class else str(escape(text)))
            run = []
        run_class = css
        run.append(value)
    if run:
        text = "".join(run)
        html.append(f'<span class="{run_class}">{escape(text)}</span>' if run_class else str(escape(text)))
    return "".join(html)


@lru_cache(maxsize=256)
def _lexer(name: str) -> Lexer | None:
    """The lexer for a file name (cached: Pygments scans all its lexers), None for plain text."""
    from pygments.lexers import get_lexer_for_filename
    from pygments.util import ClassNotFound

    try:
        lexer = get_lexer_for_filename(name, stripnl=False, ensurenl=True)
    except ClassNotFound:
        return None
    return None if lexer.name == "Text only" else lexer


def lexer_for(path: str) -> Lexer | None:
    """The Pygments lexer for the file name at the end of ``path`` (either slash), None for plain text."""
    return _lexer(path.replace("\\", "/").rsplit("/", 1)[-1])


def _split(text: str) -> tuple[list[str], bool]:
    """Lines without endings ("\\r\\n", "\\r" and "\\n" alike), and whether the last lacked one."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates could not be sent to the browser
        text = text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return split_lines(text)


class Lines:
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


def paired(removed: int, added: int) -> int:
    """How many lines of a replaced block get intra-line emphasis: each with its counterpart, if few."""
    return min(removed, added) if min(removed, added) <= EMPHASIS_LINES else 0


def emphasis(old: str, new: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
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
