"""Start-time bench: how long ``python -m webclient`` takes from the process's start to its first answer to ``GET /``.

Run by hand: ``.venv/bin/python bench/start_time.py [--runs N]``. Each run starts the server as a subprocess on a free
loopback port and asks ``GET /`` every 5 ms until something answers; it measures with the store off
(``WEBCLIENT_STORE=off``), on a fresh SQLite store (made and migrated at start), and on the store the previous run
left (already up to date: what every start but the first does). Runs alternate the cases; medians of the wall time
and of the server's CPU time until then (steadier on a shared machine) are printed.
"""

from __future__ import annotations

import argparse
import http.client
import os
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def answers(port: int) -> bool:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
    try:
        connection.request("GET", "/")
        connection.getresponse().read()
        return True
    except OSError:
        return False
    finally:
        connection.close()


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process: steadier than wall time on a busy machine."""
    with open(f"/proc/{pid}/stat", "rb") as stat:
        fields = stat.read().rsplit(b")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start_once(env: dict[str, str], root: Path, timeout: float = 30.0) -> tuple[float, float]:
    """Seconds from starting the server to its first answer, and the CPU seconds the server used until then."""
    port = free_port()
    began = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "webclient", "--port", str(port)],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root), "WEBCLIENT_TOKEN": secrets.token_urlsafe(16), **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        while not answers(port):
            if process.poll() is not None:
                raise RuntimeError(f"the server exited ({process.returncode})")
            if time.perf_counter() - began > timeout:
                raise TimeoutError("the server never answered")
            time.sleep(0.005)
        return time.perf_counter() - began, cpu_seconds(process.pid)
    finally:
        process.terminate()
        process.wait(timeout=15)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7, help="starts per case (default %(default)s)")
    parser.add_argument("--server-root", type=Path, default=ROOT, help="the checkout whose server is started")
    args = parser.parse_args()
    figures: dict[str, list[tuple[float, float]]] = {"store off": [], "store on, new": [], "store on, up to date": []}
    with tempfile.TemporaryDirectory(prefix="start-bench-") as name:
        tmp = Path(name)
        for run in range(args.runs):
            data = tmp / f"data-{run}"
            figures["store off"].append(start_once({"WEBCLIENT_STORE": "off"}, args.server_root))
            figures["store on, new"].append(start_once({"WEBCLIENT_DATA_DIR": str(data)}, args.server_root))
            figures["store on, up to date"].append(start_once({"WEBCLIENT_DATA_DIR": str(data)}, args.server_root))
    for case, runs in figures.items():
        wall, cpu = [w for w, _ in runs], [c for _, c in runs]
        print(
            f"{case:22} median {statistics.median(wall) * 1000:6.0f} ms (min {min(wall) * 1000:.0f}), "
            f"CPU {statistics.median(cpu) * 1000:6.0f} ms (min {min(cpu) * 1000:.0f}), {len(runs)} runs"
        )


if __name__ == "__main__":
    main()
