"""How a search matches text, in the database's way: the words of a query, each found as the start of a word of
letters and digits, case and accents aside as far as Python's ``re`` goes; and the lines of a transcript that hold
them. Plain Python (no database), so that the web layer uses it without importing the store.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

MAX_WORDS = 8
"""Words of a query that count (the rest are ignored): each one is a lookup in the index."""
LINES = 3
"""Matching lines shown per session."""
LINE_CHARS = 240
"""A longer matching line is cut around its first match."""


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
    for line in (line.strip() for text in texts for line in text.splitlines()):
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
