"""Changes' added and removed line counts: as the diff view lines the files up (a patience diff), and bounded on a
file of many identical lines, where difflib alone was quadratic (one 500 KiB file took minutes): counted greedily
then, and said to be an estimate."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.waiting import until
from webclient.workspace.changes import ChangeTracker
from webclient.workspace.patience import changed_lines, opcodes
from webclient.workspace.watcher import WorkspaceWatcher

REPEATED = "x" * 70


def _counted(old: list[str], new: list[str]) -> tuple[int, int]:
    ops = opcodes(old, new)
    return sum(j2 - j1 for tag, _, _, j1, j2 in ops if tag != "equal"), sum(
        i2 - i1 for tag, i1, i2, _, _ in ops if tag != "equal"
    )


def test_counts_are_the_diff_views_when_the_file_has_distinct_lines() -> None:
    old = [f"line {n}" for n in range(3000)]
    new = [f"line {n}" if n % 10 else f"renamed {n}" for n in range(3000)] + ["added"]
    counts = changed_lines(old, new)
    assert (counts.added, counts.removed) == _counted(old, new) == (301, 300)
    assert not counts.estimated


def test_a_small_repetitive_stretch_is_still_counted_exactly() -> None:
    old = [REPEATED] * 100
    new = ["changed" if n % 7 == 0 else REPEATED for n in range(100)]
    counts = changed_lines(old, new)
    assert (counts.added, counts.removed, counts.estimated) == (15, 15, False)


def test_a_big_file_of_identical_lines_is_counted_greedily_and_said_to_be_an_estimate() -> None:
    lines = 500 * 1024 // 71
    old = [REPEATED] * lines
    new = ["changed" if n % 100 == 0 else REPEATED for n in range(lines)]
    counts = changed_lines(old, new)
    assert counts.estimated
    assert (counts.added, counts.removed) == (73, 73)  # each changed line replaced one: greedy finds the rest


@pytest.mark.asyncio
async def test_the_tracker_lists_a_repetitive_files_counts_as_estimated(tmp_path: Path) -> None:
    lines = 500 * 1024 // 71
    (tmp_path / "same.txt").write_text(f"{REPEATED}\n" * lines)
    (tmp_path / "code.py").write_text("a = 1\nb = 2\n")
    tracker = ChangeTracker([tmp_path], lambda: None, WorkspaceWatcher())
    await tracker.start()
    (tmp_path / "same.txt").write_text("".join("changed\n" if n % 100 == 0 else f"{REPEATED}\n" for n in range(lines)))
    (tmp_path / "code.py").write_text("a = 1\nb = 3\n")
    tracker.note_write(tmp_path / "same.txt")
    tracker.note_write(tmp_path / "code.py")
    await until(lambda: len(tracker.files()) == 2)
    code, same = tracker.files()
    await tracker.close()
    assert (code.added, code.removed, code.estimated) == (1, 1, False)
    assert (same.added, same.removed, same.estimated) == (73, 73, True)
