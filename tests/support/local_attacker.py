"""Another program on the server's machine, as issue 22 found one: it connects from the proxy's own address
(``socket.bind(("127.0.0.2", 0))``, which Linux lets any process do) or to the server's unix socket, and names
whomever it likes in the proxy's headers.

It runs as its own process with the system's Python (stdlib only), as ``nobody`` when the tests run as root
(:data:`AS_NOBODY`), and reports what it got: the status line and the body, or the error that stopped it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

SYSTEM_PYTHON = shutil.which("python3", path="/usr/bin:/bin")

AS_NOBODY = os.geteuid() == 0 and SYSTEM_PYTHON is not None
"""Whether the attacker can run as another user than the server's (the tests run as root in CI)."""

_SCRIPT = r"""
import json, socket, sys
target, source, path, headers = json.loads(sys.argv[1])
try:
    if isinstance(target, str):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(target)
    else:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if source:
            sock.bind((source, 0))
        sock.connect(tuple(target))
    lines = [f"GET {path} HTTP/1.1", "Host: 127.0.0.1", "Connection: close"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
    answer = b""
    while chunk := sock.recv(65536):
        answer += chunk
    print(json.dumps({"answer": answer.decode("utf-8", "replace")}))
except OSError as error:
    print(json.dumps({"error": type(error).__name__}))
"""


@dataclass(frozen=True)
class Outcome:
    answer: str = ""
    """The whole HTTP answer (status line, headers, body), or "" when it never got one."""
    error: str = ""
    """The name of the error that stopped it (``PermissionError``, ``ConnectionRefusedError``), or ""."""

    @property
    def status(self) -> int | None:
        return int(self.answer.split(" ", 2)[1]) if self.answer else None


def attack(target: tuple[str, int] | Path, path: str, headers: Mapping[str, str], source: str | None = None) -> Outcome:
    """Ask ``target`` (an address and port, or a unix socket) for ``path`` with ``headers``, from ``source`` (an
    address to connect from), as ``nobody`` when :data:`AS_NOBODY`."""
    assert SYSTEM_PYTHON is not None, "the attacker needs the system's python3"
    where: object = str(target) if isinstance(target, Path) else list(target)
    argument = json.dumps([where, source, path, dict(headers)])
    user = {"user": "nobody", "group": "nogroup", "extra_groups": []} if AS_NOBODY else {}
    ran = subprocess.run(
        [SYSTEM_PYTHON, "-I", "-c", _SCRIPT, argument], capture_output=True, text=True, timeout=30, cwd="/", **user
    )
    assert ran.returncode == 0, ran.stderr
    return Outcome(**json.loads(ran.stdout))
