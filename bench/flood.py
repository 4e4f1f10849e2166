"""Flood bench: how fast the web client relays a torrent of agent updates to a browser, and at what cost.

Run by hand: ``.venv/bin/python bench/flood.py [--messages N] [--updates N] [--runs N]`` (see ``--help``).

Each run measures two servers, both started as subprocesses on 127.0.0.1 and fed by the same flood
agent (``bench/flood_agent.py``: 100,000 ``agent_message_chunk`` and 10,000 ``tool_call_update``
notifications by default, interleaved, seeded):

* **server**: the real web client (``python -m webclient --port P`` with ``WEBCLIENT_AGENT`` set to the flood
  agent). The bench creates a session over HTTP, opens the page's web socket, takes the prompt nonce from
  the first frame, waits for ``data-turn-state="idle"``, sends the prompt and reads frames until the
  ``#session-status`` fragment says ``idle`` again.
* **relay**: ``bench/relay.py``, a bare web socket ↔ stdio pipe (one agent line = one web socket message);
  the bench speaks ACP itself through it and reads until the prompt's response arrives.

Figures: notifications per second (all notifications / time from sending the prompt to seeing the turn's
end on the socket), web socket payload bytes received per byte of agent text (payload = message bodies
after decompression; wire bytes, compressed and framed, are shown too), the server process's own peak
memory (``VmHWM``; the agent is a separate child process and is not counted) and its CPU time.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import http.client
import json
import os
import re
import secrets
import shlex
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

HERE = Path(__file__).resolve().parent
TOKEN = secrets.token_urlsafe(16)
AUTHORIZATION = {"Authorization": f"token {TOKEN}"}
"""How the bench signs in to the server it starts (scripts send the token in a header)."""
ROOT = HERE.parent
AGENT = HERE / "flood_agent.py"
RELAY = HERE / "relay.py"

NONCE = re.compile(rb'id="prompt-nonce" value="([^"]+)"')
STATUS = re.compile(rb'<header id="session-status"[^>]*>')
TURN_STATE = re.compile(rb'data-turn-state="([^"]*)"')
AGENT_STATE = re.compile(rb'data-agent-state="([^"]*)"')
CLK_TCK = os.sysconf("SC_CLK_TCK")


class CountingConnection(ClientConnection):
    """A client connection that counts the bytes it reads from the TCP socket (the wire)."""

    wire_bytes = 0

    def data_received(self, data: bytes) -> None:
        self.wire_bytes += len(data)
        super().data_received(data)


@dataclass
class Result:
    name: str
    notifications: int = 0
    text_bytes: int = 0
    seconds: float = 0.0
    frames: int = 0
    payload_bytes: int = 0
    wire_bytes: int = 0
    trailing_bytes: int = 0
    max_gap: float = 0.0
    probe_max: float = 0.0
    """The slowest answer to ``GET /`` (every 0.1 s on a second connection) during the turn: a blocked loop."""
    """The longest time without a web socket message during the turn (how stale the page gets)."""
    extensions: str = ""
    rss_before_kib: int = 0
    hwm_kib: int = 0
    cpu_seconds: float = 0.0
    agent_hwm_kib: int = 0
    agent: dict[str, Any] = field(default_factory=dict)
    parts: dict[str, int] = field(default_factory=dict)
    """The real server's payload bytes by kind of fragment (see `breakdown`)."""

    @property
    def rate(self) -> float:
        return self.notifications / self.seconds if self.seconds else 0.0

    @property
    def bytes_per_text_byte(self) -> float:
        return self.payload_bytes / self.text_bytes if self.text_bytes else 0.0

    @property
    def wire_per_text_byte(self) -> float:
        return self.wire_bytes / self.text_bytes if self.text_bytes else 0.0


