"""The workspace's files by name, for ``@`` mentions: a bounded walk and a forgiving match."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

SKIPPED_DIRS = frozenset({".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", ".mypy_cache",
                          ".pytest_cache", ".ruff_cache", ".tox", "dist", "build", ".next", "target"})  # fmt: skip
MAX_FILES = 20_000


def list_files(
    roots: Sequence[Path], limit: int = MAX_FILES, hides: Callable[[Path], bool] = lambda path: False
) -> list[str]:
    """Relative paths of files under ``roots`` (prefixed with the root's name after the first root),
    without dependency and cache folders nor what ``hides`` says is the server's own, in a stable order, at most
    ``limit`` of them. Symbolic links are not followed."""
    found: list[str] = []
    for index, root in enumerate(roots):
        prefix = "" if index == 0 else f"{root.name}/"
        for directory, dirs, files in os.walk(root):
            dirs[:] = sorted(
                d for d in dirs if d not in SKIPPED_DIRS and not d.startswith(".") and not hides(Path(directory, d))
            )
            base = Path(directory).relative_to(root).as_posix()
            for name in sorted(files):
                if hides(Path(directory, name)):
                    continue
                if len(found) >= limit:
                    return found
                found.append(f"{prefix}{name}" if base == "." else f"{prefix}{base}/{name}")
    return found


def match(paths: Sequence[str], query: str, limit: int = 30) -> list[str]:
    """Paths matching ``query``, best first: file name starts with it, file name contains it, path
    contains it, then the letters of the query in order anywhere in the path."""
    query = query.strip().lower()
    if not query:
        return list(paths[:limit])
    ranked: list[tuple[int, int, str]] = []
    for path in paths:
        lower = path.lower()
        name = lower.rsplit("/", 1)[-1]
        if name.startswith(query):
            rank = 0
        elif query in name:
            rank = 1
        elif query in lower:
            rank = 2
        elif _subsequence(query, lower):
            rank = 3
        else:
            continue
        ranked.append((rank, len(path), path))
    ranked.sort()
    return [path for _, _, path in ranked[:limit]]


def _subsequence(query: str, text: str) -> bool:
    position = 0
    for char in query:
        position = text.find(char, position) + 1
        if position == 0:
            return False
    return True
