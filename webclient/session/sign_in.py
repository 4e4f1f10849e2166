"""How a person signs in to an agent: the methods an agent offers, as the sign-in screen shows them.

Protocol adapters build these from what their agent says (`webclient.acp.auth` from ACP's ``authMethods``).
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class EnvVar:
    """An environment variable a sign-in method needs. Its value is never read, only whether it is set."""

    name: str
    label: str | None = None
    secret: bool = True
    optional: bool = False

    @property
    def is_set(self) -> bool:
        """Whether the server's environment (which the agent inherits) has it, non-empty."""
        return bool(os.environ.get(self.name))


@dataclass(frozen=True, slots=True)
class SignInMethod:
    """One way to sign in that the agent offers."""

    id: str
    name: str
    type: str
    """``agent``, ``terminal``, ``env_var`` or the agent's own (unknown) type."""
    description: str | None = None
    env_vars: tuple[EnvVar, ...] = ()
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    """``terminal``: the arguments and environment to run the agent's command with."""
    link: str | None = None

    @property
    def button(self) -> bool:
        """Whether the client signs in with this method itself (`AgentDriver.sign_in`): only ``agent`` methods."""
        return self.type == "agent"

    def terminal_command(self, argv: list[str]) -> str:
        """The command a person runs in a terminal on the server for a ``terminal`` method."""
        assignments = [f"{name}={shlex.quote(value)}" for name, value in self.env]
        return " ".join([*assignments, shlex.join([*argv, *self.args])])
