"""Journal bench: what journalling costs the server's CPU and its event loop, without an agent or a browser.

Run by hand: ``.venv/bin/python bench/journal.py [--rate N] [--seconds S] [--size CHARS] [--database-url URL]``.

In this process, a store (SQLite in a throw-away folder, or ``--database-url``) journals one session's protocol lines
of ``--size`` characters at ``--rate`` lines a second for ``--seconds``, then flushes; a task meanwhile wakes every
millisecond and notes the longest it waited beyond that (the event loop blocked). The same runs with
``NO_RECORDER`` (the store off) in the same process, so the difference is the journal's: CPU of the whole process
(the writer's thread included) and of the event loop's thread, both per second of the run, and transactions.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path

from webclient.session.agent_entry import AgentEntry
from webclient.session.agent_spec import AgentSpec
from webclient.session.recorder import NO_RECORDER, Recorder
from webclient.store.store import Store

SPEC = AgentSpec(AgentEntry("agent", ["bench-agent"]), Path("/srv/project"))


async def run(recorder: Recorder, line: str, rate: float, seconds: float) -> tuple[float, float, float]:
    """(process CPU, event loop thread CPU, longest stall), in seconds, for journalling at ``rate`` lines a second."""
    stall = 0.0

    async def ticker() -> None:
        nonlocal stall
        last = time.perf_counter()
        while True:
            await asyncio.sleep(0.001)
            now = time.perf_counter()
            stall, last = max(stall, now - last - 0.001), now

    ticking = asyncio.create_task(ticker())
    process, thread = time.process_time(), time.thread_time()
    per_tick = max(1, int(rate / 100))
    for _ in range(int(rate * seconds) // per_tick):
        for _ in range(per_tick):
            recorder.record("protocol", "in", line)
        await asyncio.sleep(per_tick / rate)
    await recorder.flush()
    ticking.cancel()
    return time.process_time() - process, time.thread_time() - thread, stall


async def main_async(args: argparse.Namespace) -> None:
    line = json.dumps({"jsonrpc": "2.0", "method": "session/update", "params": {"text": "x" * max(0, args.size - 60)}})
    with tempfile.TemporaryDirectory(prefix="journal-bench-") as tmp:
        store = await Store.open_url(args.database_url or f"sqlite+aiosqlite:///{tmp}/store.sqlite3")
        try:
            recorder = store.open_journal("benchsession", "agent", SPEC, time.time())
            await recorder.flush()
            dialect = store.engine.dialect.name
            print(f"{args.rate:g} lines/s of {len(line):,} characters for {args.seconds:g} s each ({dialect})")
            for name, journal in (("store off", NO_RECORDER), ("store on", recorder), ("store off", NO_RECORDER)):
                transactions = store.writer.transactions
                process, thread, stall = await run(journal, line, args.rate, args.seconds)
                print(
                    f"  {name:9}  CPU {1000 * process / args.seconds:6.1f} ms/s  event loop thread "
                    f"{1000 * thread / args.seconds:6.1f} ms/s  longest stall {1000 * stall:5.1f} ms  "
                    f"transactions {store.writer.transactions - transactions}"
                )
        finally:
            await store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rate", type=float, default=200, help="lines a second (default %(default)s)")
    parser.add_argument("--seconds", type=float, default=10, help="seconds each (default %(default)s)")
    parser.add_argument("--size", type=int, default=210, help="characters a line (default %(default)s)")
    parser.add_argument("--database-url", help="a PostgreSQL URL (default: SQLite in a throw-away folder)")
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
