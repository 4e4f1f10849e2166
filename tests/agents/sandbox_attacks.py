"""What a hostile agent tries from inside its sandbox, and what it must still be able to do (stdlib only).

Run by ``hostile_agent.py`` in the agent's own process, and as a script by a terminal command it starts
(``python sandbox_attacks.py TARGETS_JSON`` prints the report as JSON). Every attempt says whether it *escaped*
(did what the sandbox must forbid) and how it failed otherwise; every legitimate action whether it worked.

Targets (JSON, from the test through the prompt): ``other_workspace``, ``other_file`` (a file in it), ``data``,
``store``, ``key``, ``other_home``, ``other_home_file``, ``server_home_file``, ``canary`` (a value in the server's
environment), ``server_pid``, ``other_agent_pid``, ``tcp`` (``[host, port, what]`` lists it must not reach, network
on or off), ``unix`` (socket paths), ``abstract`` (an abstract socket's name), ``reach`` (``[host, port, what]`` lists
it must reach: with the network on, hosts outside this one), ``unreadable`` (``[path, what]`` lists: files of the
server's it must not read).
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

Attempt = tuple[str, Callable[[], str]]
"""What is tried, and a function that does it: it returns what it saw when it succeeds, raises when it fails."""


def _read(path: str) -> Callable[[], str]:
    def attempt() -> str:
        with open(path, "rb") as file:
            return f"read {len(file.read(4096))} bytes"

    return attempt


def _list(path: str, *names: str) -> Callable[[], str]:
    """Succeeds when the listing shows one of ``names`` (what the real folder holds), not a bare mount point."""

    def attempt() -> str:
        found = os.listdir(path)
        shown = [name for name in found if name in names] if names else found
        if not shown:
            raise PermissionError(f"listed {len(found)} entries, none of the real ones")
        return f"listed {shown[:5]}"

    return attempt


def _write(folder: str) -> Callable[[], str]:
    def attempt() -> str:
        path = Path(folder) / f"escape-{secrets.token_hex(4)}"
        path.write_text("escaped\n")
        path.unlink()
        return f"wrote {path}"

    return attempt


def _environment(canary: str) -> Callable[[], str]:
    def attempt() -> str:
        if any(canary in key or canary in value for key, value in os.environ.items()):
            return "the canary is in the environment"
        raise LookupError(f"not among {len(os.environ)} variables")

    return attempt


def _proc_environ(pid: int, canary: str) -> Callable[[], str]:
    def attempt() -> str:
        with open(f"/proc/{pid}/environ", "rb") as file:
            text = file.read()
        return "read it, with the canary" if canary.encode() in text else f"read {len(text)} bytes"

    return attempt


def _signal(pid: int) -> Callable[[], str]:
    def attempt() -> str:
        os.kill(pid, 0)  # signal 0: the permission check of a signal, nothing sent
        return f"may signal pid {pid}"

    return attempt


def _tcp(host: str, port: int) -> Callable[[], str]:
    def attempt() -> str:
        with socket.create_connection((host, port), timeout=3):
            return f"connected to {host}:{port}"

    return attempt


def _unix(address: str) -> Callable[[], str]:
    def attempt() -> str:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(3)
            sock.connect(address)
        return f"connected to {address!r}"

    return attempt


def attempts(targets: dict[str, Any]) -> list[Attempt]:
    """Everything the sandbox must refuse, for these targets."""
    canary = targets["canary"]
    tried: list[Attempt] = [
        ("read another session's workspace file", _read(targets["other_file"])),
        ("list another session's workspace", _list(targets["other_workspace"], Path(targets["other_file"]).name)),
        ("write into another session's workspace", _write(targets["other_workspace"])),
        ("list the data folder", _list(targets["data"], Path(targets["store"]).name, Path(targets["key"]).name)),
        ("read the store", _read(targets["store"])),
        ("read the secrets' key", _read(targets["key"])),
        ("write into the data folder", _write(targets["data"])),
        ("read another person's home", _read(targets["other_home_file"])),
        ("write into another person's home", _write(targets["other_home"])),
        ("read a file in the server's home", _read(targets["server_home_file"])),
        ("read /etc/shadow", _read("/etc/shadow")),
        ("write into /usr", _write("/usr")),
        ("write into /etc", _write("/etc")),
        ("find the server's canary in the environment", _environment(canary)),
        ("read the server's /proc/PID/environ", _proc_environ(targets["server_pid"], canary)),
        ("signal the server", _signal(targets["server_pid"])),
        ("signal another agent", _signal(targets["other_agent_pid"])),
        (
            "read another agent's workspace through /proc/PID/root",
            _read(f"/proc/{targets['other_agent_pid']}/root{targets['other_file']}"),
        ),
    ]
    tried += [(f"read {what} ({path})", _read(path)) for path, what in targets.get("unreadable", [])]
    tried += [(f"connect to {what} ({host}:{port})", _tcp(host, port)) for host, port, what in targets.get("tcp", [])]
    tried += [(f"connect to the unix socket {path}", _unix(path)) for path in targets.get("unix", [])]
    if targets.get("abstract"):
        tried.append(("connect to an abstract unix socket of the host", _unix("\0" + targets["abstract"])))
    return tried


def legitimate(targets: dict[str, Any]) -> list[Attempt]:
    """What an agent must still be able to do in its sandbox."""
    own = os.getcwd()
    home = os.environ.get("HOME", "")

    def round_trip(folder: str) -> Callable[[], str]:
        def attempt() -> str:
            path = Path(folder) / f"mine-{secrets.token_hex(4)}.txt"
            path.write_text("mine\n")
            assert path.read_text() == "mine\n"
            path.unlink()
            return f"wrote and read {path}"

        return attempt

    done = [
        ("write and read in its own workspace", round_trip(own)),
        ("write and read in its home", round_trip(home)),
        ("write and read in its /tmp", round_trip("/tmp")),
    ]
    done += [(f"connect to {what} ({host}:{port})", _tcp(host, port)) for host, port, what in targets.get("reach", [])]
    return done


def report(targets: dict[str, Any], attacking: bool = True) -> dict[str, Any]:
    """Each attempt and each legitimate action with ``worked`` and what happened (``attacking`` False: only the
    legitimate ones)."""

    def run(tried: list[Attempt]) -> list[dict[str, Any]]:
        results = []
        for what, attempt in tried:
            try:
                said, worked = attempt(), True
            except Exception as error:  # every way of failing is a failure to escape
                said, worked = f"{type(error).__name__}: {error}", False
            results.append({"what": what, "worked": worked, "said": said})
        return results

    tried = run(attempts(targets)) if attacking else []
    return {"pid": os.getpid(), "attempts": tried, "legitimate": run(legitimate(targets))}


if __name__ == "__main__":
    print(json.dumps(report(json.loads(sys.argv[1]))))