# -- processes -------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def proc_status(pid: int) -> dict[str, int]:
    """VmRSS/VmHWM (KiB) of one process, or {} once it is gone."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return {}
    pairs = (line.split(":", 1) for line in text.splitlines())
    return {k: int(v.split()[0]) for k, v in pairs if k in ("VmRSS", "VmHWM")}


def cpu_seconds(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime, stime


def children(pid: int) -> list[int]:
    found: list[int] = []
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError):
                found += [int(c) for c in Path(f"/proc/{pid}/task/{task}/children").read_text().split()]
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


class Server:
    """A server subprocess in its own process group, with its output in a log file; always stopped."""

    def __init__(
        self, argv: list[str], env: dict[str, str], log: Path, stop_signal: int = signal.SIGTERM, cwd: Path = ROOT
    ) -> None:
        self.log = log
        self.stop_signal = stop_signal
        self.agents: set[int] = set()
        with log.open("wb") as out:
            self.process = subprocess.Popen(
                argv,
                cwd=cwd,
                env={"WEBCLIENT_DRAIN_SECONDS": "0", **env},  # a stop stops at once, whatever still runs
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )

    @property
    def pid(self) -> int:
        return self.process.pid

    def note_agents(self) -> list[int]:
        """The server's child processes (the agents; each in a process group of its own)."""
        kids = [pid for pid in children(self.pid) if alive(pid)]
        self.agents.update(kids)
        return kids

    async def wait_listening(self, port: int, timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"server exited with {self.process.returncode}:\n{self.tail()}")
            with contextlib.suppress(OSError):
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                return
            await asyncio.sleep(0.05)
        raise TimeoutError(f"server not listening on port {port} after {timeout}s:\n{self.tail()}")

    def tail(self, lines: int = 30) -> str:
        with contextlib.suppress(OSError):
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        return ""

    async def stop(self) -> None:
        """SIGTERM (a graceful uvicorn shutdown stops the agents), then SIGKILL the group and any agent left.

        Under cProfile the signal is SIGINT: uvicorn re-raises the signal it caught once it has shut down,
        and only SIGINT (as KeyboardInterrupt) lets cProfile write its file.
        """
        self.note_agents()
        if self.process.poll() is None:
            self.process.send_signal(self.stop_signal)
            deadline = time.monotonic() + 10
            while self.process.poll() is None and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)
        self.process.wait()
        for agent in self.agents:  # started with start_new_session: its own group, led by itself
            if alive(agent):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(agent, signal.SIGKILL)


def agent_command(args: argparse.Namespace, report: Path) -> str:
    return shlex.join(
        [
            sys.executable,
            str(AGENT),
            "--messages",
            str(args.messages),
            "--updates",
            str(args.updates),
            "--tool-calls",
            str(args.tool_calls),
            "--seed",
            str(args.seed),
            "--rate",
            str(args.rate),
            "--report",
            str(report),
        ]
    )


async def read_report(report: Path, timeout: float = 5.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError, ValueError):
            data: dict[str, Any] = json.loads(report.read_text())
            return data
        await asyncio.sleep(0.02)
    raise TimeoutError(f"the flood agent wrote no report to {report}")


def ws_options(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "max_size": None,
        "compression": None if args.no_deflate else "deflate",
        "create_connection": CountingConnection,
        "open_timeout": 20,
        "ping_interval": None,
        "additional_headers": AUTHORIZATION,
    }


async def drain(ws: ClientConnection, quiet: float) -> int:
    """Bytes of whatever still arrives until ``quiet`` seconds pass without a message."""
    total = 0
    with contextlib.suppress(TimeoutError):
        while True:
            message = await asyncio.wait_for(ws.recv(decode=False), quiet)
            total += len(message)
    return total


PARTS = {
    "tool-call cards": re.compile(rb'<article id="entry-\d+" class="entry tool-call.*?</article>', re.S),
    "whole messages": re.compile(rb'<article id="entry-\d+" class="entry (?:message|thought).*?</article>', re.S),
    "message edits": re.compile(rb"\x1e\d+\x1f[^\x1e]*"),
    "card records": re.compile(rb"\x1e[tsi]\d+\x1f[^\x1e]*"),
    "status": re.compile(rb'<header id="session-status".*?</header>', re.S),
}


