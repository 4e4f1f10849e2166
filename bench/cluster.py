"""Cluster bench: what a page pays for watching a session through an instance that does not run it, and how long a
dead instance's session takes to run elsewhere.

Run by hand: ``.venv/bin/python bench/cluster.py [--sessions 20] [--rate 20] [--runs 3]``.

Each run starts a throw-away PostgreSQL (`tests.support.postgres`) and two real servers on it, the owner and the
other (``python -m webclient``, one token and one server key), both with ``bench/flood_agent.py --stamp`` as the agent:

* **paced**: ``--sessions`` sessions are made on the owner before the other starts (so that all run there), each
  page socket opened twice, on the owner and on the other (which forwards it), and every session prompted at once at
  ``--rate`` notifications per second. Each stamped ``tool_call_update`` gives the latency from the agent's write to
  the frame on each socket (p50, p99). The other's CPU while it relays, per frame it relayed, is the cost of a
  forwarded page.
* **flat out**: one session flooding as fast as its agent can write (``--messages``, ``--updates``), one socket on
  each instance: notifications per second seen through the other, as a ratio of the owner's.
* **failover**: a session idle on the owner, the owner killed (``SIGKILL``), the other's socket retried until the
  thread says the session moved there: seconds from the kill.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import secrets
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from flood import ROOT, Server, cpu_seconds, free_port  # bench/ is the script's folder, hence on sys.path
from isolation import STATUS_IDLE, Http, open_socket, percentile, prompt, wait_ready
from many_sessions import STAMP
from websockets.asyncio.client import ClientConnection

sys.path.insert(0, str(ROOT))

from tests.support.postgres import running_cluster  # noqa: E402

AGENT = ROOT / "bench" / "flood_agent.py"
KEY = secrets.token_urlsafe(24)


def start(tmp: Path, name: str, database: str, token: str, agent: str) -> tuple[Server, int]:
    port = free_port()
    env = {
        **os.environ,
        "WEBCLIENT_DATABASE_URL": database,
        "WEBCLIENT_TOKEN": token,
        "WEBCLIENT_SECRET_KEY": KEY,
        "WEBCLIENT_DATA_DIR": str(tmp / f"data-{name}"),
        "WEBCLIENT_AGENT": agent,
        "WEBCLIENT_WORKSPACE": str(tmp / "workspace"),
    }
    (tmp / "workspace").mkdir(exist_ok=True)
    argv = [sys.executable, "-m", "webclient", "--host", "127.0.0.1", "--port", str(port)]
    return Server(argv, env, tmp / f"{name}.log"), port


async def stamped(ws: ClientConnection, latencies: list[float], frames: list[int], timeout: float) -> None:
    """One page during its turn: the latency of every stamped update it gets, and how many frames, until idle."""
    seen = False
    async with asyncio.timeout(timeout):
        while True:
            frame = await ws.recv(decode=False)
            now = time.time_ns()
            frames[0] += 1
            stamps = set(STAMP.findall(frame))
            latencies.extend((now - int(stamp)) / 1e6 for stamp in stamps if int(stamp))
            seen = seen or bool(stamps)
            if seen and STATUS_IDLE.search(frame):
                return


async def until_idle(ws: ClientConnection, timeout: float) -> float:
    """Seconds until the page sees its (first) turn end: a short one may never show it running."""
    began, started = time.perf_counter(), False
    async with asyncio.timeout(timeout):
        while True:
            frame = await ws.recv(decode=False)
            if b'data-turn-state="running"' in frame or b'data-turns="1"' in frame:
                started = True
            if started and STATUS_IDLE.search(frame):
                return time.perf_counter() - began


async def paced(args: argparse.Namespace, database: str, tmp: Path) -> dict[str, Any]:
    token = secrets.token_urlsafe(16)
    agent = (
        f"{sys.executable} {AGENT} --stamp --rate {args.rate} --messages {args.paced_messages} "
        f"--updates {args.paced_updates} --tool-calls 5"
    )
    owner, owner_port = start(tmp, "owner", database, token, agent)
    other: Server | None = None
    sockets: list[ClientConnection] = []
    try:
        await owner.wait_listening(owner_port)
        ids = []
        for _ in range(args.sessions):
            status, headers, _, _ = await Http(owner_port, token).request("POST", "/sessions")
            assert status == 303, status
            ids.append(headers["location"].rsplit("/", 1)[1])
        other, other_port = start(tmp, "other", database, token, agent)
        await other.wait_listening(other_port)
        on_owner = list(await asyncio.gather(*(open_socket(owner_port, token, i) for i in ids)))
        through = list(await asyncio.gather(*(open_socket(other_port, token, i) for i in ids)))
        sockets = on_owner + through
        await asyncio.gather(*(wait_ready(ws, timeout=120) for ws in sockets))
        direct: list[float] = []
        relayed: list[float] = []
        frames = [0]
        other_cpu, owner_cpu = cpu_seconds(other.pid), cpu_seconds(owner.pid)
        began = time.perf_counter()
        await asyncio.gather(*(ws.send(prompt("flood")) for ws in on_owner))
        await asyncio.gather(
            *(stamped(ws, direct, [0], args.timeout) for ws in on_owner),
            *(stamped(ws, relayed, frames, args.timeout) for ws in through),
        )
        seconds = time.perf_counter() - began
        relay_cpu = cpu_seconds(other.pid) - other_cpu
        return {
            "owner_p50": percentile(direct, 0.5),
            "owner_p99": percentile(direct, 0.99),
            "other_p50": percentile(relayed, 0.5),
            "other_p99": percentile(relayed, 0.99),
            "relay_us_per_frame": relay_cpu / max(1, frames[0]) * 1e6,
            "relay_cpu_percent": relay_cpu / seconds * 100,
            "owner_cpu_percent": (cpu_seconds(owner.pid) - owner_cpu) / seconds * 100,
            "frames": frames[0],
        }
    finally:
        for ws in sockets:
            with contextlib.suppress(Exception):
                await ws.close()
        if other is not None:
            await other.stop()
        await owner.stop()


async def owner_other_session(owner: int, other: int, token: str, servers: tuple[Server, Server]) -> str:
    """Once both servers listen, a session made on the owner (the first): its id."""
    for server, port in zip(servers, (owner, other), strict=True):
        await server.wait_listening(port)
    status, headers, _, _ = await Http(owner, token).request("POST", "/sessions")
    assert status == 303, status
    return str(headers["location"].rsplit("/", 1)[1])


async def flat_out(args: argparse.Namespace, database: str, tmp: Path) -> dict[str, Any]:
    token = secrets.token_urlsafe(16)
    agent = f"{sys.executable} {AGENT} --messages {args.messages} --updates {args.updates}"
    owner, owner_port = start(tmp, "flat-owner", database, token, agent)
    other, other_port = start(tmp, "flat-other", database, token, agent)
    try:
        session_id = await owner_other_session(owner_port, other_port, token, (owner, other))
        on_owner = await open_socket(owner_port, token, session_id)
        through = await open_socket(other_port, token, session_id)
        await asyncio.gather(wait_ready(on_owner, 120), wait_ready(through, 120))
        await on_owner.send(prompt("flood"))
        direct, relayed = await asyncio.gather(until_idle(on_owner, args.timeout), until_idle(through, args.timeout))
        notifications = args.messages + args.updates
        return {"owner_rate": notifications / direct, "other_rate": notifications / relayed}
    finally:
        await other.stop()
        await owner.stop()


async def failover(database: str, tmp: Path) -> float:
    token = secrets.token_urlsafe(16)
    owner, owner_port = start(tmp, "dying", database, token, f"{sys.executable} {AGENT}")
    other, other_port = start(tmp, "taking", database, token, f"{sys.executable} {AGENT}")
    try:
        session_id = await owner_other_session(owner_port, other_port, token, (owner, other))
        ws = await open_socket(owner_port, token, session_id)
        await wait_ready(ws, 60)
        await ws.close()
        owner.note_agents()
        killed = time.perf_counter()
        os.kill(owner.pid, signal.SIGKILL)
        while True:
            with contextlib.suppress(Exception):
                page = await open_socket(other_port, token, session_id)
                try:
                    if b"moved to another instance" in await page.recv(decode=False):
                        return time.perf_counter() - killed
                finally:
                    await page.close()
            await asyncio.sleep(0.1)
    finally:
        await other.stop()
        await owner.stop()


async def main_async(args: argparse.Namespace) -> None:
    print(f"load average {os.getloadavg()[0]:.1f}; {args.sessions} sessions at {args.rate:g} notifications/s each")
    with running_cluster("cluster-bench-") as postgresql:
        runs = []
        for _ in range(args.runs):
            tmp = Path(tempfile.mkdtemp(prefix="cluster-bench-"))
            figures = await paced(args, postgresql.new_database(), tmp)
            figures |= await flat_out(args, postgresql.new_database(), tmp)
            figures["failover"] = await failover(postgresql.new_database(), tmp)
            runs.append(figures)
            print(
                f"  latency p50/p99 owner {figures['owner_p50']:.1f}/{figures['owner_p99']:.1f} ms, through the other "
                f"{figures['other_p50']:.1f}/{figures['other_p99']:.1f} ms; relay {figures['relay_us_per_frame']:.0f} "
                f"µs CPU per frame ({figures['relay_cpu_percent']:.1f} % of a core for {figures['frames']} frames; "
                f"owner {figures['owner_cpu_percent']:.0f} %); flat out {figures['other_rate']:.0f} vs "
                f"{figures['owner_rate']:.0f} notifications/s ({figures['other_rate'] / figures['owner_rate']:.2f}×); "
                f"kill -9 to running elsewhere {figures['failover']:.1f} s",
                flush=True,
            )
        median = {key: statistics.median(run[key] for run in runs) for key in runs[0]}
        print(
            f"median of {len(runs)}: owner {median['owner_p50']:.1f}/{median['owner_p99']:.1f} ms, other "
            f"{median['other_p50']:.1f}/{median['other_p99']:.1f} ms, relay {median['relay_us_per_frame']:.0f} µs a "
            f"frame, flat out {median['other_rate'] / median['owner_rate']:.2f}× the owner's, failover "
            f"{median['failover']:.1f} s"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=20, help="sessions streaming at once (paced)")
    parser.add_argument("--rate", type=float, default=20, help="notifications per second per session (paced)")
    parser.add_argument("--paced-messages", type=int, default=400, help="chunks per paced turn")
    parser.add_argument("--paced-updates", type=int, default=100, help="tool-call updates per paced turn")
    parser.add_argument("--messages", type=int, default=20_000, help="chunks of the flat-out turn")
    parser.add_argument("--updates", type=int, default=2_000, help="tool-call updates of the flat-out turn")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=300)
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
