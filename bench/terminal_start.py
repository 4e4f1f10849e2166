"""Terminal-start bench: how long the event loop stands still while an agent's command starts.

Run by hand: ``.venv/bin/python bench/terminal_start.py [--starts 40] [--ballast-mib 100]``. It holds a ballast of
memory (a fork copies the page tables of everything the process holds: a server holds about 100 MiB), runs uvloop
as the server does, ticks every millisecond to see how late the loop wakes, and starts ``--starts`` commands
(``true``) one after the other through `TerminalProcess`, each waited for and released. It prints the median time a
start takes and the loop's lag while they run: the worst tick, and the 99th percentile. Run it with
``PYTHONPATH=OTHER_CHECKOUT`` to measure another version of the code.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
from pathlib import Path

import uvloop

from webclient.workspace.terminal_process import TerminalProcess


async def measure(starts: int) -> tuple[list[float], list[float]]:
    lags: list[float] = []
    running = True

    async def tick() -> None:
        while running:
            before = time.perf_counter()
            await asyncio.sleep(0.001)
            lags.append(time.perf_counter() - before - 0.001)

    ticker = asyncio.create_task(tick())
    await asyncio.sleep(0.05)
    lags.clear()
    took = []
    env = {"PATH": os.environ.get("PATH", os.defpath)}
    for _ in range(starts):
        started = time.perf_counter()
        process = await TerminalProcess.start(
            "true",
            [],
            cwd=Path.cwd(),
            env=env,
            output_byte_limit=None,
            on_output=lambda data: None,
            on_exit=lambda status: None,
        )
        took.append(time.perf_counter() - started)
        await process.wait_for_exit()
        await process.release()
    running = False
    await ticker
    return took, lags


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=40)
    parser.add_argument("--ballast-mib", type=int, default=100)
    args = parser.parse_args()
    ballast = b"x" * (args.ballast_mib << 20)  # touched: its pages are mapped, as a server's are
    took, lags = uvloop.run(measure(args.starts))
    lags.sort()
    p99, median = lags[int(len(lags) * 0.99)], statistics.median(took)
    print(
        f"{args.starts} starts with {len(ballast) >> 20} MiB held: a start takes {median * 1000:.1f} ms "
        f"(median); the loop's lag meanwhile: worst {lags[-1] * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms "
        f"over {len(lags)} ticks"
    )


if __name__ == "__main__":
    main()
