"""The unix socket the server listens on behind a proxy on the same machine (``WEBCLIENT_UDS``): bound with its
mode and group, what an earlier server left behind, and the settings refused. Real sockets in a real folder; the
server listening on one is `tests/web/test_trusted_proxy.py`'s."""

from __future__ import annotations

import grp
import os
import socket
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.nginx import socket_folder
from webclient.config import Settings
from webclient.proxy_proof import ProxyProof
from webclient.web.access.access import Access
from webclient.web.access.unix_socket import bind, listening


@pytest.fixture
def path() -> Iterator[Path]:
    with socket_folder() as made:
        yield made


def test_the_socket_gets_its_group_and_mode_and_the_umask_is_left_as_it_was(path: Path) -> None:
    before = os.umask(0o022)
    try:
        with listening(ProxyProof(uds=path, uds_mode=0o660, uds_group="www-data")) as bound:
            made = path.stat()
            assert stat.S_ISSOCK(made.st_mode) and stat.S_IMODE(made.st_mode) == 0o660
            assert made.st_gid == grp.getgrnam("www-data").gr_gid
            assert bound.getsockname() == str(path)
        assert os.umask(0o022) == 0o022
    finally:
        os.umask(before)
    assert not path.exists()  # removed when the server stops


def test_a_socket_left_by_a_stopped_server_is_replaced_and_a_live_ones_is_refused(path: Path) -> None:
    left = socket.socket(socket.AF_UNIX)
    left.bind(str(path))
    left.close()  # a server killed before it could remove its socket
    with listening(ProxyProof(uds=path)) as bound:
        bound.listen()
        with pytest.raises(ValueError, match="a server already listens on"):
            bind(ProxyProof(uds=path))
        assert stat.S_ISSOCK(path.stat().st_mode)  # the running server's socket untouched


def test_a_file_that_is_not_a_socket_is_never_replaced(path: Path) -> None:
    path.write_text("someone's file")
    with pytest.raises(ValueError, match="is not a socket"):
        bind(ProxyProof(uds=path))
    assert path.read_text() == "someone's file"


def test_an_unknown_group_is_refused(path: Path) -> None:
    with pytest.raises(ValueError, match="there is no group 'no-such-group-here'"):
        bind(ProxyProof(uds=path, uds_group="no-such-group-here"))
    assert not path.exists()


@pytest.mark.parametrize(
    ("env", "refusal"),
    [
        ({"WEBCLIENT_UDS_MODE": "0666"}, "lets every user of this machine connect"),
        ({"WEBCLIENT_UDS_MODE": "0777"}, "lets every user of this machine connect"),
        ({"WEBCLIENT_UDS_MODE": "rw-rw----"}, "must be octal permissions"),
        ({"WEBCLIENT_UDS": "/tmp/" + "a" * 120}, "longer than a unix socket's path may be"),
        ({"WEBCLIENT_AUTH": "trusted-header"}, "needs WEBCLIENT_UDS or WEBCLIENT_TRUSTED_PROXIES"),
        ({"WEBCLIENT_UDS": "/run/webclient/webclient.sock", "WEBCLIENT_NO_TOKEN": "1"}, "refused on a unix socket"),
    ],
)
def test_settings_that_cannot_work_are_refused(env: dict[str, str], refusal: str) -> None:
    with pytest.raises(ValueError, match=refusal):
        Access.from_settings(Settings.from_env(env))


def test_the_socket_alone_is_enough_for_trusted_header_mode() -> None:
    settings = Settings.from_env({"WEBCLIENT_AUTH": "trusted-header", "WEBCLIENT_UDS": "/run/webclient/webclient.sock"})
    assert settings.proxy_proof.uds == Path("/run/webclient/webclient.sock") and settings.proxy_proof.uds_mode == 0o660
