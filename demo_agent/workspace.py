"""The sample workspace: copying a fresh one for a demo session, and reading files inside a session's cwd.

The demo agent only ever touches files below the session cwd; every path goes through :meth:`Workspace.path`,
which refuses anything that resolves outside it (``..``, absolute paths, symlinks pointing away).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

SAMPLE_WORKSPACE = Path(__file__).resolve().parent / "sample_workspace"

# Directories never worth showing in a demo and possibly huge when the user points --workspace at a real project.
_SKIP_DIRS = {"node_modules", "__pycache__", ".venv", "venv", "build", "dist", "target"}
_MAX_FILES = 200
_MAX_FILE_BYTES = 200_000


def make_sample_workspace(parent: Path | None = None) -> Path:
    """Copy the bundled sample project into a fresh temporary directory and return its path.

    Each demo session gets its own copy, so the agent's edits never change the package data.
    """
    target = Path(tempfile.mkdtemp(prefix="acp-demo-workspace-", dir=parent))
    shutil.copytree(
        SAMPLE_WORKSPACE,
        target,
        dirs_exist_ok=True,
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache"),
    )
    return target.resolve()


@dataclass(frozen=True, slots=True)
class Match:
    """One line found by :meth:`Workspace.grep`."""

    rel: str
    line: int
    text: str


class Workspace:
    """Read-mostly access to the session cwd, confined to it."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()

    def path(self, rel: str) -> Path:
        """Absolute path of ``rel`` inside the workspace; raises ``ValueError`` if it would escape."""
        candidate = (self.root / rel).resolve()
        if not candidate.is_relative_to(self.root):
            raise ValueError(f"{rel!r} is outside the workspace")
        return candidate

    def exists(self, rel: str) -> bool:
        try:
            return self.path(rel).is_file()
        except ValueError:
            return False

    def read(self, rel: str) -> str | None:
        """File text, or ``None`` when missing, unreadable, too big or not UTF-8."""
        try:
            path = self.path(rel)
            if not path.is_file() or path.stat().st_size > _MAX_FILE_BYTES:
                return None
            return path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError, ValueError):
            return None

    def write(self, rel: str, text: str) -> Path:
        """Write ``text`` to ``rel`` (creating parent folders inside the workspace) and return the absolute path."""
        path = self.path(rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    def text_files(self) -> list[str]:
        """Relative paths of small files, sorted, skipping hidden and bulky directories; capped for big trees."""
        found: list[str] = []
        for dirpath, dirnames, filenames in os.walk(self.root):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in _SKIP_DIRS)
            for name in sorted(filenames):
                if name.startswith(".") or name.endswith((".pyc", ".png", ".jpg", ".zip")):
                    continue
                full = Path(dirpath) / name
                try:
                    if full.is_symlink() or full.stat().st_size > _MAX_FILE_BYTES:
                        continue
                except OSError:
                    continue
                found.append(full.relative_to(self.root).as_posix())
                if len(found) >= _MAX_FILES:
                    return sorted(found)
        return sorted(found)

    def grep(self, needle: str, limit: int = 20) -> list[Match]:
        """Case-sensitive substring search over :meth:`text_files`."""
        matches: list[Match] = []
        for rel in self.text_files():
            text = self.read(rel)
            if text is None:
                continue
            for number, line in enumerate(text.splitlines(), start=1):
                if needle in line:
                    matches.append(Match(rel, number, line.strip()))
                    if len(matches) >= limit:
                        return matches
        return matches

    def first_existing(self, *candidates: str) -> str | None:
        """The first candidate that exists, else the first text file of the workspace, else ``None``."""
        for rel in candidates:
            if self.exists(rel):
                return rel
        files = self.text_files()
        return files[0] if files else None
