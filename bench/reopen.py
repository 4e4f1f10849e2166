"""Reopen bench: how long a big stored session takes to show again after a restart, and what the store keeps of it.

Run by hand: ``.venv/bin/python bench/reopen.py [--messages N] [--updates N] [--runs N] [--database-url URL]``.

A server (``python -m webclient``, its store in a throw-away data folder, or in ``--database-url``) runs one turn
of the flood agent (``bench/flood_agent.py``: 100,000 ``agent_message_chunk`` and 10,000 ``tool_call_update``
notifications by default) and stops (SIGTERM). Then, ``--runs`` times, a fresh server starts on the same store
and the bench times ``GET /sessions/ID``: the first request rebuilds the session from its journal (read, replay)
and renders the page, which is the first paint. A second GET shows what the page alone costs.

Figures: the journal's records and bytes per 1,000 notifications, the SQLite file's size, and the reopen times
(median and each run).
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

from flood import (  # bench/ is the script's folder, hence on sys.path
    AGENT_STATE,
    AUTHORIZATION,
    NONCE,
    ROOT,
    TOKEN,
    TURN_STATE,
    Server,
    agent_command,
    create_session,
    free_port,
)
from websockets.asyncio.client import connect

STOP_REASON = re.compile(rb'data-stop-reason="([^"]*)"')
"""Why the last turn ended, in the session's header (empty before the first one ends)."""


def get(port: int, path: str) -> tuple[int, float, int]:
    """GET ``path``: its status, the seconds to the whole answer, and its size."""
    started = time.perf_counter()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        connection.request("GET", path, headers=AUTHORIZATION)
        response = connection.getresponse()
        body = response.read()
    finally:
        connection.close()
    return response.status, time.perf_counter() - started, len(body)


async def fill(args: argparse.Namespace, env: dict[str, str], tmp: Path, root: Path = ROOT) -> str:
    """One session through one flooded turn, on a server (of the checkout ``root``) stopped afterwards; its id."""
    port = free_port()
    env = {**env, "WEBCLIENT_AGENT": agent_command(args, tmp / "report.json")}
    server = Server([sys.executable, "-m", "webclient", "--port", str(port)], env, tmp / "fill.log", cwd=root)
    try:
        await server.wait_listening(port)
        session_id = create_session(port)
        url = f"ws://127.0.0.1:{port}/sessions/{session_id}/ws"
        async with connect(url, additional_headers=AUTHORIZATION, max_size=None, compression=None) as ws:
            frame = await ws.recv(decode=False)
            nonce = NONCE.search(frame)
            assert nonce is not None
            while (state := AGENT_STATE.search(frame)) is None or state.group(1) != b"ready":
                frame = await ws.recv(decode=False)
            await ws.send(f'{{"action": "prompt", "prompt": "flood", "nonce": "{nonce.group(1).decode()}"}}')
            while True:  # until the header says why the turn ended (a fast turn may never show "running" in a frame)
                frame = await ws.recv(decode=False)
                if b'id="session-status"' in frame and (turn := TURN_STATE.search(frame)) is not None:
                    if turn.group(1) == b"idle" and (ended := STOP_REASON.search(frame)) and ended.group(1):
                        break
    finally:
        await server.stop()
    return session_id


async def main_async(args: argparse.Namespace) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="reopen-bench-"))
    env = {**os.environ, "WEBCLIENT_TOKEN": TOKEN, "WEBCLIENT_DATA_DIR": str(tmp / "data")}
    if args.database_url:
        env["WEBCLIENT_DATABASE_URL"] = args.database_url
    session_id = await fill(args, env, tmp)
    notifications = args.messages + args.updates + 2 * args.tool_calls
    sqlite = tmp / "data" / "webclient.sqlite3"
    if sqlite.exists():
        import sqlite3

        with sqlite3.connect(sqlite) as db:
            rows, body_bytes = db.execute(
                "SELECT count(*), sum(length(CAST(body AS BLOB))) FROM journal WHERE session_id = ?", (session_id,)
            ).fetchone()
        db.close()
        size = sqlite.stat().st_size + sum(p.stat().st_size for p in sqlite.parent.glob("*-wal"))
        print(f"journal: {rows:,} records, {body_bytes / 1e6:.1f} MB of bodies for {notifications:,} notifications")
        per_1000 = f"{body_bytes / notifications:.0f} KB of bodies, {size / notifications:.0f} KB of file"
        print(f"per 1,000 notifications: {per_1000}")
    firsts, seconds = [], []
    for run in range(args.runs):
        port = free_port()
        server = Server([sys.executable, "-m", "webclient", "--port", str(port)], env, tmp / f"reopen-{run}.log")
        try:
            await server.wait_listening(port)
            status, first, size = get(port, f"/sessions/{session_id}")
            assert status == 200, status
            _, second, _ = get(port, f"/sessions/{session_id}")
            firsts.append(first)
            seconds.append(second)
            times = f"reopen (rebuild + page) {first * 1000:.0f} ms, page again {second * 1000:.0f} ms"
            print(f"run {run + 1}: {times}, {size:,} bytes")
        finally:
            await server.stop()
    reopen, alone = statistics.median(firsts) * 1000, statistics.median(seconds) * 1000
    print(f"median: reopen {reopen:.0f} ms, page alone {alone:.0f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--updates", type=int, default=10_000)
    parser.add_argument("--tool-calls", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rate", type=float, default=0)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--database-url", default=None, help="PostgreSQL URL (default: SQLite in a tmp folder)")
    args = parser.parse_args()
    os.chdir(ROOT)
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
