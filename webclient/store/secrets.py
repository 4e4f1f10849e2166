"""People's secrets: API keys a person enters in their settings, for their agents' environment.

Each value is encrypted (Fernet: AES-128-CBC with an HMAC) with the server's key before it reaches the database, and
decrypted only to start one of the person's agents. The key is ``WEBCLIENT_SECRET_KEY`` (any long random string;
its SHA-256 is the Fernet key), else a key file made once (0600) in the data folder. A value is never shown again,
logged or journalled: the pages list names only, and only the agent's environment holds the value.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import logging
import os
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import delete, insert, select, update

from webclient.store.database import Database
from webclient.store.schema import secrets

if TYPE_CHECKING:  # cryptography (7 MiB) is imported at the first secret sealed or opened, not at every start
    from cryptography.fernet import Fernet

log = logging.getLogger(__name__)

KEY_FILE = "secret.key"
MAX_VALUE = 16_000
"""Characters a value may have (an API key is far shorter; a certificate fits)."""

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
_RESERVED = {"HOME", "PATH", "SHELL", "USER", "LOGNAME", "PWD", "TERM", "LANG", "TMPDIR", "IFS"}
_RESERVED_PREFIXES = ("XDG_", "LD_", "DYLD_", "PYTHON", "WEBCLIENT_", "LC_")


class SecretRefused(ValueError):
    """A name or value a person may not keep (the message says why, for the page)."""


def check_name(name: str) -> str:
    """``name`` as an environment variable's name an agent may be given.

    Raises:
        SecretRefused: not a variable's name, or one the server sets itself (HOME, PATH, XDG_*, ...).
    """
    name = name.strip()
    if not _NAME.fullmatch(name):
        raise SecretRefused("A name is letters, digits and _ (not first a digit), at most 128: e.g. OPENAI_API_KEY.")
    if name.upper() in _RESERVED or name.upper().startswith(_RESERVED_PREFIXES):
        raise SecretRefused(f"{name} is set by the server for every agent; choose another name.")
    return name


def check_value(value: str) -> str:
    if not value.strip():
        raise SecretRefused("The value is empty.")
    if len(value) > MAX_VALUE or "\0" in value:
        raise SecretRefused(f"The value must be text of at most {MAX_VALUE:,} characters.")
    return value


def _checked(key: bytes) -> bytes:
    """``key`` if it is a Fernet key (32 bytes, URL-safe base64), as ``Fernet(key)`` checks it.

    Raises:
        ValueError: it is not.
    """
    try:
        if len(base64.urlsafe_b64decode(key)) == 32:
            return key
    except (binascii.Error, ValueError):
        pass
    raise ValueError("Fernet key must be 32 url-safe base64-encoded bytes.")


def server_key(configured: str | None, data: Path) -> bytes:
    """The server's Fernet key: from ``configured`` (``WEBCLIENT_SECRET_KEY``), else the key file in ``data``, made
    now (0600) if there is none.

    Raises:
        ValueError: the key file does not hold a key.
    """
    if configured:
        return base64.urlsafe_b64encode(hashlib.sha256(configured.encode()).digest())
    path = data / KEY_FILE
    try:
        return _checked(path.read_bytes().strip())
    except FileNotFoundError:
        pass
    data.mkdir(mode=0o700, parents=True, exist_ok=True)
    key = base64.urlsafe_b64encode(os.urandom(32))  # as Fernet.generate_key
    try:  # O_EXCL: two servers starting at once keep one key
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return _checked(path.read_bytes().strip())
    with os.fdopen(descriptor, "wb") as out:
        out.write(key + b"\n")
    return key


class Secrets:
    """The secrets of every person, in the store's ``secrets`` table, encrypted with ``key`` (a Fernet key)."""

    def __init__(self, engine: Database, key: bytes) -> None:
        self.engine = engine
        self.key = _checked(key)

    @functools.cached_property
    def _fernet(self) -> Fernet:
        from cryptography.fernet import Fernet  # here: see TYPE_CHECKING above

        return Fernet(self.key)

    async def names(self, person_id: str) -> list[tuple[str, datetime]]:
        """The person's secrets by name, with when each was set: never their values."""
        query = select(secrets.c.name, secrets.c.updated).where(secrets.c.person_id == person_id)
        async with self.engine.connect() as connection:
            rows = await connection.execute(query.order_by(secrets.c.name))
            return [(row.name, _as_utc(row.updated)) for row in rows]

    async def put(self, person_id: str, name: str, value: str) -> None:
        """Keep ``value`` as the person's ``name`` (replacing what it was).

        Raises:
            SecretRefused: a name or value that may not be kept.
        """
        name, sealed = check_name(name), self._fernet.encrypt(check_value(value).encode()).decode()
        now = datetime.now(UTC)
        mine = (secrets.c.person_id == person_id) & (secrets.c.name == name)
        async with self.engine.begin() as connection:
            changed = await connection.execute(update(secrets).where(mine).values(value=sealed, updated=now))
            if not changed.rowcount:
                values = {"person_id": person_id, "name": name, "value": sealed, "updated": now}
                await connection.execute(insert(secrets).values(**values))

    async def delete(self, person_id: str, name: str) -> bool:
        async with self.engine.begin() as connection:
            mine = (secrets.c.person_id == person_id) & (secrets.c.name == name)
            return bool((await connection.execute(delete(secrets).where(mine))).rowcount)

    async def env(self, person_id: str) -> dict[str, str]:
        """The person's secrets as their agents' environment. One the key cannot open (the key changed) is left out."""
        query = select(secrets.c.name, secrets.c.value).where(secrets.c.person_id == person_id)
        async with self.engine.connect() as connection:
            rows = list(await connection.execute(query))
        env: dict[str, str] = {}
        if not rows:
            return env  # the common case: no secrets, and no cryptography imported
        from cryptography.fernet import InvalidToken  # here: see TYPE_CHECKING above

        for name, sealed in rows:
            try:
                env[name] = self._fernet.decrypt(sealed.encode()).decode()
            except InvalidToken:  # its name only: never a value
                log.warning("the secret %s of %s cannot be opened with this server's key: left out", name, person_id)
        return env


def _as_utc(when: datetime) -> datetime:
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)  # SQLite gives them back naive
