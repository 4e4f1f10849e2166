"""AAP servers as tests run them: the demo AAP server (``python -m demo_aap``) as its own process on a free port."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx

from tests.support.servers import ROOT, free_port


@contextmanager
def demo_aap_server(**env: str) -> Iterator[str]:
    """The demo AAP server's base URL while it runs (``DEMO_AAP_DELAY`` 0 unless given)."""
    with aap_server([sys.executable, "-m", "demo_aap"], **{"DEMO_AAP_DELAY": "0", **env}) as url:
        yield url


@contextmanager
def aap_server(argv: list[str], **env: str) -> Iterator[str]:
    """An AAP server started as ``argv --port N`` on a free port: its base URL while it runs."""
    port = free_port()
    full_env = {**os.environ, **env}
    process = subprocess.Popen([*argv, "--port", str(port)], cwd=ROOT, env=full_env, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 20
        while True:
            if process.poll() is not None:
                raise RuntimeError(
                    f"the demo AAP server exited: {process.stderr.read().decode() if process.stderr else ''}"
                )
            try:
                httpx.get(url + "/meta", timeout=1)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stderr:
            process.stderr.close()
