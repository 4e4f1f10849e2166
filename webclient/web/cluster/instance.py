"""One class, `ClusterInstance`: this instance among the others on one PostgreSQL, and the leases it holds.

Each live session is run by exactly one instance, the holder of its lease (`webclient.store.leases`): it holds the
agent and the live view, and writes the journal. A request for a session goes to its holder (`forwarding`); a
session nobody holds is taken by the instance a request reaches (or, when it stops taking sessions, by the least
loaded other one).

- **Heartbeat** every `RENEW` seconds: renews this instance's leases (for `TTL` seconds), says how loaded it is, and
  learns of the others. A lease that was not renewed (another instance took it: this one had lost the database) is
  let go at once: its agent stopped here, nothing more of it written.
- **Watchdog**: an instance that has not renewed for `SELF_STOP` seconds (less than `TTL`) stops every agent it runs
  before its leases can expire, so that two agents never run for one session, even across a partition.
- **Failover**: after each heartbeat, sessions whose holder's lease expired while their agent ran (its instance died)
  are taken, a few per beat, by whichever instance gets there first: rebuilt from the journal, their agent resumed at
  once when a turn was under way, else when someone opens them (they show as sleeping).
- **Drain** (`SIGTERM`): each idle session is put to sleep and handed over (its lease released: the next instance a
  request reaches starts its agent on demand); turns under way finish first, up to the deadline.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import time
from collections.abc import Awaitable, Callable, Collection
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from webclient.session.attribution import record_action
from webclient.session.core import Session
from webclient.store import leases
from webclient.store.leases import LIVE_STATES, MID_TURN, Held, Instance, Taken
from webclient.web.access.instance_proof import IDENTITY

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncEngine

    from webclient.store.journal import JournalWriter

log = logging.getLogger(__name__)

TTL = 8.0
"""Seconds a lease lasts unless renewed: how long a dead instance's sessions wait before another takes them."""
RENEW = 2.0
"""Seconds between heartbeats."""
SELF_STOP = 6.0
"""Seconds without a renewal after which an instance stops its agents: before `TTL`, with room for clocks to differ."""
TAKE_PER_BEAT = 5
"""Orphaned sessions one instance takes per heartbeat: the survivors share a dead instance's sessions."""


class Sessions(Protocol):
    """What the cluster needs of the session registry (`webclient.agents.manager.SessionManager`)."""

    sessions: dict[str, Session]
    elsewhere_now: dict[str, tuple[int, int]]

    async def open(self, session_id: str) -> Session | None: ...

    async def let_go(self, session_id: str) -> None: ...


def resident_bytes(pid: int | str = "self") -> int:
    """The resident memory of a process and of every process under it (this server: its agents and what they
    started), from /proc; 0 where there is none."""
    page = os.sysconf("SC_PAGE_SIZE")
    total, waiting = 0, [str(pid)]
    while waiting and len(waiting) < 10_000:
        process = waiting.pop()
        with contextlib.suppress(OSError, ValueError, IndexError):
            total += int(Path(f"/proc/{process}/statm").read_text().split()[1]) * page
            for task in Path(f"/proc/{process}/task").iterdir():
                waiting += (task / "children").read_text().split()
    return total


