"""How a search matches text, in the database's way: the words of a query, each found as the start of a word of
letters and digits, case and accents aside as far as Python's ``re`` goes; and the lines of a transcript that hold
them, as plain text (the agents' Markdown read: ``**bold**`` is "bold", a link its text). Plain Python (no database),
so that the web layer uses it without importing the store.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported at the first search: an idle server makes none
    from markdown_it import MarkdownIt

MAX_WORDS = 8
"""Words of a query that count (the rest are ignored): each one is a lookup in the index."""
LINES = 3
"""Matching lines shown per session."""
LINE_CHARS = 240
"""A longer matching line is cut around its first match."""

_BLOCK_MARKS = re.compile(r"^(?:(?:#{1,6}|>|[-*+]|\d{1,9}[.)])(?:\s+|$))+")
"""What starts a line of a heading, a quote, a list's item (a line at a time: of the block, only its start shows)."""
_TABLE_RULE = re.compile(r"^[\s|:-]*$")


@cache
def _inline() -> MarkdownIt:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False}).enable("strikethrough")  # as the page reads it: tags are text


def query_words(query: str) -> list[str]:
    """The words a search looks for: runs of letters and digits, lower-cased, each once, at most `MAX_WORDS`."""
    words: list[str] = []
    for word in re.findall(r"[^\W_]+", query.lower()):
        if word not in words:
            words.append(word)
    return words[:MAX_WORDS]


def word_pattern(words: Sequence[str]) -> re.Pattern[str]:
    """Matches a whole word of text that starts with one of `words` (how the index matches them)."""
    alternatives = "|".join(re.escape(word) for word in sorted(words, key=len, reverse=True))
    return re.compile(rf"(?<![^\W_])(?:{alternatives})[^\W_]*", re.IGNORECASE)


def matching_lines(texts: Sequence[str], words: Sequence[str], limit: int = LINES) -> tuple[str, ...]:
    """Up to `limit` lines of `texts` that hold any of `words`: those holding the most of them, in their order."""
    pattern = word_pattern(words)
    found: list[tuple[int, int, str]] = []  # (-distinct words, position, line)
    for raw in (line.strip() for text in texts for line in text.splitlines()):
        if pattern.search(raw) is None:  # most lines: not read as Markdown at all
            continue
        line = plain_line(raw)
        hits = {match.group(0).lower() for match in pattern.finditer(line)}
        if hits:
            distinct = sum(any(hit.startswith(word) for hit in hits) for word in words)
            found.append((-distinct, len(found), _cut(line, pattern)))
    chosen = sorted(found)[:limit]
    return tuple(line for _, _, line in sorted(chosen, key=lambda item: item[1]))


def _cut(line: str, pattern: re.Pattern[str]) -> str:
    if len(line) <= LINE_CHARS:
        return line
    match = pattern.search(line)
    start = max(0, (match.start() if match else 0) - LINE_CHARS // 3)
    end = start + LINE_CHARS
    return ("…" if start else "") + line[start:end].strip() + ("…" if end < len(line) else "")


def plain_line(line: str) -> str:
    """A line of Markdown as the person read it: without the marks of its block (``## ``, ``> ``, ``- ``), its
    emphasis and code spans, a link or an image as its text, a table's row as its cells."""
    if line.startswith("|"):
        if _TABLE_RULE.match(line):
            return ""
        line = " · ".join(cell.strip() for cell in line.strip().strip("|").split("|"))
    line = _BLOCK_MARKS.sub("", line)
    parts: list[str] = []
    for token in _inline().parseInline(line)[0].children or []:
        if token.type in ("text", "code_inline", "image"):
            parts.append(token.content)
        elif token.type in ("softbreak", "hardbreak"):
            parts.append(" ")
    return "".join(parts).strip()
