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
    done = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=10)
    if done.returncode != 0:
        raise subprocess.CalledProcessError(done.returncode, done.args, done.stdout, done.stderr.strip())


def _remove(namespace: str, outer: str) -> None:
    with contextlib.suppress(subprocess.CalledProcessError):
        _ip("link", "del", outer)  # its peer goes with it
    with contextlib.suppress(subprocess.CalledProcessError):
        _ip("netns", "del", namespace)


def _join(namespace: str, outer: str, inner: str, subnet: str) -> None:
    _ip("netns", "add", namespace)
    _ip("link", "add", outer, "type", "veth", "peer", "name", inner)
    _ip("link", "set", inner, "netns", namespace)
    _ip("addr", "add", f"{subnet}.1/30", "dev", outer)
    _ip("link", "set", outer, "up")
    _ip("-n", namespace, "addr", "add", f"{subnet}.2/30", "dev", inner)
    _ip("-n", namespace, "link", "set", inner, "up")
    _ip("-n", namespace, "link", "set", "lo", "up")


@contextlib.contextmanager
def outside_host(port: int = 8470) -> Iterator[OutsideHost]:
    """The host, its address and the port it listens on; skips the test when not root or ``ip`` is missing."""
    if os.geteuid() != 0 or shutil.which("ip") is None:
        pytest.skip("a host outside this one is made in a network namespace, as root only")
    # One CI run in a few dozen saw `ip -n NS addr add` fail (status 255) on the device just moved there; the host is
    # this test's scaffolding, not its subject, so a failed setup is undone and tried again under other names.
    for attempt in range(3):
        tag = secrets.token_hex(3)
        namespace, outer, inner = f"wcsb-{tag}", f"wcsb{tag}o", f"wcsb{tag}i"
        # 10.213.X.0/30: neither slirp4netns's 10.0.2.0/24 nor, most likely, this machine's own network.
        subnet = f"10.213.{int(tag[:2], 16)}"
        try:
            _join(namespace, outer, inner, subnet)
            break
        except subprocess.CalledProcessError as failure:
            _remove(namespace, outer)
            if attempt == 2:
                raise AssertionError(f"{' '.join(failure.cmd)}: {failure.stderr}") from failure
    listener = None
    try:
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
        _remove(namespace, outer)
