"""What the review costs a prompt: reading the changed files as the last prompt's baseline (`PromptBaseline.mark`,
on the event loop when a turn starts) and the bytes it journals, first and again when nothing changed since.

    PYTHONPATH=$PWD .venv/bin/python bench/review.py            # 10, 100 and 200 changed files of 10 KiB; 20 of 500 KiB
    PYTHONPATH=$PWD .venv/bin/python bench/review.py --runs 21

Prints, per case, the median time of a mark, and the journal's bytes for the first mark and for one after it.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from webclient.session.prompt_baseline import PromptBaseline
from webclient.workspace.changes import ChangeTracker


class CountingRecorder:
    """A journal that only counts what it is given."""

    def __init__(self) -> None:
        self.bytes = 0

    def record(self, kind: str, direction: str, body: str) -> None:
        self.bytes += len(body.encode("utf-8", "surrogateescape"))

    def state(self, state: str, title: str | None, agent: str | None, turns: int) -> None:
        pass

    def words(self, role: str, text: str, entry_seq: int | None = None) -> None:
        pass

    async def flush(self) -> None:
        pass


async def case(files: int, size: int, runs: int) -> str:
    with tempfile.TemporaryDirectory(prefix="bench-review-") as folder:
        root = Path(folder)
        text = "".join(f"{i:>8} {'x' * 70}\n" for i in range(size // 80))  # distinct lines, as code has
        for n in range(files):
            (root / f"f{n}.txt").write_text(text)
        tracker = ChangeTracker([root], lambda: None)
        await tracker.start()
        for n in range(files):
            (root / f"f{n}.txt").write_text(text + "changed\n")
        deadline = time.monotonic() + 30
        while len(tracker.changed) < files and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert len(tracker.changed) == files, f"only {len(tracker.changed)} of {files} files seen changed"
        recorder = CountingRecorder()
        baseline = PromptBaseline(tracker, recorder)
        baseline.mark()
        first = recorder.bytes
        times = []
        for _ in range(runs):
            recorder.bytes = 0
            started = time.perf_counter()
            baseline.mark()
            times.append((time.perf_counter() - started) * 1000)
        await tracker.close()
        return (
            f"{files:>4} files of {size // 1024:>4} KiB: mark {statistics.median(times):7.2f} ms (median of {runs}), "
            f"journal {first / 1024:8.1f} KiB first, {recorder.bytes / 1024:6.1f} KiB when unchanged"
        )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11)
    args = parser.parse_args()
    for files, size in ((20, 500 * 1024), (10, 10 * 1024), (100, 10 * 1024), (200, 10 * 1024)):
        print(await case(files, size, args.runs))


if __name__ == "__main__":
    asyncio.run(main())