def breakdown(frames: list[bytes]) -> dict[str, int]:
    """Payload bytes of the real server's frames by fragment kind; what no pattern matches is "other"."""
    sizes = dict.fromkeys([*PARTS, "other"], 0)
    for frame in frames:
        for name, pattern in PARTS.items():
            sizes[name] += sum(m.end() - m.start() for m in pattern.finditer(frame))
    sizes["other"] = sum(len(f) for f in frames) - sum(sizes.values())
    return sizes


# -- the real server ---------------------------------------------------------------------------------


class Probe:
    """``GET /`` on a fresh connection every 0.1 s while the turn runs: how long the server keeps others waiting."""

    def __init__(self, port: int, every: float | None = 0.1) -> None:
        self.port = port
        self.every = every
        self.latencies: list[float] = []
        self.stopping = asyncio.Event()
        self.task = asyncio.create_task(self._run() if every is not None else self.stopping.wait())

    async def _run(self) -> None:
        request = (
            f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\nAuthorization: {AUTHORIZATION['Authorization']}\r\n"
            "Connection: close\r\n\r\n"
        ).encode()
        while not self.stopping.is_set():
            started = time.perf_counter()
            reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
            writer.write(request)
            await reader.read()  # to EOF
            writer.close()
            self.latencies.append(time.perf_counter() - started)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.stopping.wait(), self.every)

    async def stop(self) -> float:
        """The worst latency seen; a request under way is waited for (it may be the one the turn's end held up)."""
        self.stopping.set()
        try:
            await asyncio.wait_for(self.task, 10)
        except TimeoutError:
            return 10.0
        return max(self.latencies, default=0.0)


def session_status(frame: bytes) -> tuple[bytes, bytes] | None:
    """(turn state, agent state) from a frame's ``#session-status`` header, if it has one."""
    header = STATUS.search(frame)
    if header is None:
        return None
    turn, agent = TURN_STATE.search(header.group(0)), AGENT_STATE.search(header.group(0))
    return (turn.group(1) if turn else b"", agent.group(1) if agent else b"")


def create_session(port: int) -> str:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    try:
        conn.request("POST", "/sessions", body=b"", headers={"Content-Length": "0", **AUTHORIZATION})
        response = conn.getresponse()
        response.read()
        location = response.getheader("Location") or ""
    finally:
        conn.close()
    if response.status != 303 or "/sessions/" not in location:
        raise RuntimeError(f"POST /sessions answered {response.status} {location!r}")
    return location.rsplit("/", 1)[1]


