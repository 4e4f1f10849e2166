"""How a search matches text, in the database's way: the words of a query, each found as the start of a word of
letters and digits, case and accents aside as far as Python's ``re`` goes; and the lines of a transcript that hold
them, as plain text (the agents' Markdown read: ``**bold**`` is "bold", a link its text). Plain Python (no database),
so that the web layer uses it without importing the store.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING, NamedTuple

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


class Hit(NamedTuple):
    """A line of a transcript that holds a search's words, as plain text, and the thread's entry it is from."""

    line: str
    entry_seq: int | None
    """The number of the entry whose text it is in (None: not known, a message stored before entries were noted)."""


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


def matching_lines(
    texts: Sequence[str], words: Sequence[str], limit: int = LINES, entries: Sequence[int | None] = ()
) -> tuple[Hit, ...]:
    """Up to `limit` lines of `texts` that hold any of `words`: those holding the most of them, in their order; each
    with the entry its text is of (`entries`, one per text; none given: not known).

    A line is counted as the person reads it (`plain_line`), but reading Markdown is what costs: the 8 messages read of
    the 110,040-notification bench session (`bench/search_links.py`) have 1,116 matching lines, 55 ms of Markdown. A
    line as written holds the words it shows and more (its marks go, a link's target too), so its words as written
    bound it: lines are read best bound first, and the reading stops once `limit` lines hold more than any line left
    could."""
    pattern = word_pattern(words)
    candidates: list[tuple[int, int, str, int | None]] = []  # (-distinct words as written, position, line, entry)
    for number, text in enumerate(texts):
        entry_seq = entries[number] if number < len(entries) else None
        for raw in (line.strip() for line in text.splitlines()):
            if pattern.search(raw) is not None:  # most lines: not read as Markdown at all
                candidates.append((-_distinct(raw, pattern, words), len(candidates), raw, entry_seq))
    candidates.sort(key=lambda candidate: candidate[:2])
    best: list[tuple[int, int, Hit]] = []  # (-distinct words, position, hit), the `limit` best so far
    for bound, position, raw, entry_seq in candidates:
        if len(best) == limit and best[-1][:2] < (bound, position):
            break  # no line left can hold more words than these (nor as many, said earlier)
        line = plain_line(raw)
        distinct = _distinct(line, pattern, words)
        if distinct:
            best.append((-distinct, position, Hit(_cut(line, pattern), entry_seq)))
            best = sorted(best, key=lambda item: item[:2])[:limit]
    return tuple(hit for _, _, hit in sorted(best, key=lambda item: item[1]))


def _distinct(line: str, pattern: re.Pattern[str], words: Sequence[str]) -> int:
    """How many of `words` `line` holds (each as the start of one of its words)."""
    hits = {match.group(0).lower() for match in pattern.finditer(line)}
    return sum(any(hit.startswith(word) for hit in hits) for word in words)


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
