"""Each person's own home folder for their agents: logins, caches and settings an agent keeps under ``$HOME`` (and
the XDG folders) persist per person and never mix. Token mode has one person, the user: their own ``$HOME`` stays.

A folder per person under the data folder, made (0700) the first time one of their agents starts. It keeps agents
from mixing their files by accident; it is no wall between people unless the agents run in a sandbox
(``WEBCLIENT_SANDBOX=bwrap``, `webclient.agents.sandboxing`), where each sees its own person's home only. In a
sandbox token mode's one person has a home here too: the server's own home is not the agent's to see.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections.abc import Mapping
from pathlib import Path

import platformdirs

from webclient.config import Settings
from webclient.people.person import LOCAL
from webclient.session.agent_spec import AgentSpec

HOMES = "homes"
"""The folder of the data folder that holds the people's homes."""


def data_folder(settings: Settings) -> Path:
    """The server's data folder (``WEBCLIENT_DATA_DIR``, else the user's data folder, as the store finds it)."""
    return settings.data_dir or Path(platformdirs.user_data_dir("acp-webclient"))


def home_of(data: Path, person_id: str) -> Path:
    """Where ``person_id``'s home is under ``data``: a readable name, and a hash that keeps two ids apart that read
    alike (``a/b`` and ``a_b``) and an id from leaving the folder (``..``)."""
    readable = re.sub(r"[^A-Za-z0-9._-]", "_", person_id)[:60].lstrip(".") or "_"
    digest = hashlib.sha256(person_id.encode()).hexdigest()[:12]
    return data / HOMES / f"{readable}-{digest}"


def home_env(settings: Settings, owner: str | None) -> dict[str, str]:
    """The variables that give the agent of ``owner``'s session their own home (made now if need be); nothing in
    token mode without a sandbox (the user's own home) or for a session with no owner."""
    if settings.auth == "token" and settings.sandbox == "none" or owner is None:
        return {}
    data = data_folder(settings)
    _adopt_legacy_token_home(data)  # before any home is made: ``local``'s may be a person of a team's from now on
    home = home_of(data, owner)
    for folder in (home.parent, home):
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        folder.chmod(0o700)  # mkdir's mode is masked by the umask
    return {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
    }


LEGACY_TOKEN_ID = "local"
"""Token mode's person's id before migration 0004 (`webclient.people.person.LOCAL`)."""
ADOPTED = ".token-home-adopted"
"""Left in the homes' folder once token mode's home of before migration 0004 was looked for (and moved)."""


def _adopt_legacy_token_home(data: Path) -> None:
    """Once: token mode's home from when its person was ``local`` (its agents' logins) becomes the home of token
    mode's person now, so that a person of a team named ``local`` never starts in it."""
    homes = data / HOMES
    if (homes / ADOPTED).exists():
        return
    legacy, now = home_of(data, LEGACY_TOKEN_ID), home_of(data, LOCAL.id)
    if legacy.is_dir() and not now.exists():
        legacy.rename(now)
    homes.mkdir(mode=0o700, parents=True, exist_ok=True)  # a new data folder: nothing of before to move, ever
    (homes / ADOPTED).touch()


def with_env(spec: AgentSpec, extra: Mapping[str, str]) -> AgentSpec:
    """``spec`` with ``extra`` over its environment."""
    return dataclasses.replace(spec, owner_env={**spec.owner_env, **extra}) if extra else spec