async def bench_server(args: argparse.Namespace, tmp: Path, run: int) -> Result:
    port = free_port()
    report = tmp / f"server-{run}.json"
    workspace = tmp / "workspace"
    workspace.mkdir(exist_ok=True)
    env = {
        **os.environ,
        "WEBCLIENT_AGENT": agent_command(args, report),
        "WEBCLIENT_WORKSPACE": str(workspace),  # apart from the data folder, as the server demands
        "WEBCLIENT_TOKEN": TOKEN,
        "WEBCLIENT_DATA_DIR": str(tmp / f"data-{run}"),  # a fresh SQLite store per run (its size is reported)
        "WEBCLIENT_STORE": "off" if args.no_store else "on",
    }
    env.pop("WEBCLIENT_RELOAD", None)
    if args.server_root:  # another checkout's webclient/ (and templates/, static/) ahead of the installed one
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(args.server_root), env.get("PYTHONPATH")]))
    # Profiled: the turn alone (`profiled_server.py` starts cProfile at SIGUSR1 and writes it at SIGUSR2).
    webclient = [str(HERE / "profiled_server.py"), f"{args.profile}.{run}"] if args.profile else ["-m", "webclient"]
    argv = [sys.executable, *webclient, "--host", "127.0.0.1", "--port", str(port)]
    server = Server(argv, env, tmp / f"server-{run}.log", cwd=args.server_root or ROOT)
    result = Result("server")
    try:
        await server.wait_listening(port)
        session_id = await asyncio.to_thread(create_session, port)
        url = f"ws://127.0.0.1:{port}/sessions/{session_id}/ws"
        async with connect(url, **ws_options(args)) as ws:
            assert isinstance(ws, CountingConnection)
            result.extensions = ws.response.headers.get("Sec-WebSocket-Extensions", "") if ws.response else ""
            nonce: bytes | None = None
            state = (b"", b"")
            async with asyncio.timeout(60):  # the agent starts, builds its flood, answers
                while nonce is None or state != (b"idle", b"ready"):
                    frame = await ws.recv(decode=False)
                    if nonce is None and (m := NONCE.search(frame)):
                        nonce = m.group(1)
                    if (status := session_status(frame)) is not None:
                        state = status
                        if state[1] in (b"failed", b"exited"):
                            raise RuntimeError(f"the agent did not start: {frame[:2000]!r}\n{server.tail()}")
            await asyncio.sleep(0.2)  # let the agent process settle before the clock starts
            server.note_agents()
            result.rss_before_kib = proc_status(server.pid).get("VmRSS", 0)
            cpu_before = cpu_seconds(server.pid)
            if args.profile:
                server.process.send_signal(signal.SIGUSR1)
            wire_before = ws.wire_bytes
            prompt = {"action": "prompt", "prompt": "Flood me.", "nonce": nonce.decode()}
            saved: list[bytes] = []
            times: list[float] = []
            probe = Probe(port, None if args.no_probe else 0.1)
            started = last = time.perf_counter()
            await ws.send(json.dumps(prompt))
            seen_running = False
            while True:
                frame = await ws.recv(decode=False)
                now = time.perf_counter()
                result.max_gap, last = max(result.max_gap, now - last), now
                result.frames += 1
                result.payload_bytes += len(frame)
                saved.append(frame)
                times.append(now - started)
                if (status := session_status(frame)) is not None:
                    turn = status[0]
                    if turn != b"idle":
                        seen_running = True
                    elif seen_running:
                        break
                    if turn == b"ended":
                        raise RuntimeError(f"the session ended during the turn:\n{server.tail()}")
            result.seconds = time.perf_counter() - started
            result.cpu_seconds = cpu_seconds(server.pid) - cpu_before
            if args.profile:
                server.process.send_signal(signal.SIGUSR2)
            result.probe_max = await probe.stop()
            result.wire_bytes = ws.wire_bytes - wire_before
            result.trailing_bytes = await drain(ws, args.quiet)
        result.parts = breakdown(saved)
        if args.save_frames:  # one JSON array a line: [seconds since the prompt, frame], in order
            lines = (json.dumps([round(t, 4), f.decode()]) + "\n" for t, f in zip(times, saved))
            Path(f"{args.save_frames}.{run}").write_text("".join(lines))
        result.hwm_kib = proc_status(server.pid).get("VmHWM", 0)
        result.agent_hwm_kib = max((proc_status(pid).get("VmHWM", 0) for pid in server.agents), default=0)
        result.agent = await read_report(report)
    except BaseException:
        print(f"--- server log ({server.log}) ---\n{server.tail()}", file=sys.stderr)
        raise
    finally:
        await server.stop()
    result.notifications = result.agent["notifications"]
    result.text_bytes = result.agent["text_bytes"]
    if not args.no_store:  # the server stopped, so the store holds the whole journal
        stored = sum(f.stat().st_size for f in (tmp / f"data-{run}").glob("*"))
        print(f"run {run} store: {stored:,} bytes, {stored * 1000 // result.notifications:,} per 1,000 notifications")
    return result


