"""AAP flood bench: a remote (AAP) server that floods a turn, or says nothing, holds up neither the index nor Stop.

Run by hand: ``.venv/bin/python bench/aap_flood.py [--gets N] [--settle S] [--cases endless silent] [--profile F]``.

The misbehaving AAP server of the tests (``tests/agents/aap_misbehaving.py``, started by ``tests/support/
aap_servers.py``) runs in its own process; the web client (``python -m webclient``) runs as a subprocess offering it
(``agents.toml``: ``[agents.rough] url = ...``) beside the built-in demo agent, its store in a throw-away folder. For
each case the bench opens a new session of ``rough`` over HTTP and its page's socket (read to the end, as a browser
does), and sends the prompt ``endless`` (``text_delta``s of 4 KiB, as fast as the server can write them, forever) or
``silent`` (``turn_start``, then nothing, the connection held open). Once the turn runs (and ``--settle`` seconds
on), it times ``--gets`` requests of ``GET /`` one after another, 0.1 s apart (median and max), and one turn of the
demo agent in another session (the prompt ``help`` sent to the page showing the turn idle again); then it sends
Stop (``{"action": "cancel"}``, as the button does) and times until a frame says ``data-turn-state="idle"``. A first
row, ``no turn``, times the same ``GET /`` and demo turn before any rough turn runs.

The turn bound is lifted (``WEBCLIENT_AAP_TURN_MB``, ``--turn-mb``) so that ``endless`` really never ends on its own
(at the default 64 MiB it ends within seconds); what the web server read meanwhile (``rchar`` of its process, from
/proc) and the bytes its page socket carried say how hard it was flooded. Everything listens on
127.0.0.1; both servers are stopped at the end, also on a failure or after ``--timeout``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
from flood import (  # bench/ is the script's folder, hence on sys.path
    AGENT_STATE,
    AUTHORIZATION,
    NONCE,
    ROOT,
    TOKEN,
    TURN_STATE,
    Server,
    free_port,
    machine_busy,
)
from websockets.asyncio.client import ClientConnection, connect

sys.path.insert(0, str(ROOT))

from tests.support.aap_servers import aap_server  # noqa: E402
from tests.support.servers import AGENTS  # noqa: E402


class Page:
    """A session's page socket, read to the end by a task of its own: bytes counted, the turn's states noted."""

    def __init__(self, socket: ClientConnection) -> None:
        self.socket = socket
        self.bytes = 0
        self.turn_states: list[bytes] = []
        self.changed = asyncio.Event()
        self.task = asyncio.create_task(self._read())

    async def _read(self) -> None:
        with contextlib.suppress(Exception):  # the socket closing at the end
            async for frame in self.socket:
                data = frame if isinstance(frame, bytes) else frame.encode()
                self.bytes += len(data)
                self.turn_states += TURN_STATE.findall(data)
                self.changed.set()

    async def until_turn(self, state: bytes, since: int, seconds: float = 30) -> int:
        """Wait for a frame saying the turn is ``state``, after the ``since``th state seen; returns its index + 1."""
        async with asyncio.timeout(seconds):
            while state not in self.turn_states[since:]:
                self.changed.clear()
                await self.changed.wait()
        return self.turn_states.index(state, since) + 1

    async def send(self, action: dict[str, str]) -> None:
        await self.socket.send(json.dumps(action))


@contextlib.asynccontextmanager
async def open_page(http: httpx.AsyncClient, agent: str) -> AsyncIterator[tuple[Page, str]]:
    """A new session of ``agent``, its page once the agent is ready, and the page's prompt nonce."""
    response = await http.post("/sessions", data={"agent": agent})
    if response.status_code != 303:
        raise RuntimeError(f"POST /sessions answered {response.status_code}: {response.text[:300]}")
    url = str(http.base_url).rstrip("/").replace("http", "ws", 1) + response.headers["location"] + "/ws"
    async with connect(url, additional_headers=AUTHORIZATION, max_size=None) as socket:
        frame = str(await socket.recv())
        nonce = NONCE.search(frame.encode())
        assert nonce is not None, frame[:300]
        async with asyncio.timeout(30):
            while (state := AGENT_STATE.search(frame.encode())) is None or state.group(1) != b"ready":
                frame = str(await socket.recv())
        page = Page(socket)
        try:
            yield page, nonce.group(1).decode()
        finally:
            page.task.cancel()


async def index_latencies(http: httpx.AsyncClient, count: int) -> list[float]:
    """Seconds each of ``count`` ``GET /`` took, one after another, 0.1 s apart (a blocked event loop shows here)."""
    latencies = []
    for _ in range(count):
        began = time.perf_counter()
        response = await http.get("/")
        latencies.append(time.perf_counter() - began)
        assert response.status_code == 200, response.status_code
        await asyncio.sleep(0.1)
    return latencies


async def demo_turn(http: httpx.AsyncClient) -> float:
    """Seconds of one turn of the demo agent in a session of its own (``help``, sent to idle again)."""
    async with open_page(http, "demo") as (page, nonce):
        since = len(page.turn_states)
        began = time.perf_counter()
        await page.send({"action": "prompt", "prompt": "help", "nonce": f"{nonce}-help"})
        await page.until_turn(b"idle", await page.until_turn(b"running", since))
        return time.perf_counter() - began