class ClusterInstance:
    """This instance's id and address, the leases it holds, and the loops that keep them."""

    def __init__(
        self,
        engine: AsyncEngine,
        writer: JournalWriter,
        sessions: Sessions,
        address: str | None,
        labels: Collection[str] = (),
    ) -> None:
        self.engine = engine
        self.writer = writer
        self.sessions = sessions
        self.id = secrets.token_hex(8)
        self.address = address
        """Where the others reach this instance (``WEBCLIENT_INSTANCE_URL``); None: they cannot."""
        self.labels = frozenset(labels)
        """What it offers (``WEBCLIENT_INSTANCE_LABELS``): an agent that asks for labels runs where they all are."""
        self.labels_of: Callable[[str | None], Collection[str]] = lambda agent: ()
        """The labels a catalogue agent asks for (by its name; None: the default agent)."""
        self.held: set[str] = set()
        """Sessions whose lease this instance holds."""
        self.instances: list[Instance] = []
        """The instances alive at the last heartbeat, this one included."""
        self.draining = False
        self.renewed = time.monotonic()
        """When the last heartbeat that renewed the leases began."""
        self._loops: list[asyncio.Task[None]] = []
        self._releasing: set[asyncio.Task[None]] = set()
        self._taking: dict[str, asyncio.Future[Session | None]] = {}
        self._unopened: set[str] = set()
        self.on_moved: Callable[[str], Awaitable[None]] | None = None
        """Awaited with the id of a session this instance let go of (its pages' sockets close, to reconnect)."""
        self.ask_address: Callable[[str], Awaitable[str | None]] | None = None
        """Which instance answers at an address (its id, from ``/healthz``), or None: none answered."""
        self.here = asyncio.Event()
        """Set once this instance found itself at its own address (`_finding_itself`)."""

    async def start(self) -> None:
        await leases.register(self.engine, self.id, self.address, self.labels)
        self.writer.sink.fence, self.writer.sink.lease_seconds = self.id, TTL
        self.renewed = time.monotonic()
        self._loops = [
            asyncio.create_task(self._beating(), name="cluster heartbeat"),
            asyncio.create_task(self._watching(), name="cluster watchdog"),
            asyncio.create_task(self._finding_itself(), name="cluster address"),
        ]
        log.info("instance %s at %s: one of the instances on this store", self.id, self.address or "no address")

    async def close(self) -> None:
        """The server stops, its agents stopped: every lease goes, for the next instance a request reaches."""
        for task in self._loops:
            task.cancel()
        await asyncio.gather(*self._loops, *self._releasing, return_exceptions=True)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(leases.release(self.engine, self.id), RENEW)
        self.held.clear()

    @property
    def identity(self) -> dict[str, str]:
        """What ``/healthz`` says of this instance: its id."""
        return {IDENTITY: self.id}

    async def _finding_itself(self) -> None:
        """Ask who answers at this instance's address, once it listens: itself, so any instance registered there
        before is this one before a restart (its leases go, `leases.forget_earlier`); another one, a mistake said
        in the log (two instances given one address), and nothing is taken from it."""
        address, ask = self.address, self.ask_address
        if address is None or ask is None:
            return
        for _ in range(100):  # ten seconds: the server starts listening once its lifespan has started
            with contextlib.suppress(Exception):
                answered = await ask(address)
                if answered == self.id:
                    gone = await leases.forget_earlier(self.engine, self.id, address)
                    if gone:
                        log.info(
                            "instance %s: %d sessions of this address before its restart are stopped", self.id, gone
                        )
                    self.here.set()
                    return
                if answered is not None:
                    log.error(
                        "instance %s: %s reaches another instance (%s): give each instance its own "
                        "WEBCLIENT_INSTANCE_URL",
                        self.id,
                        address,
                        answered,
                    )
                    return
            await asyncio.sleep(0.1)
        log.error("instance %s: nothing answers at %s: set WEBCLIENT_INSTANCE_URL to this instance's", self.id, address)

    # -- which instance runs a session -------------------------------------------------------------------------

    async def holder(self, session_id: str) -> Held | None:
        """Who runs ``session_id``: None for this instance (it holds the lease, or took it now, the session rebuilt),
        else the instance that does. A session nobody holds is taken here, unless this instance drains: then by the
        instance it is sent to (`Held`). An unknown session is this instance's to answer 404 for."""
        if session_id in self.held and session_id in self.sessions.sessions:
            return None
        if self.draining and session_id not in self.held:
            other = await self.elsewhere()
            if other is not None:
                return Held(other.id, other.address)
        for _ in range(3):
            try:
                got = await leases.take(self.engine, session_id, self.id, TTL)
            except Exception:  # noqa: BLE001 - locked by an instance cut off mid-write, or the database is away
                log.warning("session %s: its lease could not be read now", session_id, exc_info=True)
                return Held("", None)  # nobody to send it to yet: the page is asked to try again
            if isinstance(got, Held):
                if got.address is not None and got.address == self.address and not self.here.is_set():
                    # Held at this very address: by this instance before a restart, once it has found itself here.
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self.here.wait(), 3)
                    if self.here.is_set():
                        continue
                return got
            if isinstance(got, Taken):
                self.held.add(session_id)
                await self._taken(session_id, got)
                return None
            if session_id in self.held:
                return None
        return None  # no such session (or lost three races in a row): answered here

    async def claim_new(self, session_id: str) -> None:
        """A session made here: once its row and lease are written (by the journal writer, in one transaction),
        another instance asked for it forwards to this one, rather than answering 404."""
        await self.writer.flush_sessions()
        self.held.add(session_id)

    async def owned_elsewhere(self, owner: str) -> tuple[int, int]:
        """A person's live sessions and running agents on the other instances (`webclient.agents.limits`)."""
        return await leases.owned_elsewhere(self.engine, self.id, owner)

    def forgotten(self, session_id: str) -> None:
        """The registry forgot the session: its lease goes (in the background), for whoever needs it next."""
        if session_id in self.held:
            self.held.discard(session_id)
            task = asyncio.create_task(self._release([session_id]), name="release a lease")
            self._releasing.add(task)
            task.add_done_callback(self._releasing.discard)

    async def elsewhere(self, agent: str | None = None) -> Instance | None:
        """Where a new session of ``agent`` goes when not here: among the other instances that take sessions and
        offer every label the agent asks for, the least loaded, if this one lacks a label, drains, or runs at least
        two agents more; None: this one. Load is the sessions whose agent runs, as the leases say now, then the
        memory of the instance and its agents, as its last heartbeat said."""
        wanted = set(self.labels_of(agent))
        ready = [i for i in self.instances if not i.draining and i.address and i.id != self.id and wanted <= i.labels]
        if not ready:
            if not wanted <= self.labels:
                log.warning("no instance offers %s for the agent %s: it runs here", sorted(wanted), agent)
            return None
        try:
            load = await leases.running(self.engine)
        except Exception:  # noqa: BLE001 - the database is away: this one takes it, and says so when it cannot
            return None
        best = min(ready, key=lambda instance: (load.get(instance.id, 0), instance.memory))
        if self.draining or not wanted <= self.labels or load.get(best.id, 0) + 1 < load.get(self.id, 0):
            return best
        return None

    # -- taking a session up -------------------------------------------------------------------------------------

    async def _taken(self, session_id: str, taken: Taken) -> None:
        """Just took the lease: the session's agent runs nowhere. If it ran when another instance's lease on it
        expired (its stored state says so), take it up here: rebuilt now, resumed at once mid-turn, else when a page
        opens it. A session with no lease at all is as after a restart: shown stopped until someone resumes it."""
        if taken.before is None or taken.state not in LIVE_STATES:
            return
        opening = self._taking.get(session_id)
        if opening is None:
            opening = asyncio.ensure_future(self._take_up(session_id, taken))
            self._taking[session_id] = opening
            opening.add_done_callback(lambda _: self._taking.pop(session_id, None))
        await asyncio.shield(opening)

    async def _take_up(self, session_id: str, taken: Taken) -> Session | None:
        session = await self.sessions.open(session_id)
        if session is None or session.lifecycle.resume_refused is not None:
            return session
        where = f"the instance at {taken.before}"
        detail = f"The instance that ran it ({where}) stopped; this one ({self.id}) took it up from its journal."
        if not session.spec.cwd.is_dir():  # local disks: the files stayed on the other machine
            detail += f" Its files were on {where}, not here: {session.spec.cwd} is missing on this instance."
        session.shown.notice("warning", "The session moved to another instance", detail)
        log.warning("session %s: taken over from %s (it was %s)", session_id, where, taken.state)
        if taken.state in MID_TURN:
            session.resume()
        else:  # as if it slept: a page opened wakes it, a prompt too
            record_action(session.recorder, "sleep", None)
            session.lifecycle.sleeping = True
        return session

    # -- the loops -----------------------------------------------------------------------------------------------

    def _agents(self) -> int:
        stopped = ("stopped", "exited", "failed")
        return sum(1 for s in self.sessions.sessions.values() if s.lifecycle.agent_state not in stopped)

    async def _beating(self) -> None:
        while True:
            began, holding = time.monotonic(), set(self.held)
            try:
                memory = await asyncio.to_thread(resident_bytes)  # /proc of every agent: off the loop
                held, self.instances = await asyncio.wait_for(
                    leases.heartbeat(self.engine, self.id, TTL, self.draining, self._agents(), memory), RENEW * 2
                )
            except Exception as error:  # noqa: BLE001 - the database is away: the watchdog acts, the beat tries again
                log.warning("instance %s: heartbeat failed (%s)", self.id, error.__class__.__name__)
            else:
                self.renewed = began
                lost = (holding - held) & self.held  # a lease taken during the beat was not in it
                if lost:
                    await self._lose(lost)
                # Taken for a request that then did not open the session (it was not the person's to see): let go.
                unopened = self.held - self.sessions.sessions.keys() - self._taking.keys()
                if unopened & self._unopened:
                    self.held -= unopened & self._unopened
                    await self._release(sorted(unopened & self._unopened))
                self._unopened = unopened
                if not self.draining:
                    await self._adopt_orphans()
                await self._count_owners_elsewhere()
            await asyncio.sleep(max(0.0, RENEW - (time.monotonic() - began)))

    async def _watching(self) -> None:
        while True:
            await asyncio.sleep(RENEW / 4)
            if self.held and time.monotonic() - self.renewed > SELF_STOP:
                log.error(
                    "instance %s: no heartbeat for %g s, stopping the agents of its %d sessions",
                    self.id,
                    SELF_STOP,
                    len(self.held),
                )
                await self._lose(set(self.held))

    async def _lose(self, session_ids: set[str]) -> None:
        """Leases this instance no longer holds (or may no longer count on): stop those sessions here, unrecorded."""
        self.held -= session_ids
        for session_id in session_ids:
            self.writer.let_go(session_id)
            await self.sessions.let_go(session_id)
            self.writer.let_go(session_id)  # what its closing recorded
            await self._moved(session_id)

    async def _moved(self, session_id: str) -> None:
        if self.on_moved is not None:
            with contextlib.suppress(Exception):
                await self.on_moved(session_id)

    async def _count_owners_elsewhere(self) -> None:
        """What the owners of this instance's sessions have on the others, for a Resume's limits (`Sessions`)."""
        owners = {s.owner for s in self.sessions.sessions.values() if s.owner is not None}
        with contextlib.suppress(Exception):
            self.sessions.elsewhere_now = await leases.owners_elsewhere(self.engine, self.id, owners)

    async def _adopt_orphans(self) -> None:
        try:
            orphans = await leases.orphans(self.engine, TAKE_PER_BEAT)
        except Exception:  # noqa: BLE001 - the next beat looks again
            return
        for session_id in orphans:
            with contextlib.suppress(Exception):
                await self.holder(session_id)

    async def _release(self, session_ids: list[str]) -> None:
        with contextlib.suppress(Exception):
            await leases.release(self.engine, self.id, session_ids)

    # -- drain -------------------------------------------------------------------------------------------------

    async def hand_over_idle(self) -> int:
        """Hand over every session with no turn under way (its idle agent put to sleep first); how many are left."""
        self.draining = True
        left = 0
        for session_id in [s for s in self.held if s in self.sessions.sessions]:
            session = self.sessions.sessions[session_id]
            state = session.shown_state
            if state in MID_TURN or state == "starting":
                left += 1
                continue
            if state in LIVE_STATES and not await session.sleep_now():
                left += 1
                continue
            await self.writer.flush()
            self.held.discard(session_id)
            await self._release([session_id])
            await self.sessions.let_go(session_id)
            self.writer.let_go(session_id)
            await self._moved(session_id)
        return left
