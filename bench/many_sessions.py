"""Many-sessions bench: what one server spends on N sessions that stream at once, and on 200 that start at once.

Run by hand: ``.venv/bin/python bench/many_sessions.py [--sessions 1 20 50 100] [--rate R] [--seconds S]``.

For each N it starts the real server (``python -m webclient``, store on in a temporary data folder) with
``bench/flood_agent.py --stamp`` as the agent, paced at ``--rate`` notifications per second per session, makes N
sessions (``POST /sessions``) and opens each one's page socket, waits until every agent is ready, then prompts them
all at once. Each ``tool_call_update`` carries the time the agent wrote it in its title; each frame a socket gets is
searched for those times, which gives the latency from the agent's write to the frame reaching the page (p50, p99,
max over every session). It prints, per N: those latencies, the server's CPU (% of one core) while they stream, its
RSS with no session, with N ready sessions (and the difference per session: what a live session costs beyond its
view) and at the end of the turns, and the ``POST /sessions`` times.

``--starts N`` instead makes N sessions with the built-in demo agent, eight requests at a time as a team would, and
prints the ``POST /sessions`` times (median, p90, max), the inotify instances the server holds once they have all
started and the watch failures it logged. Every process is stopped at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import secrets
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from flood import ROOT, Server, cpu_seconds, free_port, proc_status
from isolation import STATUS_IDLE, Http, open_socket, percentile, prompt, wait_ready
from websockets.asyncio.client import ClientConnection

AGENT = ROOT / "bench" / "flood_agent.py"
STAMP = re.compile(rb"@(\d{19})")


def inotify_instances(pid: int) -> int:
    count = 0
    with contextlib.suppress(OSError):
        for fd in os.listdir(f"/proc/{pid}/fd"):
            with contextlib.suppress(OSError):
                count += os.readlink(f"/proc/{pid}/fd/{fd}") == "anon_inode:inotify"
    return count


def start_server(args: argparse.Namespace, tmp: Path, agent: str | None) -> tuple[Server, int, str]:
    port, token = free_port(), secrets.token_urlsafe(16)
    env = {**os.environ, "WEBCLIENT_DATA_DIR": str(tmp / "data"), "WEBCLIENT_TOKEN": token}
    for name in ("WEBCLIENT_RELOAD", "WEBCLIENT_AGENT", "WEBCLIENT_WORKSPACE", "WEBCLIENT_CONFIG"):
        env.pop(name, None)
    if agent is not None:
        env["WEBCLIENT_AGENT"] = agent
        env["WEBCLIENT_WORKSPACE"] = str(tmp / "workspace")
        (tmp / "workspace").mkdir()
    if args.server_root:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(args.server_root), env.get("PYTHONPATH")]))
    cwd = Path(args.server_root) if args.server_root else ROOT
    profile = ["-m", "cProfile", "-o", args.profile] if args.profile else []
    argv = [sys.executable, *profile, "-m", "webclient", "--host", "127.0.0.1", "--port", str(port)]
    stop = signal.SIGINT if profile else signal.SIGTERM  # only SIGINT lets cProfile write its file
    return Server(argv, env, tmp / "server.log", stop, cwd=cwd), port, token


async def new_sessions(http: Http, count: int, at_once: int) -> tuple[list[str], list[float]]:
    """``count`` sessions made ``at_once`` requests at a time; their ids and each request's seconds."""
    ids: list[str] = []
    times: list[float] = []
    gate = asyncio.Semaphore(at_once)

    async def one() -> None:
        async with gate:
            status, headers, _, took = await http.request("POST", "/sessions")
            if status != 303:
                raise RuntimeError(f"POST /sessions answered {status}")
            ids.append(headers["location"].rsplit("/", 1)[1])
            times.append(took)

    await asyncio.gather(*(one() for _ in range(count)))
    return ids, times


async def stream(ws: ClientConnection, latencies: list[float], timeout: float) -> None:
    """One page during its turn: the latency of every stamped update a frame carries, until the turn ends."""
    seen = False
    async with asyncio.timeout(timeout):
        while True:
            frame = await ws.recv(decode=False)
            now = time.time_ns()
            stamps = set(STAMP.findall(frame))
            latencies.extend((now - int(stamp)) / 1e6 for stamp in stamps if int(stamp))
            seen = seen or bool(stamps)
            if seen and STATUS_IDLE.search(frame):
                return


