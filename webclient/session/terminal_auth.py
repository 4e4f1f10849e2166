"""A ``terminal`` sign-in, run in the page: the agent's own command with the method's arguments, on a pty.

Agents that sign in through their own interactive program (claude-agent-acp's ``claude-login``, most agents of
the ACP registry) offer a ``terminal`` method. The client runs the agent's command (the catalogue's argv of this
session's agent) with the method's ``args`` appended and its ``env`` added, in the session's folder with the
agent's environment, on a pseudo-terminal whose screen and keyboard are a terminal in the page
(``static/js/sign-in-terminal.js`` over the route ``sign_in_terminal``). When the command exits 0 the agent is
started again (``initialize``, ``session/new``); otherwise the page shows how it ended and the methods again.

One terminal per session at most: a new one replaces the last; it is stopped (its whole process group) when the
person closes it, the session ends or the server stops. What it shows is never journalled (a code typed, a
token printed): after a restart the session asks for a sign-in again if the agent still wants one.
"""

from __future__ import annotations

import asyncio
import os
import secrets

from webclient.session.agent_auth import AuthMethod
from webclient.session.agent_spec import AgentSpec
from webclient.workspace.interactive_pty import InteractivePty
from webclient.workspace.terminal_process import ExitStatus

__all__ = ["AuthTerminal"]


class AuthTerminal:
    """The session's sign-in terminal: the method it runs, its pty, and a key that names this run to the page."""

    def __init__(self, method: AuthMethod, pty: InteractivePty) -> None:
        self.method = method
        self.pty = pty
        self.key = secrets.token_urlsafe(6)
        """Tells this run from the one before it, so the page starts a fresh terminal for a new run."""

    @classmethod
    async def start(cls, method: AuthMethod, spec: AgentSpec) -> AuthTerminal:
        """Run the method's command for the agent of ``spec``.

        Raises:
            OSError: it could not be started (the message says why).
        """
        # The server's variables under the agent's: all but its own settings, or in a sandbox only its allow-list.
        env = spec.sandbox.environment(os.environ, {**spec.agent_env, **dict(method.env)})
        argv = method.terminal_argv(list(spec.entry.argv))
        pty = await InteractivePty.start(argv, cwd=spec.cwd, env=env, sandbox=spec.sandbox)
        return cls(method, pty)

    @property
    def command_line(self) -> str:
        return self.pty.command_line

    @property
    def exit_status(self) -> ExitStatus | None:
        return self.pty.exit_status

    @property
    def running(self) -> bool:
        return self.pty.exit_status is None

    @property
    def ended_how(self) -> str | None:
        """How the command ended, in words, or None while it runs."""
        status = self.pty.exit_status
        if status is None:
            return None
        if status.exit_code is not None:
            return f"exit code {status.exit_code}"
        return f"signal {status.signal}"

    async def wait(self) -> ExitStatus:
        return await asyncio.shield(self.pty.exited)  # a cancelled waiter must not cancel the watch

    async def close(self) -> None:
        await self.pty.close()
