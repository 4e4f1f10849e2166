"""The real server (``python -m webclient``) under a path prefix (``WEBCLIENT_ROOT_PATH=/agents``): the OpenID round
trip through a real provider (oidc-provider-mock, its own process: the redirect URI, the binding cookie's path, the
callback and where it lands), the sign-in URL it prints, and a prefix it refuses."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from tests.support.html import parse
from tests.support.oidc import PEOPLE, Provider, oidc_provider, provider_answer
from tests.support.servers import ROOT, ServerFactory, server_command
from tests.support.urls import URLS
from webclient.render.urls import OIDC_CALLBACK_PATH, OIDC_START_PATH

PREFIX = "/agents"
HTML = {"Accept": "text/html,application/xhtml+xml"}


@pytest.fixture(scope="module")
def provider(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Provider]:
    """One provider for the module's tests (a process of its own, a second of a core to start): each sign-in is a
    code of its own, and nothing a test does changes the people it offers."""
    with oidc_provider(PEOPLE, tmp_path_factory.mktemp("provider") / "provider.log") as running:
        yield running


def test_the_openid_round_trip_stays_under_the_prefix(start_server: ServerFactory, provider: Provider) -> None:
    server = start_server(**provider.settings(), WEBCLIENT_ROOT_PATH=PREFIX)
    refused = httpx.get(server.url + PREFIX + URLS.for_("new_session", x="1"), headers=HTML)
    assert refused.status_code == 401
    button = next(e for e in parse(refused.text).elements if e.attrs.get("data-action") == "sign-in-oidc")
    start = button.attrs["href"]
    assert start.startswith(PREFIX + OIDC_START_PATH + "?next=")
    off = httpx.get(server.url + start, follow_redirects=False)
    assert off.status_code == 303, off.text
    query = parse_qs(urlsplit(off.headers["location"]).query)
    assert query["redirect_uri"] == [server.url + PREFIX + OIDC_CALLBACK_PATH]
    binding = off.headers["set-cookie"]
    assert "Path=/agents/signin;" in binding and "SameSite=lax" in binding
    back = provider_answer(off.headers["location"], "alice")
    assert back.startswith(server.url + PREFIX + OIDC_CALLBACK_PATH + "?")
    answer = httpx.get(back, headers={"Cookie": binding.split(";", 1)[0], **HTML}, follow_redirects=False)
    assert answer.status_code == 303 and answer.headers["location"] == PREFIX + URLS.for_("new_session", x="1")
    cookie = answer.headers["set-cookie"]
    assert "Path=/agents;" in cookie
    index = httpx.get(server.url + PREFIX + "/", headers={"Cookie": cookie.split(";", 1)[0], **HTML})
    assert "Signed in as Alice Archer (admin)" in index.text


@pytest.mark.process
def test_the_printed_sign_in_url_is_under_the_prefix(start_server: ServerFactory) -> None:
    server = start_server(process=True, WEBCLIENT_ROOT_PATH=PREFIX + "/")
    assert server.process.stdout is not None
    printed = re.search(r"http://\S+/\?token=\S+", server.process.stdout.readline().decode())
    assert printed is not None and printed[0] == f"{server.url}{PREFIX}/?token={server.token}"
    signed_in = httpx.get(printed[0], follow_redirects=False)
    assert signed_in.status_code == 303 and signed_in.headers["location"] == PREFIX + "/"


@pytest.mark.process
def test_a_prefix_that_is_not_a_plain_path_stops_the_start(tmp_path: Path) -> None:
    env = {**os.environ, "WEBCLIENT_ROOT_PATH": "/a/../b", "WEBCLIENT_DATA_DIR": str(tmp_path)}
    ended = subprocess.run(server_command("--port", "1"), cwd=ROOT, env=env, capture_output=True, timeout=60)
    assert ended.returncode != 0 and b"WEBCLIENT_ROOT_PATH must be a path such as /agents" in ended.stderr
    assert b"Traceback" not in ended.stderr
