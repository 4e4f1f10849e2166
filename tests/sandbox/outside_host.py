"""A host outside this one for a sandbox with the network on to reach, on a machine without the internet: a network
namespace of its own (``ip netns``) joined to this one by a veth pair, with addresses of the test's choosing and a TCP
listener inside. Made as root only (the tests that need it skip otherwise), removed afterwards.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

LISTENER = """
import socket, sys
server = socket.socket()
server.bind(("0.0.0.0", int(sys.argv[1])))
server.listen(16)
print("listening", flush=True)
while True:
    connection, _ = server.accept()
    connection.sendall(b"outside\\n")
    connection.close()
"""


@dataclass(frozen=True)
class OutsideHost:
    address: str
    port: int


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=10)


@contextlib.contextmanager
def outside_host(port: int = 8470) -> Iterator[OutsideHost]:
    """The host, its address and the port it listens on; skips the test when not root or ``ip`` is missing."""
    if os.geteuid() != 0 or shutil.which("ip") is None:
        pytest.skip("a host outside this one is made in a network namespace, as root only")
    tag = secrets.token_hex(3)
    namespace, outer, inner = f"wcsb-{tag}", f"wcsb{tag}o", f"wcsb{tag}i"
    # 10.213.X.0/30: neither slirp4netns's 10.0.2.0/24 nor, most likely, this machine's own network.
    subnet = f"10.213.{int(tag[:2], 16)}"
    listener = None
    try:
        _ip("netns", "add", namespace)
        _ip("link", "add", outer, "type", "veth", "peer", "name", inner)
        _ip("link", "set", inner, "netns", namespace)
        _ip("addr", "add", f"{subnet}.1/30", "dev", outer)
        _ip("link", "set", outer, "up")
        _ip("-n", namespace, "addr", "add", f"{subnet}.2/30", "dev", inner)
        _ip("-n", namespace, "link", "set", inner, "up")
        _ip("-n", namespace, "link", "set", "lo", "up")
        command = ["ip", "netns", "exec", namespace, sys.executable, "-c", LISTENER, str(port)]
        listener = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        assert listener.stdout is not None and listener.stdout.readline().strip() == "listening"
        yield OutsideHost(f"{subnet}.2", port)
    finally:
        if listener is not None:
            listener.kill()
            listener.wait(10)
            if listener.stdout is not None:
                listener.stdout.close()
        with contextlib.suppress(subprocess.CalledProcessError):
            _ip("link", "del", outer)  # its peer goes with it
        with contextlib.suppress(subprocess.CalledProcessError):
            _ip("netns", "del", namespace)