async def streaming(args: argparse.Namespace, count: int) -> dict[str, Any]:
    tmp = Path(tempfile.mkdtemp(prefix="many-sessions-"))
    agent = (
        f"{sys.executable} {AGENT} --stamp --rate {args.rate} --messages {args.messages} "
        f"--updates {args.updates} --tool-calls {args.tool_calls}"
    )
    server, port, token = start_server(args, tmp, agent)
    http = Http(port, token)
    sockets: list[ClientConnection] = []
    figures: dict[str, Any] = {"sessions": count}
    try:
        await server.wait_listening(port)
        await http.request("GET", "/")
        await asyncio.sleep(1)
        figures["rss_empty"] = proc_status(server.pid)["VmRSS"] / 1024
        ids, posts = await new_sessions(http, count, 8)
        figures["post_median"], figures["post_max"] = statistics.median(posts), max(posts)
        sockets = list(await asyncio.gather(*(open_socket(port, token, i) for i in ids)))
        await asyncio.gather(*(wait_ready(ws, timeout=120) for ws in sockets))
        await asyncio.sleep(2)
        figures["rss_ready"] = proc_status(server.pid)["VmRSS"] / 1024
        latencies: list[float] = []
        cpu, began, mine = cpu_seconds(server.pid), time.perf_counter(), time.process_time()
        await asyncio.gather(*(ws.send(prompt("flood")) for ws in sockets))
        await asyncio.gather(*(stream(ws, latencies, args.timeout) for ws in sockets))
        figures["cpu_percent"] = (cpu_seconds(server.pid) - cpu) / (time.perf_counter() - began) * 100
        figures["client_cpu_percent"] = (time.process_time() - mine) / (time.perf_counter() - began) * 100
        figures["seconds"] = time.perf_counter() - began
        status = proc_status(server.pid)
        figures["rss_end"], figures["hwm"] = status["VmRSS"] / 1024, status["VmHWM"] / 1024
        figures["updates_timed"] = len(latencies)
        figures["p50"], figures["p99"] = percentile(latencies, 0.5), percentile(latencies, 0.99)
        figures["max"] = max(latencies, default=0.0)
    finally:
        for ws in sockets:
            with contextlib.suppress(Exception):
                await ws.close()
        await server.stop()
    return figures


async def starts(args: argparse.Namespace) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="many-starts-"))
    server, port, token = start_server(args, tmp, None)
    http = Http(port, token)
    try:
        await server.wait_listening(port)
        began = time.perf_counter()
        _, posts = await new_sessions(http, args.starts, 8)
        made = time.perf_counter() - began
        await asyncio.sleep(5)  # the last agents start and their workspaces are watched
        held = inotify_instances(server.pid)
        log = server.log.read_text(errors="replace")
        failures = log.count("Too many open files") + len(re.findall(r"watching .* failed", log))
        print(
            f"{args.starts} sessions (demo agent, 8 requests at a time) made in {made:.1f} s: POST /sessions median "
            f"{statistics.median(posts) * 1000:.0f} ms, p90 {percentile(posts, 0.9) * 1000:.0f} ms, "
            f"max {max(posts) * 1000:.0f} ms; then {held} inotify instance(s), {failures} watch failure(s) logged, "
            f"server RSS {proc_status(server.pid)['VmRSS'] / 1024:.0f} MiB"
        )
    finally:
        await server.stop()


async def main_async(args: argparse.Namespace) -> None:
    if args.starts:
        await starts(args)
        return
    print(
        f"flood agent per session: {args.rate:g} notifications/s, {args.messages} chunks + {args.updates} "
        f"tool-call updates a turn; load average {os.getloadavg()[0]:.1f}"
    )
    for count in args.sessions:
        f = await streaming(args, count)
        per_session = (f["rss_ready"] - f["rss_empty"]) / count * 1024
        print(
            f"N={count:3}: update latency p50 {f['p50']:6.1f} ms  p99 {f['p99']:6.1f} ms  max {f['max']:6.1f} ms "
            f"({f['updates_timed']} timed), server CPU {f['cpu_percent']:5.1f} % over {f['seconds']:.1f} s "
            f"(this client's {f['client_cpu_percent']:.0f} %); "
            f"RSS {f['rss_empty']:.0f} MiB empty, {f['rss_ready']:.0f} ready ({per_session:.0f} KiB a session), "
            f"{f['rss_end']:.0f} after (peak {f['hwm']:.0f}); POST /sessions median {f['post_median'] * 1000:.0f} ms, "
            f"max {f['post_max'] * 1000:.0f} ms",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, nargs="+", default=[1, 20, 50, 100], help="N, one server each")
    parser.add_argument("--rate", type=float, default=50, help="notifications/s per session (default %(default)s)")
    parser.add_argument("--messages", type=int, default=250, help="message chunks a turn (default %(default)s)")
    parser.add_argument("--updates", type=int, default=250, help="tool-call updates a turn (default %(default)s)")
    parser.add_argument("--tool-calls", type=int, default=10, help="tool calls a turn (default %(default)s)")
    parser.add_argument("--timeout", type=float, default=300, help="longest wait for a turn (default %(default)s)")
    parser.add_argument("--starts", type=int, default=0, help="instead: make this many demo sessions, timed")
    parser.add_argument("--profile", metavar="FILE", help="run the (last) server under cProfile, into FILE")
    parser.add_argument("--server-root", help="the checkout whose server is started (default: this one)")
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
