"""What can be known of the catalogue's agents before the server starts (`webclient.web.app.check_catalogue`).

A command that is not there stops the start, naming the agent, rather than failing later at New session; a remote
agent whose ``api_key_env`` variable is not set is said at start (it may be a server that needs no key).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable
from pathlib import Path

from webclient.agents.config_file import CatalogueError
from webclient.session.agent_entry import AgentEntry


def check_commands(entries: Iterable[AgentEntry], path_env: str, config: Path | None) -> None:
    """Refuse an ACP agent whose program cannot be started: a bare name not found on PATH (the entry's own PATH if
    its ``env`` sets one), an absolute path that is not an executable file. A relative path with a folder in it is
    looked up in the session's folder, known only then.

    Raises:
        CatalogueError: one line naming the file (if any), the agent and its command.
    """
    for entry in entries:
        if entry.protocol != "acp" or not entry.argv:
            continue
        program = entry.argv[0]
        search = (entry.env or {}).get("PATH", path_env)
        if os.sep not in program:
            if shutil.which(program, path=search) is None:
                raise CatalogueError(f"{_where(config, entry)}: command {program!r} is not on PATH ({search})")
        elif os.path.isabs(program) and not (os.path.isfile(program) and os.access(program, os.X_OK)):
            raise CatalogueError(f"{_where(config, entry)}: command {program!r} is not an executable file")


def start_warnings(entries: Iterable[AgentEntry]) -> list[str]:
    """Lines to print at start about agents that may not work: a remote agent's key variable that is not set."""
    return [
        f"the agent {entry.name!r}: its api_key_env variable {entry.api_key_env} is not set: "
        f"{entry.url} is asked without a key"
        for entry in entries
        if entry.api_key_env and not entry.api_key
    ]


def _where(config: Path | None, entry: AgentEntry) -> str:
    """How a refusal names the entry: the config file's agent, else ``--agent``'s (the only other one started)."""
    return f"{config}: agent {entry.name!r}" if config is not None else f"--agent (agent {entry.name!r})"
