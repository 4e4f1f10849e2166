"""The agent's own sessions: those it lists (``session/list`` in ACP), which a person may continue here, such as
a session they started in a terminal."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

from webclient.config import Settings
from webclient.session.agent import AgentError, AgentFactory, AgentSession
from webclient.session.catalogue import AgentEntry
from webclient.session.core import Session
from webclient.session.homes import with_env
from webclient.session.sandboxing import confine


class CannotList(Exception):
    """The agent could not be asked for its sessions (it failed to start, refused, or took too long): the message
    says so to the user."""


async def list_agent_sessions(
    entry: AgentEntry,
    agent: AgentFactory,
    max_line_bytes: int,
    env: Mapping[str, str] | None = None,
    settings: Settings | None = None,
) -> list[AgentSession] | None:
    """Start the catalogue's agent ``entry`` in its default folder (with ``env``: the person's home and secrets, so
    that it lists their sessions; in the sandbox ``settings`` ask for), ask it for its sessions, and stop it; None
    when it cannot list them (the demo, which works in fresh copies only, never lists).

    Raises:
        CannotList: with a sentence for the user.
    """
    if entry.template is not None or entry.workspace is None and not entry.roots:
        return None
    cwd = entry.workspace or entry.roots[0]
    spec = with_env(entry.spec(cwd, max_line_bytes=max_line_bytes), env or {})
    probe = Session(confine(spec, settings) if settings is not None else spec, agent)
    try:
        async with asyncio.timeout(entry.start_timeout):
            await probe.agent.start()
            return await probe.agent.list_sessions()
    except TimeoutError:
        raise CannotList(f"The agent {entry.name} did not answer within {entry.start_timeout:g} s.") from None
    except AgentError as error:
        why = str(error) or type(error).__name__
        raise CannotList(f"The agent {entry.name} could not list its sessions: {why}") from None
    finally:
        await probe.agent.close()
