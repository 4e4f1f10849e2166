"""The unix socket the server listens on behind a proxy on the same machine (``WEBCLIENT_UDS`` / ``--uds``).

Bound here rather than by uvicorn (``uvicorn.run(uds=...)`` binds, then chmods to ``0o666``: anyone may connect, and
even a stricter mode would come after a moment when the default one applied). Here the socket file is made with
mode ``0600`` (the umask while binding), given its group, and only then opened to ``WEBCLIENT_UDS_MODE``; nobody
else can connect at any moment in between. uvicorn is handed the bound socket (``fd=``).
"""

from __future__ import annotations

import contextlib
import grp
import os
import socket
import stat
from collections.abc import Iterator
from pathlib import Path

from webclient.proxy_proof import ProxyProof


def _clear_stale(path: Path) -> None:
    """Remove what a server that stopped without cleaning up left at ``path``; raise ValueError if it is not a
    socket, or a server still answers on it."""
    try:
        found = path.lstat()
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(found.st_mode):
        raise ValueError(f"WEBCLIENT_UDS: {str(path)!r} exists and is not a socket")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        try:
            probe.connect(str(path))
        except ConnectionRefusedError:
            path.unlink()
            return
        except OSError:
            pass
    raise ValueError(f"WEBCLIENT_UDS: a server already listens on {str(path)!r}")


def bind(proof: ProxyProof) -> socket.socket:
    """A unix socket bound at ``proof.uds`` with its mode and group, not yet listening. Raises ValueError (one line)
    when it cannot be."""
    assert proof.uds is not None, "bind() is for a server given WEBCLIENT_UDS"
    path = proof.uds
    gid = -1
    if proof.uds_group is not None:
        try:
            gid = grp.getgrnam(proof.uds_group).gr_gid
        except KeyError:
            raise ValueError(f"WEBCLIENT_UDS_GROUP: there is no group {proof.uds_group!r}") from None
    if not path.parent.is_dir():
        raise ValueError(f"WEBCLIENT_UDS: the folder {str(path.parent)!r} does not exist")
    _clear_stale(path)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        previous = os.umask(0o177)  # born 0600: only this user, until its group and mode are set
        try:
            listener.bind(str(path))
        finally:
            os.umask(previous)
        if gid != -1:
            os.chown(path, -1, gid)
        os.chmod(path, proof.uds_mode)
    except OSError as error:
        listener.close()
        with contextlib.suppress(OSError):
            path.unlink()
        raise ValueError(f"WEBCLIENT_UDS: cannot listen on {str(path)!r} ({error.strerror})") from None
    return listener


@contextlib.contextmanager
def listening(proof: ProxyProof) -> Iterator[socket.socket]:
    """:func:`bind`, and the socket file removed again when the server stops (if it is still this one)."""
    listener = bind(proof)
    assert proof.uds is not None
    made = proof.uds.lstat().st_ino
    try:
        yield listener
    finally:
        listener.close()
        with contextlib.suppress(OSError):
            if proof.uds.lstat().st_ino == made:
                proof.uds.unlink()
