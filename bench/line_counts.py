"""What Changes' line counts cost on files of many identical lines: the CPU time from the files' writes until the
tracker lists them all with their counts (`ChangeTracker`, off the event loop, in the process's one thread pool).

    PYTHONPATH=$PWD .venv/bin/python bench/line_counts.py                      # the cases below
    PYTHONPATH=$PWD .venv/bin/python bench/line_counts.py --files 20 --kib 500 --every 0

Each file is ``x`` × 70 a line; ``--every N`` changes every Nth line, 0 appends one line instead. Prints, per case, the
process's CPU seconds and wall seconds until all are listed, and the first file's counts.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from webclient.workspace.changes import ChangeTracker

LINE = "x" * 70 + "\n"


async def case(files: int, kib: int, every: int) -> str:
    lines = kib * 1024 // len(LINE)
    before = LINE * lines
    after = (
        before + "changed\n" if every == 0 else "".join("changed\n" if n % every == 0 else LINE for n in range(lines))
    )
    with tempfile.TemporaryDirectory(prefix="bench-counts-") as folder:
        root = Path(folder)
        for n in range(files):
            (root / f"f{n}.txt").write_text(before)
        tracker = ChangeTracker([root], lambda: None)
        await tracker.start()
        cpu, wall = time.process_time(), time.perf_counter()
        for n in range(files):
            (root / f"f{n}.txt").write_text(after)
            tracker.note_write(root / f"f{n}.txt")
        while len(tracker.changed) < files:
            await asyncio.sleep(0.01)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        first = tracker.files()[0]
        await tracker.close()
    shape = "one line appended" if every == 0 else f"every {every}th line changed"
    return (
        f"{files:>3} × {kib:>4} KiB, {shape:<26}: {cpu:6.2f} s CPU, {wall:6.2f} s wall; "
        f"+{first.added} −{first.removed}{' (estimated)' if getattr(first, 'estimated', False) else ''}"
    )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int)
    parser.add_argument("--kib", type=int)
    parser.add_argument("--every", type=int)
    args = parser.parse_args()
    cases = [(20, 500, 0), (1, 50, 100), (20, 500, 100)]
    if args.files is not None:
        cases = [(args.files, args.kib or 500, args.every or 0)]
    for files, kib, every in cases:
        print(await case(files, kib, every))


if __name__ == "__main__":
    asyncio.run(main())
