"""What a checkpoint costs (issue 27): the first snapshot of a 10,000-file repository, its store's size, how long the
first prompt waits, and the cost per prompt afterwards (a snapshot with a few files changed): time and bytes added.

    PYTHONPATH=$PWD .venv/bin/python bench/checkpoints.py                 # 10,000 files of 2-4 kB, 5 prompts
    PYTHONPATH=$PWD .venv/bin/python bench/checkpoints.py --files 50000 --changed 20 --prompts 10

The repository is generated (source-like text in nested folders, a .gitignore, a few ignored build files, a git
repository of its own with a commit, as a person's project has), in a temporary folder removed at the end. The
snapshots are the product's own (`webclient.workspace.checkpoints.CheckpointStore`), run as the session runs them
(in a thread): the first starts as the agent starts, in the background, and the first prompt comes ``--first-after``
seconds later (with a few files changed), waiting for its own snapshot and whatever is left of the first. Also timed:
a preview (what a restore would change) and the restore itself, to the first checkpoint.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from webclient.workspace.checkpoints import CheckpointStore
from webclient.workspace.paths import Workspace

WORDS = "def class return import self value items index result for while if else with open path name".split()


def source_text(rng: random.Random, size: int) -> str:
    lines = []
    total = 0
    while total < size:
        indent = "    " * rng.randint(0, 3)
        line = indent + " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 10))) + f"  # {rng.random():.6f}"
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines) + "\n"


def make_repository(root: Path, files: int, seed: int) -> None:
    rng = random.Random(seed)
    for number in range(files):
        folder = root / f"pkg{number % 20:02d}" / f"mod{(number // 20) % 25:02d}" / f"sub{(number // 500) % 4}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"file{number:05d}.py").write_text(source_text(rng, rng.randint(2048, 4096)))
    (root / ".gitignore").write_text("build/\n*.log\n")
    (root / "build").mkdir()
    for number in range(50):
        (root / "build" / f"out{number}.js").write_text(source_text(rng, 3000))
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "one"]):
        subprocess.run(["git", "-C", str(root), *args], check=True, env=env)


def size_of(folder: Path) -> tuple[int, int]:
    """(bytes on disk, as ``du`` counts blocks; bytes of the files themselves)."""
    on_disk = apparent = 0
    for path in folder.rglob("*"):
        if path.is_file() and not path.is_symlink():
            info = path.stat()
            on_disk += info.st_blocks * 512
            apparent += info.st_size
    return on_disk, apparent


def mib(value: float) -> str:
    return f"{value / 1024 / 1024:.1f} MiB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--changed", type=int, default=5, help="files each prompt changes (and one it adds)")
    parser.add_argument("--prompts", type=int, default=5)
    parser.add_argument("--seed", type=int, default=27)
    parser.add_argument(
        "--first-after", type=float, default=5.0, help="seconds from the agent's start to the first prompt"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-checkpoints-") as temp:
        root = Path(temp) / "repo"
        root.mkdir()
        started = time.perf_counter()
        make_repository(root, args.files, args.seed)
        print(
            f"repository: {args.files:,} files, {mib(size_of(root)[1] - size_of(root / '.git')[1])} of source "
            f"(made in {time.perf_counter() - started:.1f} s); load average {os.getloadavg()[0]:.2f}"
        )
        store = CheckpointStore(Path(temp) / "data" / "checkpoints" / "s.git", root, 10 * 1024 * 1024, timeout=600)

        took: list[float] = []

        def first_snapshot() -> None:  # as the agent starts (`Checkpoints.prepare`)
            began = time.perf_counter()
            store.snapshot()
            took.append(time.perf_counter() - began)

        started = time.perf_counter()
        background = threading.Thread(target=first_snapshot)
        background.start()
        rng = random.Random(args.seed + 1)
        all_files = sorted(root.glob("pkg*/**/*.py"))
        time.sleep(max(0.0, args.first_after - (time.perf_counter() - started)))
        for path in rng.sample(all_files, args.changed):
            with path.open("a") as file:
                file.write("# changed before the first prompt\n")
        prompted = time.perf_counter()
        first = store.snapshot()
        first_wait = time.perf_counter() - prompted
        background.join()
        first_seconds = took[0]
        disk, apparent = size_of(store.git_dir)
        print(
            f"first snapshot (in the background from the agent's start): {first_seconds:.2f} s, {first.files:,} "
            f"files, {first.skipped_count} left out; store {mib(disk)} on disk ({mib(apparent)} of files)"
        )
        print(
            f"first prompt, {args.first_after:g} s after the agent's start ({args.changed} files changed): "
            f"waits {first_wait * 1000:.0f} ms"
        )

        times, added_disk, added_apparent = [], [], []
        for prompt in range(args.prompts):
            for path in rng.sample(all_files, args.changed):
                with path.open("a") as file:
                    file.write(f"# changed by prompt {prompt}\n")
            (root / f"new{prompt}.py").write_text(source_text(rng, 3000))
            before_disk, before_apparent = size_of(store.git_dir)
            started = time.perf_counter()
            store.snapshot()
            times.append(time.perf_counter() - started)
            after_disk, after_apparent = size_of(store.git_dir)
            added_disk.append(after_disk - before_disk)
            added_apparent.append(after_apparent - before_apparent)
        print(
            f"per prompt ({args.changed} files changed, 1 added), {args.prompts} prompts: "
            f"median {statistics.median(times) * 1000:.0f} ms (min {min(times) * 1000:.0f}, "
            f"max {max(times) * 1000:.0f}); store grows by a median {statistics.median(added_disk) / 1024:.0f} KiB "
            f"on disk ({statistics.median(added_apparent) / 1024:.0f} KiB of files)"
        )

        started = time.perf_counter()
        changes = store.changes_since(first.tree)
        print(
            f"preview of a restore to the first: {len(changes)} files, {(time.perf_counter() - started) * 1000:.0f} ms"
        )
        started = time.perf_counter()
        restored = store.restore(first.tree, Workspace([root]))
        print(
            f"restore to the first: {len(restored.written)} written back, {len(restored.deleted)} deleted, "
            f"{(time.perf_counter() - started) * 1000:.0f} ms"
        )
        shutil.rmtree(store.git_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