# -- the bare relay -----------------------------------------------------------------------------------


async def rpc(ws: ClientConnection, request_id: int, method: str, params: dict[str, Any]) -> Any:
    await ws.send(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}))
    while True:
        message = json.loads(await ws.recv(decode=False))
        if message.get("id") == request_id and "method" not in message:
            if "error" in message:
                raise RuntimeError(f"{method} failed: {message['error']}")
            return message.get("result")


async def bench_relay(args: argparse.Namespace, tmp: Path, run: int) -> Result:
    port = free_port()
    report = tmp / f"relay-{run}.json"
    argv = [sys.executable, str(RELAY), "--host", "127.0.0.1", "--port", str(port)]
    argv += ["--agent", agent_command(args, report)]
    server = Server(argv, dict(os.environ), tmp / f"relay-{run}.log")
    result = Result("relay")
    response_start = b'{"jsonrpc":"2.0","id":'
    try:
        await server.wait_listening(port)
        async with connect(f"ws://127.0.0.1:{port}/ws", **ws_options(args)) as ws:
            assert isinstance(ws, CountingConnection)
            result.extensions = ws.response.headers.get("Sec-WebSocket-Extensions", "") if ws.response else ""
            await rpc(ws, 1, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})
            acp_session = (await rpc(ws, 2, "session/new", {"cwd": str(tmp), "mcpServers": []}))["sessionId"]
            await asyncio.sleep(0.2)
            server.note_agents()
            result.rss_before_kib = proc_status(server.pid).get("VmRSS", 0)
            cpu_before = cpu_seconds(server.pid)
            wire_before = ws.wire_bytes
            prompt = {"sessionId": acp_session, "prompt": [{"type": "text", "text": "Flood me."}]}
            probe = Probe(port, None if args.no_probe else 0.1)
            started = last = time.perf_counter()
            await ws.send(json.dumps({"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": prompt}))
            while True:
                message = await ws.recv(decode=False)
                now = time.perf_counter()
                result.max_gap, last = max(result.max_gap, now - last), now
                result.frames += 1
                result.payload_bytes += len(message)
                if message.startswith(response_start) and json.loads(message).get("id") == 3:
                    break
            result.seconds = time.perf_counter() - started
            result.cpu_seconds = cpu_seconds(server.pid) - cpu_before
            result.probe_max = await probe.stop()
            result.wire_bytes = ws.wire_bytes - wire_before
            result.trailing_bytes = await drain(ws, args.quiet)
        result.hwm_kib = proc_status(server.pid).get("VmHWM", 0)
        result.agent_hwm_kib = max((proc_status(pid).get("VmHWM", 0) for pid in server.agents), default=0)
        result.agent = await read_report(report)
    except BaseException:
        print(f"--- relay log ({server.log}) ---\n{server.tail()}", file=sys.stderr)
        raise
    finally:
        await server.stop()
    result.notifications = result.agent["notifications"]
    result.text_bytes = result.agent["text_bytes"]
    if not args.no_store:  # the server stopped, so the store holds the whole journal
        stored = sum(f.stat().st_size for f in (tmp / f"data-{run}").glob("*"))
        print(f"run {run} store: {stored:,} bytes, {stored * 1000 // result.notifications:,} per 1,000 notifications")
    return result


# -- report ---------------------------------------------------------------------------------------------


def mib(kib: float) -> str:
    return f"{kib / 1024:,.1f} MiB"


