"""Idle-memory bench: what ``python -m webclient`` holds once it answers, and which imports cost the most.

Run by hand: ``.venv/bin/python bench/idle_memory.py [--runs N] [--server-root PATH]``. Each run starts the server
with its default configuration (a fresh SQLite store in a temporary data folder, the demo agent, token sign-in) on a
free loopback port, waits for ``GET /`` to answer (one page served, so what the first page needs is counted), waits a
second more and reads ``VmRSS`` and ``VmHWM`` from ``/proc``. Then it starts the server once more under
``python -X importtime`` and prints the modules with the largest cumulative import time (top-level packages only, so
that a package's own submodules do not crowd the list) and the count of modules imported. Last, what the memory is:
one fresh interpreter imports the modules that server imported, a group at a time (`GROUPS`, in that order, each
with what it imports itself), and prints ``VmRSS`` after each; what the idle server holds beyond all of them is
what start-up and the first page made (threads, compiled templates, the store's connections, the static files).
"""

from __future__ import annotations

import argparse
import http.client
import os
import re
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def answers(port: int, token: str) -> bool:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
    try:
        connection.request("GET", "/", headers={"Authorization": f"token {token}"})
        connection.getresponse().read()
        return True
    except OSError:
        return False
    finally:
        connection.close()


def status_kib(pid: int, field: str) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise LookupError(field)


def start(
    root: Path, data: Path, *python_options: str, stderr: int | IO[bytes] = subprocess.DEVNULL
) -> subprocess.Popen[bytes]:
    port, token = free_port(), secrets.token_urlsafe(16)
    env = {**os.environ, "PYTHONPATH": str(root), "WEBCLIENT_TOKEN": token, "WEBCLIENT_DATA_DIR": str(data)}
    for name in ("WEBCLIENT_AGENT", "WEBCLIENT_CONFIG", "WEBCLIENT_DATABASE_URL", "WEBCLIENT_STORE"):
        env.pop(name, None)
    process = subprocess.Popen(
        [sys.executable, *python_options, "-m", "webclient", "--port", str(port)],
        cwd=root,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=stderr,
    )
    deadline = time.monotonic() + 60
    while not answers(port, token):
        if process.poll() is not None:
            raise RuntimeError(f"the server exited ({process.returncode})")
        if time.monotonic() > deadline:
            raise TimeoutError("the server never answered")
        time.sleep(0.02)
    return process


def stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    process.wait(timeout=15)


def idle_once(root: Path, data: Path) -> tuple[int, int]:
    """VmRSS and VmHWM (KiB) of an idle server that has served one page."""
    process = start(root, data)
    try:
        time.sleep(1.0)
        return status_kib(process.pid, "VmRSS"), status_kib(process.pid, "VmHWM")
    finally:
        stop(process)


LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)")


def import_offenders(root: Path, data: Path, top: int) -> tuple[list[tuple[int, int, str]], list[str]]:
    """The packages whose modules took the most import time in all (their own time, µs), with how many modules each
    brought, and the modules imported, in the order their imports ended."""
    with tempfile.TemporaryFile() as log:
        process = start(root, data, "-X", "importtime", stderr=log)
        try:
            time.sleep(0.5)
        finally:
            stop(process)
        log.seek(0)
        err = log.read().decode(errors="replace")
    by_package: dict[str, tuple[int, int]] = {}
    imported = []
    for match in LINE.finditer(err):
        name = match.group(4)
        imported.append(name)
        parts = name.split(".")
        package = ".".join(parts[:2]) if parts[0] == "webclient" else parts[0]
        micros, modules = by_package.get(package, (0, 0))
        by_package[package] = (micros + int(match.group(1)), modules + 1)
    ranked = sorted(((micros, modules, name) for name, (micros, modules) in by_package.items()), reverse=True)
    return ranked[:top], imported


GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("asyncio, ssl, hashlib and the rest of the standard library the loop needs", ("asyncio", "ssl", "hashlib")),
    (
        "uvicorn, uvloop, httptools, websockets (click, watchfiles: uvicorn imports them)",
        ("uvicorn", "uvloop", "httptools", "websockets"),
    ),
    ("Starlette, Jinja", ("starlette", "jinja2", "jinja2_fragments", "markupsafe", "anyio")),
    ("SQLAlchemy Core, sqlite3 and SQLite's dialect", ("sqlalchemy", "sqlite3", "_sqlite3")),
    ("Markdown (markdown-it), Pygments, pyte (wcwidth)", ("markdown_it", "mdurl", "pygments", "pyte", "wcwidth")),
    ("webclient, and the rest of what it imports", ("",)),
)
"""What the idle server imports, in groups, imported in this order by `memory_by_import` (a group's modules bring
what they import themselves: SQLAlchemy is counted where it is first imported)."""

BY_IMPORT = """
import importlib, sys
def rss():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))
print(rss(), flush=True)
modules = sys.stdin.read().split()
for prefixes in sys.argv[1:]:
    for name in modules:
        if name.split(".")[0] in prefixes.split(",") or prefixes == "*":
            try:
                importlib.import_module(name)
            except Exception:  # a module that only imports in its own context (a __main__, a platform's)
                pass
    print(rss(), flush=True)
"""


def memory_by_import(root: Path, modules: list[str]) -> list[tuple[str, int]]:
    """``VmRSS`` (KiB) of one fresh interpreter: bare, then after importing each of `GROUPS` of ``modules``."""
    groups = [",".join(prefixes) if prefixes != ("",) else "*" for _, prefixes in GROUPS]
    env = {**os.environ, "PYTHONPATH": str(root)}
    for name in ("WEBCLIENT_AGENT", "WEBCLIENT_CONFIG", "WEBCLIENT_DATABASE_URL", "WEBCLIENT_STORE"):
        env.pop(name, None)
    done = subprocess.run(
        [sys.executable, "-c", BY_IMPORT, *groups],
        input="\n".join(name for name in modules if name != "__main__" and not name.startswith("webclient.__main__")),
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    figures = [int(line) for line in done.stdout.split()]
    return list(zip(["the interpreter", *(label for label, _ in GROUPS)], figures, strict=True))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3, help="starts measured (default %(default)s)")
    parser.add_argument("--top", type=int, default=15, help="import offenders listed (default %(default)s)")
    parser.add_argument("--server-root", type=Path, default=ROOT, help="the checkout whose server is started")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="idle-bench-") as name:
        tmp = Path(name)
        figures: dict[str, list[tuple[int, int]]] = {"new store": [], "store up to date": []}
        for run in range(args.runs):
            data = tmp / f"data-{run}"
            figures["new store"].append(idle_once(args.server_root, data))  # made and migrated at start
            figures["store up to date"].append(idle_once(args.server_root, data))  # what every later start does
        for case, runs in figures.items():
            rss, hwm = [now for now, _ in runs], [peak for _, peak in runs]
            print(
                f"idle server, {case:16}: VmRSS median {statistics.median(rss) / 1024:5.1f} MiB "
                f"(min {min(rss) / 1024:.1f}), VmHWM median {statistics.median(hwm) / 1024:5.1f} MiB, {len(runs)} runs"
            )
        offenders, imported = import_offenders(args.server_root, tmp / "data-0", args.top)
        print(f"{len(imported)} modules imported (store up to date); the packages that took the most import time:")
        for micros, modules, package in offenders:
            print(f"  {micros / 1000:7.1f} ms  {modules:4} modules  {package}")
        print("VmRSS of one interpreter importing what the idle server imported, a group at a time:")
        before = 0
        for label, kib in memory_by_import(args.server_root, imported):
            print(f"  {kib / 1024:5.1f} MiB  {(kib - before) / 1024:+5.1f}  {label}")
            before = kib
        idle = statistics.median(now for now, _ in figures["store up to date"])
        print(
            f"  {idle / 1024:5.1f} MiB  {(idle - before) / 1024:+5.1f}  start-up and the first page (the idle server)"
        )


if __name__ == "__main__":
    main()
