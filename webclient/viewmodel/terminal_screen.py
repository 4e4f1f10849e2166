"""What a terminal would show for a stream of program output: an emulated screen plus the lines that left it.

Programs run on a pseudo-terminal colour their output, redraw progress bars with ``\\r`` and move the cursor;
showing their raw bytes would show escape codes and every intermediate frame. `TerminalScreen` feeds the
bytes through pyte (a VT100/xterm emulator) and keeps two things: the visible screen, which may still change,
and the ``committed`` lines that scrolled off its top, which never change again, so a viewer can append those
once and re-render only the screen. Nothing here knows about processes, the protocol or HTML
(`webclient.render.terminal` turns lines into markup).
"""

from __future__ import annotations

import copy
import logging
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from itertools import groupby
from operator import itemgetter
from typing import Any

import pyte
from pyte import modes as pyte_modes
from pyte.charsets import LAT1_MAP
from pyte.graphics import FG_BG_256
from pyte.screens import Char, Cursor, Margins, StaticDefaultDict

__all__ = ["COLOUR_NAMES", "Line", "Run", "Style", "TerminalScreen"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Style:
    """How a run of characters looks. Colours are a name (`COLOUR_NAMES`), 6 hex digits, or None (default)."""

    fg: str | None = None
    bg: str | None = None
    bold: bool = False
    italic: bool = False
    underline: bool = False
    strike: bool = False
    reverse: bool = False

    @property
    def blank_is_invisible(self) -> bool:
        """Whether a space in this style looks like no character at all (so trailing ones can go)."""
        return self.bg is None and not (self.reverse or self.underline or self.strike)


@dataclass(frozen=True, slots=True)
class Run:
    """Adjacent characters of one line that share a style."""

    text: str
    style: Style


Line = tuple[Run, ...]

PLAIN = Style()

COLOUR_NAMES = (
    "black", "red", "green", "yellow", "blue", "magenta", "cyan", "white",
    "brightblack", "brightred", "brightgreen", "brightyellow",
    "brightblue", "brightmagenta", "brightcyan", "brightwhite",
)  # fmt: skip
"""The 16 palette colours, in palette order; `line_html` emits ``t-fg-<name>``/``t-bg-<name>`` for them."""

# pyte names yellow "brown" (and has a "bfightmagenta" typo in 0.8.2), and turns ``38;5;0``..``38;5;15``
# into xterm's hex values: map all of them to palette names so the page theme decides how they look.
_COLOUR_ALIASES = {
    "brown": "yellow",
    "brightbrown": "brightyellow",
    "bfightmagenta": "brightmagenta",
    **dict(zip(FG_BG_256[:16], COLOUR_NAMES, strict=True)),
}
_ALT_SCREEN_MODES = frozenset(mode << 5 for mode in (47, 1047, 1049))  # pyte shifts private modes by 5 bits

_StyleKey = tuple[Any, ...]  # Char fields fg..reverse, as pyte stores them
_Row = StaticDefaultDict[int, Char]
_STYLE_KEY = itemgetter(1, 2, 3, 4, 5, 6, 7)  # Char fields fg, bg, bold, italics, underscore, strikethrough, reverse
_DATA = itemgetter(0)
_GLYPH_CACHES = 256
_STYLE_CACHE = 4096


class _Glyphs(dict[str, Char]):
    """The `Char` for each character drawn with one set of attributes; Chars are immutable, so shared."""

    def __init__(self, attrs: Char) -> None:
        super().__init__()
        self.attrs = attrs

    def __missing__(self, data: str) -> Char:
        char = self[data] = self.attrs._replace(data=data)
        return char


class _Screen(pyte.Screen):
    """A pyte screen that hands each line scrolling off its top to `on_commit`, and keeps the alternate
    screen of full-screen programs apart from the main one (so their frames never become history)."""

    def __init__(self, columns: int, lines: int, on_commit: Callable[[_Row], None]) -> None:
        self.on_commit = on_commit
        self._main: tuple[dict[int, _Row], Cursor] | None = None
        self._glyphs: dict[Char, _Glyphs] = {}
        super().__init__(columns, lines)
        self.set_mode(pyte_modes.LNM)  # "\n" also returns the carriage: the pty has ONLCR off

    def reset(self) -> None:
        super().reset()
        self.mode.add(pyte_modes.LNM)
        self._main = None

    def draw(self, data: str) -> None:
        # pyte's draw builds a Char per character in Python, which made it the bottleneck (~0.6 MB/s). Printable
        # ASCII in the common modes is one cell per character, so a row slice can be written at C speed; the
        # result is the same as pyte's. Everything else (wide or combining characters, insert mode, no
        # autowrap, a graphics charset, control characters) takes pyte's path.
        if not (
            data.isascii()
            and data.isprintable()
            and (self.g1_charset if self.charset else self.g0_charset) is LAT1_MAP
            and pyte_modes.DECAWM in self.mode
            and pyte_modes.IRM not in self.mode
        ):
            super().draw(data)
            return
        cursor = self.cursor
        glyphs = self._glyphs.get(cursor.attrs)
        if glyphs is None:
            if len(self._glyphs) >= _GLYPH_CACHES:  # e.g. a rainbow of truecolours: start over
                self._glyphs.clear()
            glyphs = self._glyphs[cursor.attrs] = _Glyphs(cursor.attrs)
        glyph = glyphs.__getitem__
        start = 0
        while start < len(data):
            if cursor.x == self.columns:
                self.dirty.add(cursor.y)
                self.carriage_return()
                self.linefeed()
            end = start + self.columns - cursor.x
            line = self.buffer[cursor.y]
            chunk = data[start:end]
            line.update(zip(range(cursor.x, cursor.x + len(chunk)), map(glyph, chunk)))
            cursor.x += len(chunk)
            start = end
        self.dirty.add(cursor.y)

    def index(self) -> None:
        # Like pyte's HistoryScreen, but only for lines that really leave the screen (scroll region at the
        # top, main screen); a region lower down, like a pinned status line, scrolls within the screen.
        top, bottom = self.margins or Margins(0, self.lines - 1)
        if self.cursor.y == bottom and top == 0 and self._main is None:
            self.on_commit(self.buffer[top])
        super().index()

    def set_mode(self, *modes: int, **kwargs: Any) -> None:
        super().set_mode(*modes, **kwargs)
        if kwargs.get("private") and self._main is None and _ALT_SCREEN_MODES.intersection(m << 5 for m in modes):
            self._main = (self.buffer, copy.copy(self.cursor))
            self.buffer = defaultdict(lambda: _Row(self.default_char))
            self.dirty.update(range(self.lines))

    def reset_mode(self, *modes: int, **kwargs: Any) -> None:
        super().reset_mode(*modes, **kwargs)
        if kwargs.get("private") and self._main is not None and _ALT_SCREEN_MODES.intersection(m << 5 for m in modes):
            self.buffer, self.cursor = self._main
            self._main = None
            self.dirty.update(range(self.lines))

    def erase_in_display(self, how: int = 0, *args: Any, **kwargs: Any) -> None:
        if how in (0, 1, 2, 3):  # pyte 0.8.2 raises UnboundLocalError for any other value
            super().erase_in_display(how, *args, **kwargs)


class TerminalScreen:
    """Emulated terminal state for a stream of output bytes.

    Attributes:
        committed: lines that scrolled off the top of the screen, oldest first; final once there.
        dropped: how many committed lines were dropped from the front to keep at most ``max_lines``; a viewer
            that appended committed lines starts over when this changes.
        version: incremented by every `feed` that changed what `screen` or `committed` return.
    """

    def __init__(self, columns: int = 120, rows: int = 40, max_lines: int = 5000) -> None:
        if columns <= 0 or rows <= 0 or max_lines < 0:
            raise ValueError(f"need columns, rows > 0 and max_lines >= 0, got {columns}, {rows}, {max_lines}")
        self.columns = columns
        self.rows = rows
        self.max_lines = max_lines
        self.committed: list[Line] = []
        self.dropped = 0
        self.version = 0
        self._styles: dict[_StyleKey, Style] = {}
        self._screen = _Screen(columns, rows, self._commit)
        # ByteStream keeps an incremental UTF-8 decoder (errors="replace") and the escape parser's state
        # between calls, so chunks may split characters and escape sequences anywhere.
        self._stream = pyte.ByteStream(self._screen)

    def feed(self, data: bytes) -> None:
        """Process output bytes exactly as written by the program (any chunking)."""
        if not data:
            return
        screen = self._screen
        screen.dirty.clear()
        before = (screen.cursor.x, screen.cursor.y, len(self.committed) + self.dropped)
        try:
            self._stream.feed(data)
        except Exception:
            # A pyte bug on unusual input must not take the session down: the rest of this chunk is lost,
            # the next chunk is processed normally.
            logger.exception("terminal emulator failed on %d bytes of output", len(data))
        if len(self.committed) > self.max_lines:
            excess = len(self.committed) - self.max_lines
            del self.committed[:excess]
            self.dropped += excess
        if screen.dirty or before != (screen.cursor.x, screen.cursor.y, len(self.committed) + self.dropped):
            self.version += 1

    def screen(self) -> list[Line]:
        """The visible screen; blank rows after the last text and below the cursor are left out."""
        screen = self._screen
        lines = [self._line(screen.buffer[y]) if y in screen.buffer else () for y in range(screen.lines)]
        last = max(screen.cursor.y, max((y for y, line in enumerate(lines) if line), default=0))
        return lines[: last + 1]

    def plain_text(self) -> str:
        """Committed lines and the screen as text without styles, one line per row."""
        return "\n".join("".join(run.text for run in line) for line in (*self.committed, *self.screen()))

    def _commit(self, row: _Row) -> None:
        self.committed.append(self._line(row))

    def _line(self, row: _Row) -> Line:
        """Convert a pyte row to runs, merging equal styles and dropping invisible trailing blanks."""
        if not row:
            return ()
        style = self._style
        runs = [
            Run("".join(map(_DATA, chars)), style(key))  # "" for the second cell of a wide character
            for key, chars in groupby(map(row.__getitem__, range(max(row) + 1)), _STYLE_KEY)
        ]
        while runs and runs[-1].style.blank_is_invisible:
            text = runs[-1].text.rstrip(" ")
            if text:
                runs[-1] = Run(text, runs[-1].style)
                break
            runs.pop()
        return tuple(run for run in runs if run.text)

    def _style(self, key: _StyleKey) -> Style:
        style = self._styles.get(key)
        if style is None:
            if len(self._styles) >= _STYLE_CACHE:  # a rainbow of truecolours: start over
                self._styles.clear()
            fg, bg, bold, italics, underscore, strikethrough, reverse = key
            style = self._styles[key] = Style(
                _colour(fg), _colour(bg), bold, italics, underscore, strikethrough, reverse
            )
        return style


def _colour(value: str) -> str | None:
    if value == "default":
        return None
    return _COLOUR_ALIASES.get(value.lower(), value)
