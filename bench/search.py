"""Search bench: how long the history takes to find sessions by the words of their transcripts, and to list them.

Run by hand: ``.venv/bin/python bench/search.py [--sessions 1000] [--messages 50] [--postgresql URL]``.

It fills a fresh SQLite store in a throw-away folder (and, with ``--postgresql``, the empty PostgreSQL database at
that URL) through the store's own writer, as sessions record: ``--sessions`` sessions of ``--messages`` messages
each, a user's prompt (10-40 words) then the agent's answer (150-450 words, in lines of about 15 words), drawn
from a vocabulary of ~6,000 words with Zipf-like frequencies (a few very common, most rare), seeded. PostgreSQL's
tables are analysed after the fill, as autovacuum would do on a live database. Then it times, as medians of
``--runs`` runs:

* ``Store.search`` for several queries (a common word, a rare one, two and three words, a prefix, no match),
  page 1 (25 sessions with their matching lines), and page 2 for the common word;
* ``Store.history`` page 1 and a page deep in the list;
* for SQLite, the index page itself over HTTP (``GET /`` and ``GET /?q=...``) from a real server started on that
  folder (``python -m webclient``), rendering included.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.servers import free_port  # noqa: E402
from webclient.session.agent_entry import AgentEntry  # noqa: E402
from webclient.session.agent_spec import AgentSpec  # noqa: E402
from webclient.store.store import Store  # noqa: E402

SYLLABLES = "ka lo mi ne ru sa ti vo pe da fu gi ho ja ke lu ma no pi qu re si to va we xi yo ze".split()
COMMON = (
    "the a to of and in is it that for on this with be as file test function code change error line we you "
    "not are can run now then so if add fix use new value return type module call data".split()
)
QUERIES = {
    "common word": "the",
    "code word": "function",
    "rare word": "",  # filled with a word of the vocabulary's tail
    "two words": "error module",
    "three words": "fix test function",
    "prefix": "modu",
    "no match": "zzzqqq",
}


def vocabulary(rng: random.Random, size: int = 6_000) -> tuple[list[str], list[float]]:
    words = list(COMMON)
    seen = set(words)
    while len(words) < size:
        word = "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4)))
        if word not in seen:
            seen.add(word)
            words.append(word)
    weights = [1 / (rank + 1) ** 1.05 for rank in range(len(words))]
    return words, weights


class Writer:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.words, weights = vocabulary(self.rng)
        self.cumulative = list(_accumulate(weights))

    def text(self, low: int, high: int) -> str:
        count = self.rng.randint(low, high)
        chosen = self.rng.choices(self.words, cum_weights=self.cumulative, k=count)
        lines = [" ".join(chosen[i : i + 15]).capitalize() + "." for i in range(0, count, 15)]
        return "\n".join(lines)


def _accumulate(weights: list[float]) -> list[float]:
    total, out = 0.0, []
    for weight in weights:
        total += weight
        out.append(total)
    return out


async def fill(store: Store, sessions: int, messages: int, seed: int) -> tuple[float, int]:
    """Write the sessions through the store's writer; returns the seconds it took and the words written."""
    writer = Writer(seed)
    spec = AgentSpec(AgentEntry("agent", ["bench-agent"]), Path("/srv/project"))
    written = 0
    started = time.perf_counter()
    for n in range(sessions):
        recorder = store.open_journal(f"bench-{n:05}", "bench", spec, 1_700_000_000.0 + 60 * n)
        for m in range(messages):
            user = m % 2 == 0
            text = writer.text(10, 40) if user else writer.text(150, 450)
            written += text.count(" ") + 1
            recorder.record("protocol", "in", '{"jsonrpc": "2.0"}')
            recorder.words("user" if user else "agent", text)
        recorder.state("ended", f"Bench session {n}", "Bench agent", messages // 2)
        if n % 20 == 19:
            await store.flush()
    await store.flush()
    if store.engine.dialect.name == "postgresql":
        # What autovacuum does soon after a bulk write on a live database: without the table statistics, the
        # planner takes the new tables for small ones and reads every session's rows rather than the GIN index.
        async with store.engine.begin() as connection:
            await connection.exec_driver_sql("ANALYZE")
    return time.perf_counter() - started, written


async def median_ms(runs: int, call: Callable[[], Awaitable[object]]) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        await call()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


async def measure(url: str, args: argparse.Namespace, label: str) -> dict[str, str]:
    store = await Store.open_url(url)
    try:
        seconds, words = await fill(store, args.sessions, args.messages, args.seed)
        print(f"[{label}] {args.sessions} sessions x {args.messages} messages ({words:,} words) in {seconds:.1f} s")
        queries = dict(QUERIES, **{"rare word": Writer(args.seed).words[3_000]})
        figures: dict[str, str] = {}
        for name, query in queries.items():
            found = await store.search(query)
            ms = await median_ms(args.runs, lambda q=query: store.search(q))  # type: ignore[misc]
            figures[f"search: {name} ({query!r}, {found.total} sessions)"] = f"{ms:.1f} ms"
        ms = await median_ms(args.runs, lambda: store.search("the", page=2))
        figures["search: common word, page 2"] = f"{ms:.1f} ms"
        ms = await median_ms(args.runs, lambda: store.history())
        figures["history: page 1"] = f"{ms:.1f} ms"
        deep = max(1, args.sessions // 25 - 1)
        ms = await median_ms(args.runs, lambda: store.history(page=deep))
        figures[f"history: page {deep}"] = f"{ms:.1f} ms"
        return figures
    finally:
        await store.close()


def http_figures(folder: Path, runs: int) -> dict[str, str]:
    """The index page over HTTP from a real server on the filled folder."""
    port, token = free_port(), secrets.token_urlsafe(16)
    env = {**os.environ, "WEBCLIENT_DATA_DIR": str(folder), "WEBCLIENT_TOKEN": token}
    env.pop("WEBCLIENT_DATABASE_URL", None)
    server = subprocess.Popen(
        [sys.executable, "-m", "webclient", "--host", "127.0.0.1", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    figures: dict[str, str] = {}
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers={"Authorization": f"token {token}"}) as http:
            deadline = time.monotonic() + 30
            while True:
                try:
                    http.get("/", timeout=2)
                    break
                except httpx.TransportError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.2)
            for name, path in [
                ("GET / (history page 1)", "/"),
                ("GET /?q=error+module", "/?q=error+module"),
                ("GET /?q=the", "/?q=the"),
            ]:
                times = []
                for _ in range(runs):
                    started = time.perf_counter()
                    response = http.get(path, timeout=30)
                    times.append((time.perf_counter() - started) * 1000)
                    assert response.status_code == 200, response.status_code
                figures[f"http: {name}"] = f"{statistics.median(times):.1f} ms ({len(response.content) // 1024} KiB)"
    finally:
        server.terminate()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=1_000)
    parser.add_argument("--messages", type=int, default=50)
    parser.add_argument("--runs", type=int, default=7, help="runs of each timing; the median is shown")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--postgresql", metavar="URL", help="also fill and time this (empty) PostgreSQL database")
    parser.add_argument("--no-http", action="store_true", help="leave out the index page over HTTP")
    parser.add_argument("--keep", metavar="FOLDER", type=Path, help="fill a store in this new folder and keep it")
    args = parser.parse_args()

    if args.keep is not None:
        args.keep.mkdir(parents=True)  # a new folder: a store filled before would count twice
    folder = args.keep or Path(tempfile.mkdtemp(prefix="webclient-search-bench-"))
    try:
        figures = asyncio.run(measure(f"sqlite:///{folder / 'webclient.sqlite3'}", args, "sqlite"))
        size = sum(path.stat().st_size for path in folder.iterdir())
        figures["store size"] = f"{size / 1024 / 1024:.0f} MiB"
        if not args.no_http:
            figures.update(http_figures(folder, args.runs))
        report("SQLite", figures)
        if args.postgresql:
            report("PostgreSQL", asyncio.run(measure(args.postgresql, args, "postgresql")))
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)


def report(title: str, figures: dict[str, str]) -> None:
    print(f"\n{title}")
    width = max(len(name) for name in figures)
    for name, value in figures.items():
        print(f"  {name:<{width}}  {value}")


if __name__ == "__main__":
    main()
