"""How a session starts its agent: the catalogue's entry, in a folder, for a person, within the server's limits."""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from webclient.session.agent_entry import AgentEntry
from webclient.session.mcp_servers import McpServers
from webclient.workspace.sandbox import UNCONFINED, Sandbox

MIB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class RemoteLimits:
    """What a remote agent's server may send (``WEBCLIENT_AAP_*``): an AAP server is as untrusted as an agent.
    Each ends the turn (or the request) with a notice naming its setting, and drops the connection."""

    event_bytes: int = 8 * MIB
    """One event of a turn's stream, or one plain JSON answer (``GET /meta``, ``POST /sessions``)."""
    turn_bytes: int = 64 * MIB
    """One turn's stream in all (and a ``stream: "none"`` turn's or a history's answer)."""
    turn_seconds: float = 3600.0
    """How long one turn's stream may last."""
    idle_seconds: float = 300.0
    """How long a stream (or any answer) may stay quiet: the model may think a while, never forever."""


@dataclass(frozen=True, slots=True)
class AgentSpec:
    """One agent as a session starts it: its catalogue entry (command line, powers, remote server) and what the
    session adds, where it works and for whom."""

    entry: AgentEntry
    cwd: Path
    owner_env: Mapping[str, str] = field(default_factory=dict, repr=False)
    """Variables over the entry's: the owner's home and secrets (never shown)."""
    given_env: dict[str, str] = field(default_factory=dict, repr=False)
    """Variables a person gave on the page for an authentication method (a key, kept as their secret too), over ``env``:
    the one mutable part, shared by everyone who holds this spec, so the agent's next start has them."""
    max_line_bytes: int = 64 * 1024 * 1024
    """A longer message from the agent is dropped as it streams."""
    remote_limits: RemoteLimits = RemoteLimits()
    sandbox: Sandbox = UNCONFINED
    """Where its processes run (`webclient.agents.sandboxing.confine` makes it, once its home is known)."""
    hidden: tuple[Path, ...] = ()
    """The server's own files (data folder, config, registry): refused to every file request, whatever the roots."""
    mcp: McpServers = field(default_factory=McpServers)
    """The MCP servers New session picked for it (`webclient.session.mcp_servers`), and those its agent was not given;
    mutable, like ``given_env``: a rebuilt session's are read back from the journal."""

    @property
    def env(self) -> dict[str, str]:
        """Variables over the server's environment: the catalogue's, then the owner's home and secrets."""
        return {**(self.entry.env or {}), **self.owner_env}

    @property
    def agent_env(self) -> dict[str, str]:
        """What the agent's processes get over the server's environment: ``env``, then ``given_env``."""
        return {**self.env, **self.given_env}


def split_command(command: str) -> list[str]:
    """Split a shell-like command line (``--agent "COMMAND ARGS"``) into argv, POSIX quoting rules.

    Raises:
        ValueError: unbalanced quotes, or nothing but whitespace.
    """
    argv = shlex.split(command)
    if not argv:
        raise ValueError("empty agent command")
    return argv


def command_display(command: str, args: list[str]) -> str:
    """A command line as a person reads it: a long inline script (``python -c ...``) is summarised."""
    shown = []
    for arg in [command, *args]:
        if len(arg) > 80 or "\n" in arg:
            lines = arg.count("\n") + 1
            arg = f"<{lines} lines>" if lines > 1 else f"{arg[:60]}…"
        shown.append(arg)
    return shlex.join(shown)
