"""Throw-away workspaces: a fresh copy of a template folder for one session (the demo's sample project)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path


def fresh_copy(template: Path, target: Path | None = None) -> Path:
    """Copy ``template`` into a new temporary folder (or into ``target``, made if needed) and return its resolved path
    (the caller deletes it)."""
    if target is None:
        target = Path(tempfile.mkdtemp(prefix="acp-workspace-"))
    else:
        target.mkdir(mode=0o700, parents=True, exist_ok=True)
    shutil.copytree(
        template, target, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache")
    )
    return target.resolve()
