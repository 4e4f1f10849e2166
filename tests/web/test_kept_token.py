"""Token mode's sign-in token is kept in the data folder, owner-only, across starts of ``webclient``; one given is
used as it is, and ``--new-token`` replaces the kept one (signing every browser out)."""

from __future__ import annotations

import os
import re
import stat
import time
from pathlib import Path

import httpx
import pytest

from tests.support.servers import Server, free_port, launch_server, stop_server
from webclient.web.access.kept_token import kept_token


def _start(tmp_path: Path, token: str = "", options: tuple[str, ...] = ()) -> tuple[Server, str]:
    """``webclient`` on the test's data folder, and the sign-in URL it printed."""
    log = tmp_path / f"server-{time.monotonic_ns()}.log"
    env = {"WEBCLIENT_DATA_DIR": str(tmp_path / "data")}
    with log.open("wb") as output:
        server = launch_server(
            free_port(), token, tmp_path / "received.jsonl", tmp_path, list(options), env, output.fileno()
        )
    deadline = time.monotonic() + 20
    while (printed := re.search(r"open (http://\S+) to sign in", log.read_text())) is None:
        assert time.monotonic() < deadline, log.read_text()
        time.sleep(0.05)
    return server, printed.group(1)


def _token(url: str) -> str:
    return url.rsplit("token=", 1)[1]


@pytest.mark.process
def test_the_token_is_kept_owner_only_and_replaced_only_when_asked(tmp_path: Path) -> None:
    server, url = _start(tmp_path)
    stop_server(server)
    kept = tmp_path / "data" / "token"
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert kept.read_text().strip() == _token(url)

    server, again = _start(tmp_path)
    try:
        assert _token(again) == _token(url)
        with httpx.Client(base_url=server.url, follow_redirects=True) as browser:
            assert browser.get(f"/?token={_token(url)}").status_code == 200  # signed in: a cookie
            assert browser.get("/").status_code == 200
        stop_server(server)

        server, renewed = _start(tmp_path, options=("--new-token",))
        assert renewed != url and kept.read_text().strip() == _token(renewed)
        with httpx.Client(base_url=server.url) as http:
            assert http.get("/", headers={"Authorization": f"token {_token(url)}"}).status_code == 401
            assert http.get("/", headers={"Authorization": f"token {_token(renewed)}"}).status_code == 200
    finally:
        stop_server(server)


@pytest.mark.process
def test_a_token_given_is_used_and_not_kept(tmp_path: Path) -> None:
    server, url = _start(tmp_path, token="given-" + "x" * 40)
    stop_server(server)
    assert _token(url) == "given-" + "x" * 40
    assert not (tmp_path / "data" / "token").exists()


def test_a_token_file_others_may_read_is_replaced(tmp_path: Path) -> None:
    first = kept_token(tmp_path)
    assert kept_token(tmp_path) == first
    os.chmod(tmp_path / "token", 0o644)
    replaced = kept_token(tmp_path)
    assert replaced != first and stat.S_IMODE((tmp_path / "token").stat().st_mode) == 0o600