def read_mib(pid: int) -> float:
    """All a process has read so far (``rchar``: sockets and files alike), from /proc: what the web server took in."""
    for line in Path(f"/proc/{pid}/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1]) / 2**20
    raise RuntimeError(f"no rchar in /proc/{pid}/io")


async def case(http: httpx.AsyncClient, word: str, server_pid: int, args: argparse.Namespace) -> dict[str, float]:
    """One rough turn (``word``): ``GET /`` and a demo turn while it runs, then Stop until the page is idle."""
    async with open_page(http, "rough") as (page, nonce):
        await page.send({"action": "prompt", "prompt": word, "nonce": f"{nonce}-{word}"})
        running = await page.until_turn(b"running", len(page.turn_states))
        await asyncio.sleep(args.settle)
        flooded_from, read_from, timed_from = page.bytes, read_mib(server_pid), time.perf_counter()
        latencies = await index_latencies(http, args.gets)
        other = await demo_turn(http)
        if b"idle" in page.turn_states[running:]:
            raise RuntimeError(f"the {word} turn ended on its own: nothing to stop")
        flooded, read = page.bytes - flooded_from, read_mib(server_pid) - read_from
        timed = time.perf_counter() - timed_from
        since = len(page.turn_states)
        await page.send({"action": "cancel"})
        began = time.perf_counter()
        await page.until_turn(b"idle", since, 10)
        stop = time.perf_counter() - began
    return {
        "median": statistics.median(latencies),
        "max": max(latencies),
        "demo": other,
        "stop": stop,
        "page_mib": flooded / 2**20,
        "read_mib": read,
        "seconds": timed,
    }


async def main_async(args: argparse.Namespace) -> None:
    busy = await machine_busy()
    print(
        f"machine busy before the bench: {busy:.0%} of {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}"
        + ("  -- other work is running: figures will be high and noisy" if busy > 0.2 else ""),
        flush=True,
    )
    with tempfile.TemporaryDirectory(prefix="aap-flood-bench-") as name:
        tmp = Path(name)
        with aap_server([sys.executable, str(AGENTS / "aap_misbehaving.py")]) as url:
            workspace = tmp / "project"
            workspace.mkdir()
            config = tmp / "agents.toml"
            config.write_text(f'[agents.rough]\nurl = "{url}"\nworkspace = "{workspace}"\n')  # the demo is built in
            env = {
                **os.environ,
                "WEBCLIENT_TOKEN": TOKEN,
                "WEBCLIENT_DATA_DIR": str(tmp / "data"),
                "WEBCLIENT_CONFIG": str(config),
                "WEBCLIENT_DEMO_REMOTE": "off",
                "WEBCLIENT_AAP_TURN_MB": f"{args.turn_mb:g}",
            }
            env.pop("WEBCLIENT_AGENT", None)
            port = free_port()
            profile = ["-m", "cProfile", "-o", args.profile] if args.profile else []
            argv = [sys.executable, *profile, "-m", "webclient", "--port", str(port)]
            server = Server(argv, env, tmp / "server.log", signal.SIGINT if profile else signal.SIGTERM)
            try:
                await server.wait_listening(port)
                async with httpx.AsyncClient(
                    base_url=f"http://127.0.0.1:{port}", headers=AUTHORIZATION, timeout=60
                ) as http:
                    idle = await index_latencies(http, args.gets)
                    alone = {"median": statistics.median(idle), "max": max(idle), "demo": await demo_turn(http)}
                    rows = [("no turn", alone)]
                    for word in args.cases:
                        rows.append((word, await case(http, word, server.pid, args)))
                        print(f"{word}: done", flush=True)
            except BaseException:
                print(f"server log (last lines):\n{server.tail()}", file=sys.stderr)
                raise
            finally:
                await server.stop()
    print(
        f"\n{args.gets} GET / per row, 0.1 s apart, {args.settle:g} s into the turn; load average now "
        f"{os.getloadavg()[0]:.1f}\n"
    )
    print(
        "| rough turn | GET / median | GET / max | demo turn | Stop to idle "
        "| server read, while timed | page socket, while timed |"
    )
    print("|---|---|---|---|---|---|---|")
    for word, figures in rows:
        cells = [f"{figures['median'] * 1000:.0f} ms", f"{figures['max'] * 1000:.0f} ms"]
        cells.append(f"{figures['demo'] * 1000:.0f} ms")
        if "stop" in figures:
            cells += [
                f"{figures['stop'] * 1000:.0f} ms",
                f"{figures['read_mib']:.1f} MiB in {figures['seconds']:.1f} s",
                f"{figures['page_mib']:.1f} MiB",
            ]
        else:
            cells += ["", "", ""]
        print(f"| {word} | " + " | ".join(cells) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gets", type=int, default=20, help="GET / timed per row (default %(default)s)")
    parser.add_argument("--settle", type=float, default=1.0, help="seconds into the turn before timing")
    parser.add_argument("--cases", nargs="+", choices=("endless", "silent"), default=["endless", "silent"])
    parser.add_argument(
        "--turn-mb", type=float, default=1_000_000, help="WEBCLIENT_AAP_TURN_MB (default: so high `endless` never ends)"
    )
    parser.add_argument("--timeout", type=float, default=300, help="limit on the whole bench, seconds")
    parser.add_argument("--profile", metavar="FILE", help="run the real server under cProfile, into FILE")
    args = parser.parse_args()

    async def bounded() -> None:
        async with asyncio.timeout(args.timeout):
            await main_async(args)

    try:
        asyncio.run(bounded())
    except TimeoutError:
        sys.exit(f"aap flood bench: over the {args.timeout:.0f} s limit, stopped")


if __name__ == "__main__":
    main()