ROWS: list[tuple[str, Any, str]] = [
    # label, value(result), ratio: "hi" (server/relay, higher is better), "lo" (lower is better), "" (none)
    ("notifications / s", lambda r: f"{r.rate:,.0f}", "rate"),
    ("turn time", lambda r: f"{r.seconds:.2f} s", ""),
    ("notif. / server CPU s", lambda r: f"{r.notifications / r.cpu_seconds:,.0f}" if r.cpu_seconds else "-", ""),
    ("web socket messages", lambda r: f"{r.frames:,}", ""),
    ("longest silence", lambda r: f"{r.max_gap * 1000:,.0f} ms", ""),
    ("slowest GET / in turn", lambda r: f"{r.probe_max * 1000:,.0f} ms", ""),
    ("payload bytes", lambda r: f"{r.payload_bytes:,}", ""),
    ("payload B / text B", lambda r: f"{r.bytes_per_text_byte:.2f}", "bytes"),
    ("wire bytes", lambda r: f"{r.wire_bytes:,}", ""),
    ("wire B / text B", lambda r: f"{r.wire_per_text_byte:.2f}", ""),
    ("server CPU in turn", lambda r: f"{r.cpu_seconds:.2f} s", ""),
    ("RSS before prompt", lambda r: mib(r.rss_before_kib), ""),
    ("peak RSS (VmHWM)", lambda r: mib(r.hwm_kib), "mem"),
    ("agent peak RSS", lambda r: mib(r.agent_hwm_kib), ""),
]


def table(server: Result, relay: Result, title: str) -> str:
    lines = [title, f"{'':22} {'server':>16} {'relay':>16}   server vs relay"]
    for label, value, ratio in ROWS:
        note = ""
        if ratio == "rate":
            x = server.rate / relay.rate if relay.rate else 0
            note = f"{x:.3f} x relay  (aim >= 0.5: {'ok' if x >= 0.5 else 'MISSED'})"
        elif ratio == "bytes":
            note = (
                f"{server.bytes_per_text_byte / relay.bytes_per_text_byte:.2f} x relay  (aim <= 1.5 B/B: "
                f"{'ok' if server.bytes_per_text_byte <= 1.5 else 'MISSED'})"
            )
        elif ratio == "mem":
            note = f"{server.hwm_kib / relay.hwm_kib:.2f} x relay" if relay.hwm_kib else ""
        lines.append(f"{label:22} {value(server):>16} {value(relay):>16}   {note}")
    return "\n".join(lines)


def median_result(results: list[Result]) -> Result:
    """Per-figure medians (each figure on its own, so the row need not come from one run)."""
    m = Result(results[0].name, notifications=results[0].notifications, text_bytes=results[0].text_bytes)
    for name in ("frames", "payload_bytes", "wire_bytes", "rss_before_kib", "hwm_kib", "agent_hwm_kib"):
        setattr(m, name, int(statistics.median(getattr(r, name) for r in results)))
    m.seconds = statistics.median(r.seconds for r in results)
    m.cpu_seconds = statistics.median(r.cpu_seconds for r in results)
    m.max_gap = statistics.median(r.max_gap for r in results)
    m.probe_max = statistics.median(r.probe_max for r in results)
    return m


async def machine_busy(seconds: float = 1.0) -> float:
    """The share of all CPUs busy over ``seconds`` (from /proc/stat), to warn of a machine doing other work."""

    def sample() -> tuple[int, int]:
        fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        idle = fields[3] + fields[4]  # idle, iowait
        return sum(fields) - idle, sum(fields)

    busy1, total1 = sample()
    await asyncio.sleep(seconds)
    busy2, total2 = sample()
    return (busy2 - busy1) / max(1, total2 - total1)


