"""Isolation bench: while one agent floods its session, how long does another session wait?

Run by hand: ``.venv/bin/python bench/isolation.py [--count N] [--seconds S] [--reader slow|none|fast]``.

It starts the real server (``python -m webclient``) with ``tests/agents/flood_agent.py`` as the agent, opens
two sessions, A and B, each with its page's web socket, and sends A the prompt "flood": A's agent writes
``--count`` finished ``tool_call``s as fast as the server reads them. A's socket is read slowly (one
message, then ``--pause`` seconds; ``--reader none`` never reads, ``fast`` reads everything). Meanwhile:

* B's prompt round trip: a prompt sent over B's socket until the frame carrying the agent's first output
  ("pong: ...") arrives; one after another (each after B's turn ended), p50 / p99 / max;
* ``GET /`` on a fresh connection every 0.2 s (it also tells when A's turn ended), p50 / max;
* the time to ``GET`` A's page once the flood is over (or ``--seconds`` passed),
* the payload bytes A's socket received, the server's RSS before, its peak (``VmHWM``) and its RSS after
  A's page was closed and A ended (``POST /sessions/A/end``, then 3 s; ``WEBCLIENT_MAX_ENDED_SESSIONS=0``
  in the environment makes the server forget it at once).

The flood is bounded by ``--seconds`` (the agent's progress file says how many calls it wrote by then; it
wrote all but a pipe's worth of them into the server). Every process is stopped at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from flood import ROOT, Server, free_port, proc_status
from websockets.asyncio.client import ClientConnection, connect

AGENT = ROOT / "tests" / "agents" / "flood_agent.py"
STATUS_IDLE = re.compile(rb'<header id="session-status"[^>]*data-turn-state="idle"[^>]*data-agent-state="ready"')


class Http:
    """HTTP/1.1 on a fresh connection per request, signed in with the token header."""

    def __init__(self, port: int, token: str) -> None:
        self.port = port
        self.token = token

    async def request(self, method: str, path: str) -> tuple[int, dict[str, str], bytes, float]:
        started = time.perf_counter()
        reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
        writer.write(
            f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\nAuthorization: token {self.token}\r\n"
            f"Content-Length: 0\r\nConnection: close\r\n\r\n".encode()
        )
        raw = await reader.read()
        writer.close()
        head, _, body = raw.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
        return int(lines[0].split()[1]), headers, body, time.perf_counter() - started

    async def new_session(self) -> str:
        status, headers, _, _ = await self.request("POST", "/sessions")
        if status != 303:
            raise RuntimeError(f"POST /sessions answered {status}")
        return headers["location"].rsplit("/", 1)[1]


async def open_socket(port: int, token: str, session_id: str) -> ClientConnection:
    return await connect(
        f"ws://127.0.0.1:{port}/sessions/{session_id}/ws",
        additional_headers={"Authorization": f"token {token}", "Origin": f"http://127.0.0.1:{port}"},
        max_size=None,
        compression="deflate",
        open_timeout=20,
        ping_interval=None,
    )


async def wait_ready(ws: ClientConnection, timeout: float = 30) -> None:
    async with asyncio.timeout(timeout):
        while not STATUS_IDLE.search(await ws.recv(decode=False)):
            pass


def prompt(text: str) -> str:
    return json.dumps({"action": "prompt", "prompt": text, "nonce": secrets.token_urlsafe(9)})


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] if ordered else 0.0


async def read_a(ws: ClientConnection, mode: str, pause: float, counts: dict[str, int]) -> None:
    """A's page: reads slowly (or everything, or nothing), counting payload bytes."""
    if mode == "none":
        await asyncio.Event().wait()
    with contextlib.suppress(Exception):
        while True:
            message = await ws.recv(decode=False)
            counts["bytes"] += len(message)
            counts["frames"] += 1
            if mode == "slow":
                await asyncio.sleep(pause)


async def round_trips(ws: ClientConnection, stop: asyncio.Event, times: list[float]) -> None:
    """B's prompts one after another: time from sending to the frame with the agent's answer."""
    number = 0
    while not stop.is_set():
        number += 1
        marker = f"pong: ping {number}".encode()
        started = time.perf_counter()
        await ws.send(prompt(f"ping {number}"))
        answered = False
        while True:
            frame = await ws.recv(decode=False)
            if not answered and marker in frame:
                times.append(time.perf_counter() - started)
                answered = True
            if answered and STATUS_IDLE.search(frame):
                break
        await asyncio.sleep(0.05)


