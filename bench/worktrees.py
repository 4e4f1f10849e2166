"""What a session's worktree costs (`webclient.workspace.worktrees`): making one of a repository of N files, the
status a page asks for, a commit of one change, the branch's diff, the removal; medians of several runs.

    PYTHONPATH=$PWD .venv/bin/python bench/worktrees.py --files 10000 --runs 5

Each step is the hardened git the server runs (one more ``git config`` per command, to empty the repository's
filters); ``plain`` times the same ``git status`` without that, so the price of the hardening shows.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from webclient.workspace import worktrees


def repository(folder: Path, files: int) -> Path:
    folder.mkdir()
    git = ["git", "-c", "user.name=Bench", "-c", "user.email=bench@example.org", "-C", str(folder)]
    subprocess.run([*git, "init", "--quiet"], check=True)
    for index in range(files):
        sub = folder / f"d{index % 100:02d}"
        sub.mkdir(exist_ok=True)
        (sub / f"f{index}.txt").write_text(f"line {index}\n" * 20)
    subprocess.run([*git, "add", "--all"], check=True)
    subprocess.run([*git, "commit", "--quiet", "-m", "files"], check=True)
    return folder


def timed(step: Callable[[], object]) -> float:
    start = time.perf_counter()
    step()
    return (time.perf_counter() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    options = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="bench-worktrees-"))
    try:
        repo = repository(base / "repo", options.files)
        figures: dict[str, list[float]] = {}
        for run in range(options.runs):
            path = base / "worktrees" / f"s{run}"
            made: list[worktrees.Worktree] = []
            figures.setdefault("add", []).append(timed(lambda: made.append(worktrees.add(repo, path, f"bench/{run}"))))
            tree = made[0]
            figures.setdefault("status (clean)", []).append(timed(lambda: worktrees.status(tree)))
            plain = ["git", "-C", str(path), "status", "--porcelain", "-z", "--untracked-files=all"]
            figures.setdefault("plain git status", []).append(timed(lambda: subprocess.run(plain, check=True)))
            (path / "d00" / "f0.txt").write_text("changed\n")
            figures.setdefault("branch diff (1 file)", []).append(timed(lambda: worktrees.branch_files(tree)))
            figures.setdefault("commit (1 file)", []).append(
                timed(lambda: worktrees.commit(tree, "bench", ("Bench", "bench@example.org")))
            )
            figures.setdefault("remove", []).append(timed(lambda: worktrees.remove(tree)))
        print(f"{options.files:,} files, {options.runs} runs, medians:")
        for name, values in figures.items():
            print(f"  {name:22} {statistics.median(values):8.1f} ms")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
