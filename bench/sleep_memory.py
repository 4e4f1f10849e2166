"""Agents that sleep: the memory of N idle demo sessions with sleeping off and on, and what a wake costs.

Run by hand: ``.venv/bin/python bench/sleep_memory.py [--sessions 20] [--runs 2] [--idle 2] [--server-root DIR]``.

Each run starts the real server (``python -m webclient``, store on in a temporary data folder, the built-in demo
agent) twice, alternately with sleeping off (``WEBCLIENT_AGENT_IDLE_MINUTES=0``) and on (``--idle`` seconds; the demo
agent can resume nothing, so ``WEBCLIENT_SLEEP_WITHOUT_RESUME=demo``: it wakes in a new session). It makes N sessions,
opens each one's page socket until its agent is ready, has it answer one prompt, closes the socket, then waits
``--idle`` seconds and three more. It prints the server's RSS (with its reaper's), the agents' (the sum of its other
children's) and their
count, the whole per session, and with sleeping on the time from a page opened on a sleeping session to its agent
ready again (median of five). Every process is stopped at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path

from flood import ROOT, Server, free_port, proc_status
from isolation import STATUS_IDLE, Http, open_socket, prompt, wait_ready

MIB = 1024  # KiB


def start_server(args: argparse.Namespace, tmp: Path, idle_minutes: float) -> tuple[Server, int, str]:
    port, token = free_port(), secrets.token_urlsafe(16)
    env = {
        **os.environ,
        "WEBCLIENT_DATA_DIR": str(tmp / "data"),
        "WEBCLIENT_TOKEN": token,
        "WEBCLIENT_DEMO_REMOTE": "off",
        "DEMO_AGENT_SPEED": "0",
        "WEBCLIENT_AGENT_IDLE_MINUTES": f"{idle_minutes:g}",
        "WEBCLIENT_SLEEP_WITHOUT_RESUME": "demo",
    }
    for name in ("WEBCLIENT_RELOAD", "WEBCLIENT_AGENT", "WEBCLIENT_WORKSPACE", "WEBCLIENT_CONFIG"):
        env.pop(name, None)
    if args.server_root:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(args.server_root), env.get("PYTHONPATH")]))
    cwd = Path(args.server_root) if args.server_root else ROOT
    argv = [sys.executable, "-m", "webclient", "--host", "127.0.0.1", "--port", str(port)]
    return Server(argv, env, tmp / "server.log", cwd=cwd), port, token


async def one_session(http: Http, port: int, token: str) -> str:
    """A session whose agent answered one prompt, its page closed: idle, nobody watching."""
    session_id = await http.new_session()
    ws = await open_socket(port, token, session_id)
    try:
        await wait_ready(ws, 60)
        await ws.send(prompt("markdown"))
        replied = False
        async with asyncio.timeout(60):  # the prompt shown, then the turn ended: maybe one frame
            while True:
                frame = await ws.recv(decode=False)
                replied = replied or b'data-role="user-message"' in frame
                if replied and STATUS_IDLE.search(frame):
                    break
    finally:
        await ws.close()
    return session_id


async def wake_seconds(port: int, token: str, session_id: str) -> float:
    started = time.perf_counter()
    ws = await open_socket(port, token, session_id)
    try:
        async with asyncio.timeout(60):
            while not STATUS_IDLE.search(await ws.recv(decode=False)):
                pass
    finally:
        await ws.close()
    return time.perf_counter() - started


async def measure(args: argparse.Namespace, sleeping: bool) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="bench-sleep-") as folder:
        server, port, token = start_server(args, Path(folder), args.idle / 60 if sleeping else 0.0)
        try:
            await server.wait_listening(port)
            await asyncio.sleep(1)
            helpers = set(server.note_agents())  # the server's own (its reaper), not agents
            http = Http(port, token)
            gate = asyncio.Semaphore(4)

            async def made() -> str:
                async with gate:
                    return await one_session(http, port, token)

            ids = await asyncio.gather(*(made() for _ in range(args.sessions)))
            await asyncio.sleep(args.idle + 3)
            agents = [pid for pid in server.note_agents() if pid not in helpers]
            server_kib = sum(proc_status(pid).get("VmRSS", 0) for pid in (server.pid, *helpers))
            agents_kib = sum(proc_status(pid).get("VmRSS", 0) for pid in agents)
            result = {
                "server": server_kib / MIB,
                "agents": agents_kib / MIB,
                "running": float(len(agents)),
                "per_session": (server_kib + agents_kib) / MIB / args.sessions,
            }
            if sleeping:
                result["wake"] = statistics.median([await wake_seconds(port, token, i) for i in ids[:5]])
            return result
        finally:
            await server.stop()


async def run(args: argparse.Namespace) -> None:
    results: dict[bool, list[dict[str, float]]] = {False: [], True: []}
    for _ in range(args.runs):
        for sleeping in (False, True):
            results[sleeping].append(await measure(args, sleeping))
    print(f"{args.sessions} idle demo sessions, {args.runs} runs each (medians), load {os.getloadavg()[0]:.1f}")
    print(f"{'sleeping':>9} {'server MiB':>11} {'agents MiB':>11} {'agents':>7} {'MiB/session':>12} {'wake s':>7}")
    for sleeping, rows in results.items():

        def median(key: str, rows: list[dict[str, float]] = rows) -> float:
            return statistics.median(row[key] for row in rows)

        wake = f"{median('wake'):7.2f}" if sleeping else f"{'-':>7}"
        print(
            f"{'on' if sleeping else 'off':>9} {median('server'):11.1f} {median('agents'):11.1f}"
            f" {median('running'):7.0f} {median('per_session'):12.1f} {wake}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--idle", type=float, default=2.0, help="seconds idle before an agent sleeps (sleeping on)")
    parser.add_argument("--server-root", help="run the server from this checkout (another branch)")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