async def main_async(args: argparse.Namespace) -> None:
    servers: list[Result] = []
    relays: list[Result] = []
    busy = await machine_busy()
    print(
        f"machine busy before the bench: {busy:.0%} of {os.cpu_count()} CPUs"
        + ("  -- other work is running: figures will be low and noisy" if busy > 0.2 else ""),
        flush=True,
    )
    with tempfile.TemporaryDirectory(prefix="flood-bench-") as name:
        tmp = Path(name)
        for run in range(1, args.runs + 1):
            order = (bench_server, bench_relay) if run % 2 else (bench_relay, bench_server)
            for bench in order:
                if args.only and bench.__name__ != f"bench_{args.only}":
                    continue
                result = await bench(args, tmp, run)
                (servers if result.name == "server" else relays).append(result)
                print(
                    f"run {run} {result.name:6}: {result.rate:9,.0f} notifications/s  {result.seconds:6.2f} s  "
                    f"{result.bytes_per_text_byte:5.2f} payload B/text B  "
                    f"{result.wire_per_text_byte:5.2f} wire B/text B  peak {mib(result.hwm_kib)}  "
                    f"cpu {result.cpu_seconds:.2f} s  {result.frames:,} messages  "
                    f"longest silence {result.max_gap * 1000:,.0f} ms  "
                    f"slowest GET {result.probe_max * 1000:,.0f} ms  (+{result.trailing_bytes:,} B after the end)",
                    flush=True,
                )
    first = (servers or relays)[0]
    print(
        f"\nflood: {first.agent['messages']:,} agent_message_chunk + {first.agent['tool_calls']} tool_call + "
        f"{first.agent['tool_call_updates']:,} tool_call_update = {first.notifications:,} notifications, "
        f"{first.text_bytes:,} text bytes, {first.agent['stdout_bytes']:,} bytes of JSON lines"
    )
    print(f"permessage-deflate: {first.extensions or 'not negotiated'}")
    if servers:
        last = servers[-1]
        print("\nreal server's payload by fragment kind (last run), bytes per agent text byte:")
        for name, size in last.parts.items():
            print(f"  {name:18} {size / last.text_bytes:6.2f}  ({size:,} B)")
    if servers and relays and len(servers) == len(relays) > 1:
        ratios = [s.rate / r.rate for s, r in zip(servers, relays)]
        print(
            f"\nrate ratio server/relay per run: {', '.join(f'{x:.2f}' for x in ratios)}  "
            f"(median {statistics.median(ratios):.2f}; runs alternate which server goes first)"
        )
    if servers and relays:
        print()
        print(
            table(servers[-1], relays[-1], "last run")
            if args.runs == 1
            else table(median_result(servers), median_result(relays), f"median of {args.runs} runs")
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=100_000, help="agent_message_chunk notifications")
    parser.add_argument("--updates", type=int, default=10_000, help="tool_call_update notifications")
    parser.add_argument("--tool-calls", type=int, default=20, help="tool calls the updates are spread over")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rate", type=float, default=0, help="pace the agent (notifications/s; default: flat out)")
    parser.add_argument("--runs", type=int, default=1, help="runs of both servers (medians are shown)")
    parser.add_argument("--only", choices=("server", "relay"), help="measure one of the two")
    parser.add_argument("--no-deflate", action="store_true", help="do not offer permessage-deflate")
    parser.add_argument("--no-store", action="store_true", help="run the real server without its session store")
    parser.add_argument(
        "--no-probe", action="store_true", help="do not time `GET /` during the turn (its CPU is counted)"
    )
    parser.add_argument("--quiet", type=float, default=0.5, help="seconds of silence that end a run's drain")
    parser.add_argument("--save-frames", metavar="FILE", help="write the real server's frames to FILE.<run>")
    parser.add_argument(
        "--server-root",
        type=Path,
        metavar="DIR",
        help="run the real server from this checkout (e.g. `git archive REV | tar -x -C DIR`)",
    )
    parser.add_argument(
        "--profile", metavar="FILE", help="profile the server's event loop in the turn, into FILE.<run>"
    )
    parser.add_argument("--timeout", type=float, default=600, help="limit on the whole bench, seconds")
    args = parser.parse_args()
    started = time.monotonic()

    async def bounded() -> None:
        async with asyncio.timeout(args.timeout):
            await main_async(args)

    try:
        asyncio.run(bounded())
    except TimeoutError:
        sys.exit(f"flood bench: over the {args.timeout:.0f} s limit, stopped")
    print(f"\n({time.monotonic() - started:.1f} s in all)")


if __name__ == "__main__":
    main()
