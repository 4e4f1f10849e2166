"""How to start an agent, and what it may do through the client."""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from webclient.workspace.paths import Access
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
    """The agent's command line and working directory, and the powers the client gives it."""

    argv: list[str]
    cwd: Path
    env: Mapping[str, str] | None = field(default=None, repr=False)
    """Variables over the server's environment: the catalogue's, the owner's home and secrets (never shown)."""
    given_env: dict[str, str] = field(default_factory=dict, repr=False)
    """Variables a person gave on the page for a sign-in method (a key, kept as their secret too), over ``env``:
    the one mutable part, shared by everyone who holds this spec, so the agent's next start has them."""
    extra_roots: tuple[Path, ...] = ()
    """Directories besides ``cwd`` the agent may read and write through the client."""
    file_access: Access = "read-write"
    terminals: bool = True
    start_timeout: float = 120.0
    """Seconds the agent has to answer ``initialize`` and ``session/new``."""
    max_line_bytes: int = 64 * 1024 * 1024
    """A longer message from the agent is dropped as it streams."""
    acp_protocol: int = 1
    """The ACP version the client asks for in ``initialize`` (1, or 2 for the v2 draft); it speaks what the agent
    answers."""
    url: str | None = None
    """A remote agent's AAP server (then ``argv`` is empty)."""
    remote_agent: str | None = None
    """Which of the AAP server's agents; None when it has only one."""
    api_key: str | None = field(default=None, repr=False)
    """Sent to the AAP server as ``Authorization: Bearer``; never shown, never logged (hence no repr)."""
    remote_options: Mapping[str, str] | None = None
    """Values for the remote agent's options (its defaults otherwise)."""
    remote_limits: RemoteLimits = RemoteLimits()
    network: bool | None = None
    """Whether the agent has the network in a sandbox (the catalogue's ``network``); None: the server's default."""
    sandbox_read: tuple[Path, ...] = ()
    """More folders the agent may read in a sandbox (the catalogue's ``sandbox_read``)."""
    sandbox: Sandbox = UNCONFINED
    """Where its processes run (`webclient.session.sandboxing.confine` makes it, once its home is known)."""
    hidden: tuple[Path, ...] = ()
    """The server's own files (data folder, config, registry): refused to every file request, whatever the roots."""

    @property
    def agent_env(self) -> dict[str, str]:
        """What the agent's processes get over the server's environment: ``env``, then ``given_env``."""
        return {**(self.env or {}), **self.given_env}


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