async def run(args: argparse.Namespace) -> dict[str, Any]:
    port, token = free_port(), secrets.token_urlsafe(16)
    tmp = Path(tempfile.mkdtemp(prefix="isolation-"))
    report = tmp / "flood.json"
    workspace = tmp / "workspace"
    workspace.mkdir()
    agent = f"{sys.executable} {AGENT}"
    env = {
        **os.environ,
        "WEBCLIENT_AGENT": agent,
        "WEBCLIENT_WORKSPACE": str(workspace),  # apart from the data folder, as the server demands
        "WEBCLIENT_DATA_DIR": str(tmp / "data"),
        "WEBCLIENT_TOKEN": token,
        "FLOOD_COUNT": str(args.count),
        "FLOOD_REPORT": str(report),
    }
    env.pop("WEBCLIENT_RELOAD", None)
    if args.server_root:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(args.server_root), env.get("PYTHONPATH")]))
    cwd = Path(args.server_root) if args.server_root else ROOT
    argv = [sys.executable, "-m", "webclient", "--host", "127.0.0.1", "--port", str(port)]
    server = Server(argv, env, tmp / "server.log", cwd=cwd)
    http = Http(port, token)
    figures: dict[str, Any] = {"count": args.count, "reader": args.reader}
    try:
        await server.wait_listening(port)
        a_id, b_id = await http.new_session(), await http.new_session()
        a, b = await open_socket(port, token, a_id), await open_socket(port, token, b_id)
        await wait_ready(a)
        await wait_ready(b)
        await asyncio.sleep(1)
        figures["rss_before_mib"] = proc_status(server.pid).get("VmRSS", 0) / 1024
        counts = {"bytes": 0, "frames": 0}
        reader = asyncio.create_task(read_a(a, args.reader, args.pause, counts))
        stop = asyncio.Event()
        times: list[float] = []
        await a.send(prompt("flood"))
        started = time.perf_counter()
        trips = asyncio.create_task(round_trips(b, stop, times))
        gets: list[float] = []
        a_row = re.compile(rf'data-session-id="{re.escape(a_id)}">.*?state-(\w[\w-]*)'.encode(), re.S)
        seen_running, flood_seconds = False, 0.0
        while time.perf_counter() - started < args.seconds:
            _, _, body, took = await http.request("GET", "/")
            gets.append(took)
            state = a_row.search(body)
            seen_running = seen_running or (state is not None and state.group(1) == b"running")
            if seen_running and state is not None and state.group(1) == b"idle":
                flood_seconds = time.perf_counter() - started
                break
            await asyncio.sleep(0.2)
        stop.set()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(trips, 30)
        with contextlib.suppress(OSError, ValueError):
            figures["sent"] = json.loads(report.read_text())
        figures["flood_seconds"] = flood_seconds or None
        figures["a_bytes"] = counts["bytes"]
        figures["a_frames"] = counts["frames"]
        figures["b_trips"] = len(times)
        figures["b_p50_ms"] = percentile(times, 0.5) * 1000
        figures["b_p99_ms"] = percentile(times, 0.99) * 1000
        figures["b_max_ms"] = max(times, default=0) * 1000
        figures["get_p50_ms"] = statistics.median(gets) * 1000 if gets else 0
        figures["get_max_ms"] = max(gets, default=0) * 1000
        figures["peak_rss_mib"] = proc_status(server.pid).get("VmHWM", 0) / 1024
        figures["rss_flooded_mib"] = proc_status(server.pid).get("VmRSS", 0) / 1024
        _, _, _, took = await http.request("GET", f"/sessions/{a_id}")
        figures["a_page_ms"] = took * 1000
        reader.cancel()
        await a.close()  # as a page does when "End" reloads it
        _, _, _, took = await http.request("POST", f"/sessions/{a_id}/end")
        figures["end_ms"] = took * 1000
        await asyncio.sleep(3)
        figures["rss_after_end_mib"] = proc_status(server.pid).get("VmRSS", 0) / 1024
        _, _, _, took = await http.request("GET", f"/sessions/{b_id}")
        figures["b_page_ms"] = took * 1000
        await b.close()
    finally:
        await server.stop()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=1_000_000, help="tool calls A's agent sends")
    parser.add_argument("--seconds", type=float, default=60, help="stop measuring after this long")
    parser.add_argument("--reader", choices=("slow", "none", "fast"), default="slow", help="how A's page reads")
    parser.add_argument("--pause", type=float, default=0.5, help="slow reader: seconds between two messages")
    parser.add_argument("--server-root", help="run another checkout of the server (before/after figures)")
    args = parser.parse_args()
    figures = asyncio.run(run(args))
    sent = figures.get("sent", {})
    print(
        f"A's agent wrote {sent.get('sent', '?'):,} of {args.count:,} tool calls"
        f" ({'all' if sent.get('done') else 'not all'}); A's turn ended after {figures['flood_seconds'] or '-'} s"
    )
    print(
        f"B prompt round trip: {figures['b_trips']} prompts, p50 {figures['b_p50_ms']:.0f} ms,"
        f" p99 {figures['b_p99_ms']:.0f} ms, max {figures['b_max_ms']:.0f} ms"
    )
    print(f"GET /: p50 {figures['get_p50_ms']:.0f} ms, max {figures['get_max_ms']:.0f} ms")
    print(f"A's socket ({args.reader} reader): {figures['a_bytes'] / 2**20:,.1f} MiB in {figures['a_frames']} frames")
    print(
        f"server RSS: {figures['rss_before_mib']:.0f} MiB before, peak {figures['peak_rss_mib']:.0f} MiB,"
        f" {figures['rss_flooded_mib']:.0f} MiB after the flood, {figures['rss_after_end_mib']:.0f} MiB 3 s after"
        f" ending A (end took {figures['end_ms']:.0f} ms)"
    )
    print(
        f"GET A's page after the flood: {figures['a_page_ms']:.0f} ms;"
        f" B's page after A ended: {figures['b_page_ms']:.0f} ms"
    )
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
