"""The agent's own sessions: those it lists (``session/list`` in ACP), which a person may continue here, such as
a session they started in a terminal.

Listing needs the agent running: a session of theirs whose agent runs lists them; else an agent is started to
list them and stopped, one per person and agent at a time (:class:`Listings`), counted as one of their running
agents (``WEBCLIENT_MAX_AGENTS_PER_PERSON``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path

from webclient.agents.catalogue import AgentEntry
from webclient.agents.limits import LimitReached, refusal
from webclient.config import Settings
from webclient.session.agent import AgentError, AgentFactory, AgentSession
from webclient.session.agent_spec import AgentSpec
from webclient.session.core import Session

log = logging.getLogger(__name__)

LISTERS_FILE = "agents-listing.json"
"""In the data folder: which agents said they list their sessions when they last started (`Listings.known`)."""

Listed = list[AgentSession] | None
"""An agent's own sessions, or None when it does not list them."""


class CannotList(Exception):
    """The agent could not be asked for its sessions (it failed to start, refused, or took too long): the message
    says so to the user."""


def lists(entry: AgentEntry) -> bool:
    """Whether an agent may be asked for its own sessions: not the demo (it works in fresh copies only), and only
    an agent with a folder to start in."""
    return entry.template is None and (entry.workspace is not None or bool(entry.roots))


class Listings:
    """The listings under way: one agent per person and agent lists, and every request meanwhile waits for it."""

    def __init__(self, kept: Path | None = None) -> None:
        """``kept``: the file (in the data folder) keeping what each agent said across restarts; None: not kept."""
        self._under_way: dict[tuple[str | None, str], asyncio.Future[Listed]] = {}
        self._kept = kept
        self.known: dict[str, bool] = _read_known(kept) if kept is not None else {}
        """Whether each ACP agent (by name) lists its sessions, as it last said when it started here."""

    def learn(self, agent: str, lists_sessions: bool) -> None:
        """What ``agent`` said when it started, kept (a small file, written only when it changes)."""
        if self.known.get(agent) == lists_sessions:
            return
        self.known[agent] = lists_sessions
        if self._kept is not None:
            try:
                partial = self._kept.with_suffix(".partial")
                partial.write_text(json.dumps(self.known), encoding="utf-8")
                os.replace(partial, self._kept)
            except OSError:  # only a link shown for nothing: never a failed page
                log.warning("could not keep which agents list their sessions in %s", self._kept, exc_info=True)

    def offered(self, entries: Iterable[AgentEntry], sessions: Iterable[Session]) -> set[str]:
        """The agents whose own sessions the index offers: an AAP server's (v3 lists them, ``GET /sessions``), and an
        ACP agent's unless it said it does not (no ``sessionCapabilities.list``) when it last started here, live or
        in a session's journal. Before it has started here nothing is known: the link is offered, and its page says
        so if the agent does not list them (and the link goes)."""
        for session in sessions:
            hello = session.agent.hello
            if hello is not None and session.rules.agent is not None:
                self.learn(session.rules.agent, hello.lists_sessions)
        return {e.name for e in entries if lists(e) and (e.protocol == "aap" or self.known.get(e.name, True))}

    def running(self, owner: str | None) -> int:
        """Agents running now to list ``owner``'s agents' sessions."""
        return sum(who == owner for who, _ in self._under_way)

    def under_way(self, owner: str | None, agent: str) -> bool:
        return (owner, agent) in self._under_way

    async def join(self, owner: str | None, agent: str, start: Callable[[], Awaitable[Listed]]) -> Listed:
        """The listing of ``owner``'s ``agent``: the one under way, or one that ``start`` starts now."""
        key = (owner, agent)
        listing = self._under_way.get(key)
        if listing is None:
            listing = self._under_way[key] = asyncio.ensure_future(start())
            listing.add_done_callback(lambda _: self._under_way.pop(key, None))
        # Shielded: a request that goes away leaves the listing to the others (it ends, and stops its agent, alone).
        return await asyncio.shield(listing)


async def listed_for(
    entry: AgentEntry,
    owner: str | None,
    sessions: Iterable[Session],
    listings: Listings,
    agent: AgentFactory,
    probe: AgentSpec,
    settings: Settings,
) -> Listed:
    """``owner``'s sessions of the catalogue's agent ``entry``, as that agent lists them: asked of a session of theirs
    whose agent runs, else of the listing under way, else of an agent started for it as ``probe`` says (in their
    folder, with their home and secrets, sandboxed, the server's files hidden: `SessionManager.agent_spec`).

    Raises:
        CannotList: with a sentence for the user.
        LimitReached: an agent more would pass ``owner``'s limit (the message names it).
    """
    if not lists(entry):
        return None
    sessions = list(sessions)
    running = [s for s in sessions if s.owner == owner and s.rules.agent == entry.name and s.lifecycle.ready]
    if running:
        try:
            return await running[0].agent.list_sessions()
        except AgentError as error:
            raise CannotList(f"The agent {entry.name} could not list its sessions: {error}") from None
    if not listings.under_way(owner, entry.name):
        refused = refusal(settings, sessions, owner, listing=listings.running(owner))
        if refused is not None:
            raise LimitReached(refused)
    listed = await listings.join(owner, entry.name, lambda: list_agent_sessions(entry, agent, probe))
    listings.learn(entry.name, listed is not None)
    return listed


async def list_agent_sessions(entry: AgentEntry, agent: AgentFactory, probe: AgentSpec) -> list[AgentSession] | None:
    """Start the catalogue's agent ``entry`` as ``probe`` says (the person's home and secrets, so that it lists their
    sessions), ask it for its sessions, and stop it; None when it cannot list them (the demo, which works in fresh
    copies only, never lists).

    Raises:
        CannotList: with a sentence for the user.
    """
    if not lists(entry):
        return None
    session = Session(probe, agent)
    try:
        async with asyncio.timeout(entry.start_timeout):
            await session.agent.start()
            return await session.agent.list_sessions()
    except TimeoutError:
        raise CannotList(f"The agent {entry.name} did not answer within {entry.start_timeout:g} s.") from None
    except AgentError as error:
        why = str(error) or type(error).__name__
        raise CannotList(f"The agent {entry.name} could not list its sessions: {why}") from None
    finally:
        await session.agent.close()


def _read_known(kept: Path) -> dict[str, bool]:
    """What was kept in ``kept``; nothing when it is not there or not readable (it is learnt again)."""
    try:
        known = json.loads(kept.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(known, dict):
        return {}
    return {name: said for name, said in known.items() if isinstance(name, str) and isinstance(said, bool)}
