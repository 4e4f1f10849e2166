"""A real OpenID provider for the sign-in tests: oidc-provider-mock (PyPI), started as its own process.

It signs in whoever the test names: its authorization page has a button per person given here (their ``sub``) and a
field to type any other; :func:`sign_in_at_provider` presses the button in a browser. The claims given (``name``,
``email``, ``groups``...) go into the ID token and the userinfo answer. Any client id and secret are accepted, and
every redirect URI; PKCE is required (see ``oidc_provider.py``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from tests.support.servers import free_port

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Provider:
    """A running provider: its issuer URL (what ``WEBCLIENT_OIDC_ISSUER`` names)."""

    issuer: str
    process: subprocess.Popen[bytes]
    log: Path

    def settings(self, client_id: str = "webclient", client_secret: str = "test-secret") -> dict[str, str]:
        """The server's environment for signing in here."""
        return {
            "WEBCLIENT_AUTH": "oidc",
            "WEBCLIENT_OIDC_ISSUER": self.issuer,
            "WEBCLIENT_OIDC_CLIENT_ID": client_id,
            "WEBCLIENT_OIDC_CLIENT_SECRET": client_secret,
        }

    def output(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""


def start_provider(people: Sequence[Mapping[str, Any]], log: Path) -> Provider:
    """Start the provider on a free loopback port with ``people`` (each a claims object with ``sub``) offered on its
    authorization page; wait until its discovery document answers. Stop it with :func:`stop_provider`."""
    port = free_port()
    args = [sys.executable, "-m", "tests.support.oidc_provider", "--port", str(port), "--host", "127.0.0.1"]
    for claims in people:
        args += ["--user-claims", json.dumps(dict(claims))]
    with log.open("wb") as out:
        env = {**os.environ, "NO_COLOR": "1"}
        process = subprocess.Popen(args, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, env=env)
    provider = Provider(f"http://127.0.0.1:{port}", process, log)
    deadline = time.monotonic() + 20
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"the OpenID provider exited early ({process.returncode}):\n{provider.output()}")
        try:
            if httpx.get(provider.issuer + "/.well-known/openid-configuration", timeout=1).status_code == 200:
                return provider
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            stop_provider(provider)
            raise RuntimeError(f"the OpenID provider never answered:\n{provider.output()}")
        time.sleep(0.1)


def stop_provider(provider: Provider) -> None:
    provider.process.terminate()
    try:
        provider.process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        provider.process.kill()
        provider.process.wait()


@contextmanager
def oidc_provider(people: Sequence[Mapping[str, Any]], log: Path) -> Iterator[Provider]:
    provider = start_provider(people, log)
    try:
        yield provider
    finally:
        stop_provider(provider)


PEOPLE = (
    {
        "sub": "alice",
        "name": "Alice Archer",
        "email": "alice@example.com",
        "email_verified": True,
        "groups": ["admins", "dev"],
    },
    {"sub": "bob", "name": "Bob Baker", "email": "bob@example.com", "email_verified": True, "groups": ["dev"]},
)
"""Two people the provider offers: Alice, an admin, and Bob, each with an address the provider verified."""


def sign_in_at_provider(page: Any, sub: str) -> None:
    """On the provider's authorization page (a Playwright page already there): sign in as ``sub``."""
    page.get_by_role("button", name=sub, exact=True).click()


def provider_answer(authorize_url: str, sub: str) -> str:
    """What the provider's authorization page does when ``sub`` is chosen (as a script): the URL it sends the
    browser back to."""
    response = httpx.post(authorize_url, data={"sub": sub}, follow_redirects=False)
    assert response.status_code == 302, response.text
    return response.headers["location"]
