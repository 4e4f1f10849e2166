"""Agent-memory bench: what one agent process holds once a session is open, for sizing instances.

Run by hand: ``.venv/bin/python bench/agent_memory.py [--runs 3] [-- COMMAND ...]``. Without a command it measures
the built-in demo agent. With one (``-- npx @zed-industries/codex-acp``, ``-- claude-agent-acp``), that agent. Each
run starts the agent in a fresh temporary folder, speaks ACP to it over stdio (``initialize``, then
``session/new``; a real agent without a key still opens a session or refuses it, and either way has loaded what it
runs on), waits ``--settle`` seconds and sums ``VmRSS`` over the agent and every process it started (``Rss`` counts
a page shared between them once per process, so the sum is an upper bound). It prints the median, and the peak
(``VmHWM``) summed the same way. Nothing is sent to any model.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parents[1]
DEMO = [sys.executable, "-m", "demo_agent"]


def tree(pid: int) -> list[int]:
    """``pid`` and every process below it."""
    found, frontier = [pid], [pid]
    while frontier:
        parent = frontier.pop()
        children = Path(f"/proc/{parent}/task/{parent}/children")
        try:
            kids = [int(k) for k in children.read_text().split()]
        except OSError:
            kids = []
        found += kids
        frontier += kids
    return found


def status_kib(pid: int, field: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def ask(stdin: IO[bytes], stdout: IO[bytes], number: int, method: str, params: dict[str, Any], wait: float) -> str:
    """Send a request and read lines until its answer (or ``wait`` seconds): its result, or why not."""
    stdin.write(json.dumps({"jsonrpc": "2.0", "id": number, "method": method, "params": params}).encode() + b"\n")
    stdin.flush()
    deadline = time.monotonic() + wait
    os.set_blocking(stdout.fileno(), False)
    buffer = b""
    while time.monotonic() < deadline:
        chunk = stdout.read(65536)
        if chunk:
            buffer += chunk
            for line in buffer.split(b"\n")[:-1]:
                try:
                    message = json.loads(line)
                except ValueError:
                    continue
                if message.get("id") == number:
                    return "ok" if "result" in message else f"error: {message.get('error', {}).get('message', '')}"
            buffer = buffer.rsplit(b"\n", 1)[-1]
        else:
            time.sleep(0.05)
    return "no answer"


def measure(command: list[str], settle: float) -> tuple[int, int, str]:
    """(summed VmRSS, summed VmHWM, what session/new said), in KiB."""
    with tempfile.TemporaryDirectory(prefix="agent-memory-") as folder:
        os.chmod(folder, 0o777)  # an agent run as another user (``setpriv``: Claude Code refuses root) works in it too
        env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_TOKEN"))}
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))  # the demo agent
        agent = subprocess.Popen(
            command,
            cwd=folder,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        assert agent.stdin is not None and agent.stdout is not None
        try:
            ask(agent.stdin, agent.stdout, 1, "initialize", {"protocolVersion": 1, "clientCapabilities": {}}, 60)
            said = ask(agent.stdin, agent.stdout, 2, "session/new", {"cwd": folder, "mcpServers": []}, 60)
            time.sleep(settle)
            pids = tree(agent.pid)
            return sum(status_kib(p, "VmRSS") for p in pids), sum(status_kib(p, "VmHWM") for p in pids), said
        finally:
            os.killpg(agent.pid, signal.SIGKILL)
            agent.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--settle", type=float, default=3.0, help="seconds to wait after session/new")
    parser.add_argument("command", nargs="*", help="the agent's command (default: the demo agent)")
    args = parser.parse_args()
    command = args.command or DEMO
    results = [measure(command, args.settle) for _ in range(args.runs)]
    rss = statistics.median(r[0] for r in results) / 1024
    hwm = statistics.median(r[1] for r in results) / 1024
    print(
        f"{' '.join(command)}: VmRSS {rss:.1f} MiB, VmHWM {hwm:.1f} MiB (medians of {args.runs}; session/new: "
        f"{', '.join(sorted({r[2] for r in results}))})"
    )


if __name__ == "__main__":
    main()
