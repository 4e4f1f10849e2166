"""The folders a workspace watch covers: the union of the sessions' roots, the folders under each, the files a
session hears about (not those of ignored folders such as ``.git`` or ``node_modules``, nor editors' swap files)."""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Container, Iterable
from pathlib import Path

from watchfiles import DefaultFilter

__all__ = ["IGNORED_DIRS", "IGNORED_FILES", "covers", "files", "folders", "top_of", "union"]

IGNORED_DIRS = frozenset({*DefaultFilter.ignore_dirs, "venv", ".ruff_cache", ".cache"})
IGNORED_FILES = re.compile("|".join(DefaultFilter.ignore_entity_patterns))  # editors' swap files, bytecode, ...


def union(roots: Iterable[Path], watched: Container[Path] = ()) -> tuple[Path, ...]:
    """The folders to watch: every root that exists (is ``watched``, or a folder) and is not inside another."""
    kept: set[Path] = set()
    for root in sorted(set(roots), key=lambda path: len(path.parts)):
        if top_of(root, kept) is None and (root in watched or os.path.isdir(root)):
            kept.add(root)
    return tuple(sorted(kept))


def covers(watched: Container[Path], roots: Iterable[Path]) -> bool:
    return any(top_of(root, watched) is not None for root in roots)


def top_of(path: Path, tops: Container[Path]) -> Path | None:
    """The one of ``tops`` that holds ``path`` (itself or a parent), by lookups rather than comparisons with each."""
    if path in tops:
        return path
    return next((parent for parent in path.parents if parent in tops), None)


def folders(top: Path) -> list[Path]:
    """``top`` and every folder under it that is watched (not an ignored one, not a symbolic link)."""
    found, stack = [top], [top]
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue  # gone or unreadable meanwhile: what is left is watched
        for entry in entries:
            if entry.name not in IGNORED_DIRS and entry.is_dir(follow_symlinks=False):
                found.append(Path(entry.path))
                stack.append(Path(entry.path))
    return found


def files(top: Path) -> list[Path]:
    """The files under ``top`` that a subscriber hears about."""
    found: list[Path] = []
    for folder in folders(top):
        with contextlib.suppress(OSError):
            found.extend(
                Path(entry.path)
                for entry in os.scandir(folder)
                if not entry.is_dir(follow_symlinks=False) and not IGNORED_FILES.search(entry.name)
            )
    return found
