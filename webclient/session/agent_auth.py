"""How a person signs in to an agent: the methods an agent offers, as the sign-in screen shows them.

Protocol adapters build these from what their agent says (`webclient.acp.auth` from ACP's ``authMethods``).
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass

_LOGIN_WORDS = re.compile(r"log ?in|sign ?in|browser|oauth|account|chatgpt|device", re.IGNORECASE)
"""Words of a method that signs in by itself, perhaps in a browser on the server."""


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
class AuthMethod:
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
    api_key: bool = False
    """The agent marks it as an API key's (gemini-cli's ``_meta["api-key"]``): its ``env_vars`` hold the key."""

    @property
    def button(self) -> bool:
        """Whether the client signs in with this method itself (`AgentDriver.sign_in`): only ``agent`` methods."""
        return self.type == "agent"

    @property
    def in_terminal(self) -> bool:
        """Whether it runs in the page's sign-in terminal: ``terminal`` methods (the agent's command, its ``args``)."""
        return self.type == "terminal"

    @property
    def takes_key(self) -> bool:
        """Whether it signs in with a key in the agent's environment that a person may give on the page: an
        ``env_var`` method with ``vars`` (codex-acp's ``openai-api-key``), or an ``agent`` method marked as an API
        key's. The client sends ``authenticate`` for it once its variables are set."""
        return bool(self.env_vars) and (self.type == "env_var" or (self.button and self.api_key))

    @property
    def may_open_browser(self) -> bool:
        """An ``agent`` method that names no environment variable and speaks of logging in (``Log in with Google``,
        ``ChatGPT``, ``oauth``): the agent signs in by itself, often by opening a login page in a browser on the
        machine it runs on (the server's), which a remote user cannot see. Vertex AI and the like do not."""
        words = " ".join(filter(None, (self.id, self.name, self.description)))
        return self.button and not self.env_vars and _LOGIN_WORDS.search(words) is not None

    def terminal_argv(self, argv: list[str]) -> list[str]:
        """The command of a ``terminal`` method: the agent's own command with the method's ``args`` appended."""
        return [*argv, *self.args]

    def terminal_command(self, argv: list[str]) -> str:
        """The command a person runs in a terminal on the server for a ``terminal`` method."""
        assignments = [f"{name}={shlex.quote(value)}" for name, value in self.env]
        return " ".join([*assignments, shlex.join(self.terminal_argv(argv))])


@dataclass(frozen=True, slots=True)
class Account:
    """An account or key the agent says it uses: display only (never an identifier, never logged)."""

    label: str
    detail: str | None = None
    """A second line: the e-mail, the organisation, where a key comes from."""
    active: bool = False


@dataclass(frozen=True, slots=True)
class AuthStatus:
    """Whether the agent is signed in, as it says (ACP's unstable ``auth/status``, or an agent's own form)."""

    state: str
    """``authenticated``, ``unauthenticated``, ``not_required`` or ``unknown`` (anything else is read as unknown)."""
    accounts: tuple[Account, ...] = ()

    @property
    def words(self) -> str:
        """The state as the header says it."""
        return {
            "authenticated": "Signed in",
            "unauthenticated": "Not signed in",
            "not_required": "No sign-in needed",
        }.get(self.state, "Sign-in state unknown")
