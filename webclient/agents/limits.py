"""Limits per person: how many sessions each may have live (not ended) and how many agents running at once
(``WEBCLIENT_MAX_SESSIONS_PER_PERSON``, ``WEBCLIENT_MAX_AGENTS_PER_PERSON``; 0: no limit). A new session or a
Resume past either is refused, with a message that says which limit and what to do."""

from __future__ import annotations

from collections.abc import Iterable

from webclient.config import Settings
from webclient.session.core import Session

RUNNING = ("starting", "ready", "auth-required", "signing-in")
"""The agent states of an agent that runs (a process, or a remote agent's session, that is there)."""


class LimitReached(Exception):
    """A person is at a limit: ``args[0]`` says which, for the page, answered with ``status``."""

    status = 429


class Draining(LimitReached):
    """The server is draining before it stops (`SessionManager.refusing`): no new session starts, whoever asks."""

    status = 503


def _live(session: Session) -> bool:
    return session.turns.turn_state != "ended" or session.sleeping  # asleep, it is not ended: a prompt wakes it


def _running(session: Session) -> bool:
    return _live(session) and session.lifecycle.agent_state in RUNNING


def refusal(
    settings: Settings,
    sessions: Iterable[Session],
    owner: str | None,
    starting: Session | None = None,
    listing: int = 0,
    elsewhere: tuple[int, int] = (0, 0),
) -> str | None:
    """Why ``owner`` may not start one more session or agent (``starting``: the session that would resume; it does not
    count itself), or None; ``listing``: agents of theirs running to list an agent's own sessions
    (`webclient.agents.agent_sessions`), which count as running; ``elsewhere``: their live sessions and running
    agents on the other instances of one service (`webclient.store.leases.owned_elsewhere`). Sessions of no one are
    not limited."""
    if owner is None or not (settings.max_sessions_per_person or settings.max_agents_per_person):
        return None
    theirs = [s for s in sessions if s.owner == owner and s is not starting]
    live = sum(map(_live, theirs)) + elsewhere[0]
    running = sum(map(_running, theirs)) + listing + elsewhere[1]
    most_sessions, most_agents = settings.max_sessions_per_person, settings.max_agents_per_person
    if most_sessions and live >= most_sessions:
        return (
            f"You have {live} live session{'s' * (live != 1)}, the most this server allows each person "
            f"(WEBCLIENT_MAX_SESSIONS_PER_PERSON={most_sessions}): end one to start another."
        )
    if most_agents and running >= most_agents:
        return (
            f"You have {running} agent{'s' * (running != 1)} running, the most this server allows each person "
            f"(WEBCLIENT_MAX_AGENTS_PER_PERSON={most_agents}): end a session to start another."
        )
    return None
