"""The Changes view across a restart: each file's original is told once for the journal, and originals handed back
from it are what a new baseline (Resume) compares with."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.support.waiting import until
from webclient.workspace.changes import ChangeTracker
from webclient.workspace.watcher import WorkspaceWatcher


@pytest.mark.asyncio
async def test_originals_are_told_once_and_a_new_baseline_keeps_those_handed_back(tmp_path: Path) -> None:
    (tmp_path / "kept.py").write_text("before\n")
    (tmp_path / "same.py").write_text("same\n")
    watcher = WorkspaceWatcher()
    told: list[tuple[Path, bytes | None]] = []
    first = ChangeTracker([tmp_path], lambda: None, watcher)
    first.on_original = lambda path, original: told.append((path, original))
    await first.start()
    (tmp_path / "kept.py").write_text("after\n")
    (tmp_path / "new.py").write_text("new\n")
    first.note_write(tmp_path / "kept.py")
    first.note_write(tmp_path / "new.py")
    await until(lambda: len(first.files()) == 2)
    (tmp_path / "kept.py").write_text("after again\n")
    first.note_write(tmp_path / "kept.py")
    await until(lambda: first.files()[0].added == 1 and first.files()[0].path.name == "kept.py")
    await first.close()
    assert sorted(told) == [(tmp_path / "kept.py", b"before\n"), (tmp_path / "new.py", None)]

    # The server starts again: the session is rebuilt (no baseline), then resumed (a baseline of the disk now).
    second = ChangeTracker([tmp_path], lambda: None, watcher)
    second.keep(dict(told))
    await until(
        lambda: [(c.path.name, c.status) for c in second.files()] == [("kept.py", "modified"), ("new.py", "added")]
    )
    await second.start()
    await asyncio.sleep(0.3)  # its comparisons with the disk, after the new baseline, are done
    await until(
        lambda: [(c.path.name, c.status) for c in second.files()] == [("kept.py", "modified"), ("new.py", "added")]
    )
    assert second.original(tmp_path / "kept.py") == b"before\n"
    (tmp_path / "kept.py").write_text("before\n")  # put back as it was: no longer a change
    second.note_write(tmp_path / "kept.py")
    await until(lambda: [c.path.name for c in second.files()] == ["new.py"])
    await second.close()
    await watcher.close()
