"""Token mode's sign-in token, kept in the data folder across starts, so that a restart signs no one out.

A sign-in (the cookie) is tied to the token that made it (`web.access.signins`): a new token each start would end
every sign-in and leave every open page "Signed out". The token is made once, stored owner-only (0600) as
``token`` in the data folder, and read back at each start; ``--new-token`` replaces it (every sign-in ends), and a
token given by ``--token`` / ``WEBCLIENT_TOKEN`` is used as it is and never stored.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path

from webclient.agents.homes import data_folder
from webclient.config import Settings

TOKEN_FILE = "token"


def token_folder(data_dir: str | None) -> Path:
    """Where the token is kept: the data folder (``--data-dir``, else the user's data folder, as the store finds it)."""
    return Path(data_dir).expanduser() if data_dir else data_folder(Settings())


def kept_token(folder: Path, new: bool = False) -> str:
    """The token stored in ``folder`` (made and stored when there is none, or when ``new``). A file that is not a
    regular file of this user's, readable by no one else, is not trusted: a new token replaces it."""
    path = folder / TOKEN_FILE
    if not new:
        found = _read(path)
        if found:
            return found
    token = secrets.token_urlsafe(32)
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    # Written beside it and renamed over it: a start that dies half-way leaves the old token or the new, never half.
    partial = folder / f".{TOKEN_FILE}.{secrets.token_hex(4)}"
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        with os.fdopen(fd, "w") as file:
            file.write(token + "\n")
        os.replace(partial, path)
    except BaseException:
        with contextlib.suppress(OSError):
            partial.unlink()
        raise
    return token


def _read(path: Path) -> str | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(fd) as file:
        info = os.fstat(file.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
            return None
        text = file.read(200).strip()
    return text if len(text) >= 32 and text.isprintable() and " " not in text else None
