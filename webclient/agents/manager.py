"""One class, `SessionManager`: the sessions this server runs, and how a new one gets its agent and workspace."""

from __future__ import annotations

import asyncio
import ctypes
import dataclasses
import functools
import gc
import json
import logging
import os
import secrets
import shutil
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from webclient.agents.agent_sessions import LISTERS_FILE, Listings
from webclient.agents.catalogue import AgentEntry, Catalogue, UnknownAgent, WorkspaceRefused, is_url
from webclient.agents.checkpoint_stores import checkpoint_store
from webclient.agents.folders import Chosen, FolderRecords, Folders
from webclient.agents.homes import data_folder, home_env, with_env
from webclient.agents.limits import Draining, LimitReached, refusal
from webclient.agents.sandboxing import confine
from webclient.agents.server_files import server_files
from webclient.agents.session_worktrees import (
    in_sandbox,
    journalled,
    let_go,
    make,
    starting_folder,
    worktree_folder,
)
from webclient.config import Settings
from webclient.people.person import Person
from webclient.session.agent import AgentFactory, AgentSession
from webclient.session.agent_spec import MIB, AgentSpec, RemoteLimits, split_command
from webclient.session.attribution import by_json, record_action
from webclient.session.core import Session
from webclient.session.mcp_servers import McpServer, pick
from webclient.session.person_folders import above_people, names_person
from webclient.session.prompt_queue import PromptBounds
from webclient.session.recorder import ACTION, NO_RECORDER, Recorder, SessionRecords, StoredSession
from webclient.viewmodel.events import Change, Region
from webclient.workspace.paths import Workspace
from webclient.workspace.scratch import fresh_copy
from webclient.workspace.worktrees import GitFailed, Worktree

if TYPE_CHECKING:
    from webclient.people.rules import RuleBook

log = logging.getLogger(__name__)

OwnerEnv = Callable[[str], Awaitable[Mapping[str, str]]]
"""The variables a person's agents get (by the person's id)."""

PersonMcp = Callable[[str], Awaitable[list[McpServer]]]
"""A person's own MCP servers (by the person's id; `webclient.store.mcp_servers`)."""

KeepSecret = Callable[[str, str, str], Awaitable[None]]
"""Keep a value as a person's secret: their id, its name, the value (`webclient.store.secrets.Secrets.put`)."""


def malloc_trim() -> None:
    """Hand freed heap pages back to the OS (glibc keeps them otherwise: RSS would not drop after a big session)."""
    try:  # the process's own symbols, libc's among them (`ctypes.util.find_library` would run `ldconfig -p`)
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):  # not glibc
        pass


def _agent_name(session: Session) -> str | None:
    name = session.lifecycle.agent_info.get("title") or session.lifecycle.agent_info.get("name")
    return name if isinstance(name, str) else None


def _state_recorder(session: Session, recorder: Recorder) -> Callable[[Change], None]:
    """A watcher that tells the recorder the session's state, title and agent when the header changes."""
    last: list[object] = [None]

    def changed(change: Change) -> None:
        if change is Region.STATUS:
            now = (session.shown_state, session.title, _agent_name(session), session.thread.turn)
            if now != last[0]:
                last[0] = now
                recorder.state(*now)

    return changed


class SessionManager:
    """Creates sessions, finds them by id, and stops them all when the server stops.

    Memory is bounded per session (a thread keeps ``max_entries``) and across sessions: of the sessions that
    ended, the ``max_ended_sessions`` most recent are kept (their pages still show them); older ones are
    forgotten and their pages answer 404.

    ``agent`` makes each session's agent adapter (the protocol it speaks); ``on_release`` is told the id of a
    session that ended or was forgotten, so that what others keep for it (rendered Markdown) can go too;
    ``records`` (a store) keeps each session's row and journal; ``demo_remote`` is the URL of the remote demo
    agent's server when it runs; ``rules``: everyone's permission rules.
    """

    def __init__(
        self,
        settings: Settings,
        agent: AgentFactory,
        on_release: Callable[[str], None],
        records: SessionRecords | None = None,
        demo_remote: str | None = None,
        rules: RuleBook | None = None,
        folders: FolderRecords | None = None,
    ) -> None:
        self.settings = settings
        self.catalogue = Catalogue.from_settings(settings, demo_remote=demo_remote)
        self._limits = RemoteLimits(
            event_bytes=int(settings.aap_event_mb * MIB),
            turn_bytes=int(settings.aap_turn_mb * MIB),
            turn_seconds=settings.aap_turn_minutes * 60,
            idle_seconds=settings.aap_idle_seconds,
        )
        """What a remote agent's server may send, as the settings have it."""
        self.server_files = server_files(settings, self.catalogue.files)
        """What no session's file access may reach, whatever its roots (`webclient.agents.server_files`)."""
        self.folders = Folders(folders, team=settings.auth != "token", hidden=self.server_files)
        """Whose folder a new session may work in (`webclient.agents.folders`); ``folders``: where owners are kept."""
        self.agent = agent
        self.on_release = on_release
        self.records = records
        self.rules = rules
        """Everyone's permission rules: each live session checks its owner's (`webclient.session.rules`)."""
        self.sessions: dict[str, Session] = {}
        self.listings = Listings(data_folder(settings) / LISTERS_FILE if settings.store else None)
        """Agents started to list an agent's own sessions: they count against their person's limits."""
        self._ended_at: dict[str, float] = {}
        self._reclaiming: asyncio.Task[None] | None = None
        self._scratch: list[Path] = []
        self._opening: dict[str, asyncio.Future[Session | None]] = {}
        self.owner_env: OwnerEnv | None = None
        """What a person's agents get in their environment (their secrets), for a stored session rebuilt; a new
        session is given its owner's by whoever creates it (`create`'s ``env``)."""
        self.person_mcp: PersonMcp | None = None
        """A person's own MCP servers, to give a stored session rebuilt the same servers again (None: no store)."""
        self.keep_secret: KeepSecret | None = None
        """Where a key a person gives on a session's page for its agent's sign-in is kept (None: no store)."""
        self.refusing: str | None = None
        """Why no session starts here now, whoever asks (the server drains before it stops), or None."""
        self.elsewhere: Callable[[str], Awaitable[tuple[int, int]]] | None = None
        """A person's live sessions and running agents on the other instances of one service (by their id)."""
        self.elsewhere_now: dict[str, tuple[int, int]] = {}
        """The same for the owners of this instance's sessions, as the cluster's last heartbeat counted them: what a
        Resume (which cannot wait on the database) checks."""
        self.on_created: Callable[[str], Awaitable[None]] | None = None
        """Awaited with the id of a session `start` made, before anyone is told of it (its instance's lease)."""
        self.on_forget: Callable[[str], None] | None = None
        """Told the id of a session forgotten here (another instance may then take it: `webclient.web.cluster`)."""

    async def start(
        self,
        agent_name: str | None = None,
        workspace: str | None = None,
        continuing: AgentSession | None = None,
        owner: Person | None = None,
        env: Mapping[str, str] | None = None,
        mcp_servers: Sequence[McpServer] | None = None,
        worktree: bool = False,
    ) -> Session:
        """`create`, in a folder ``owner`` may use (`webclient.agents.folders`): what a person's New session does;
        ``worktree``: in a new git worktree of the repository that folder is in (`webclient.agents.session_worktrees`).

        Raises:
            UnknownAgent: no such agent in the catalogue.
            WorkspaceRefused: a folder outside what the agent may use, or another person's (the message says whose);
                for a worktree, a folder not in a git repository (or git's own failure).
            LimitReached: see `create`; `Draining` while the server drains.
        """
        if self.refusing is not None:
            raise Draining(self.refusing)
        owner_id = owner.id if owner is not None else None
        elsewhere = await self.elsewhere(owner_id) if self.elsewhere is not None and owner_id is not None else (0, 0)
        listing = self.listings.running(owner_id)
        refused = refusal(self.settings, self.sessions.values(), owner_id, listing=listing, elsewhere=elsewhere)
        if refused is not None:  # before a folder is claimed for a session that would not start (`create`'s check)
            raise LimitReached(refused)
        if continuing is not None:
            workspace = continuing.cwd
        template = self.catalogue.get(agent_name).template
        chosen = await self.folders.choose(self.catalogue.get(agent_name), owner, workspace or "")
        scratch = None
        if chosen is None and not (workspace and workspace.strip()) and template is not None:
            scratch = await asyncio.to_thread(fresh_copy, template)  # a copy on the loop held every session 15 ms
        made, session_id = None, None
        if worktree and continuing is None:
            session_id = secrets.token_urlsafe(9)
            made, start_in = await self._worktree(agent_name, workspace or "", owner, chosen, session_id)
            chosen = Chosen(start_in, chosen.others if chosen is not None else None)
        try:
            session = self.create(
                agent_name, workspace, continuing, owner, env, chosen, scratch, session_id, made, mcp_servers
            )
        except BaseException:
            if scratch is not None:
                shutil.rmtree(scratch, ignore_errors=True)
            if made is not None:
                await let_go(session_id or "", made)
            raise
        if self.on_created is not None:
            await self.on_created(session.id)
        return session

    async def _worktree(
        self, agent_name: str | None, workspace: str, owner: Person | None, chosen: Chosen | None, session_id: str
    ) -> tuple[Worktree, Path]:
        """A new worktree for the session ``session_id`` of the repository its chosen folder is in, and the folder of
        it the agent starts in (the chosen one's place in it)."""
        entry = self.catalogue.get(agent_name).for_person(owner.id if owner is not None else None)
        if chosen is not None:
            folder = chosen.folder
        elif workspace.strip():
            folder = entry.choose(workspace, self.server_files)
        elif entry.template is not None:
            raise WorkspaceRefused(f"The agent {entry.name} works in a fresh copy of its sample, not a git repository.")
        else:
            folder = entry.workspace or Path(os.getcwd())
        try:
            made = await make(self.settings, folder, session_id, entry.name)
        except GitFailed as failed:
            raise WorkspaceRefused(str(failed)) from None
        return made, starting_folder(made, folder)

    def create(
        self,
        agent_name: str | None = None,
        workspace: str | None = None,
        continuing: AgentSession | None = None,
        owner: Person | None = None,
        env: Mapping[str, str] | None = None,
        chosen: Chosen | None = None,
        scratch: Path | None = None,
        session_id: str | None = None,
        worktree: Worktree | None = None,
        mcp_servers: Sequence[McpServer] | None = None,
    ) -> Session:
        """A new session of the catalogue's agent `agent_name` (None: the default one), its agent starting in the
        background, in the folder `workspace` the user chose (None or blank: the agent's default); `continuing`:
        one of the agent's own sessions, taken up in its folder; `owner`: the person it is for
        (None: no one's, which only admins see), whose agent runs in their own home (`webclient.agents.homes`)
        with ``env`` (their secrets) added to its environment; `chosen`: the folder `start` decided on (an admin's
        in another person's folder is put on record); `scratch`: the fresh copy of the demo's sample `start` made
        (off the event loop) for it, if that is where it works; `session_id`: its id, when `start` chose it first (for
        `worktree`, the git worktree `start` made for it in ``chosen``); `mcp_servers`: the MCP servers New session
        picked (None: the catalogue entry's; an AAP agent is given none).

        Raises:
            UnknownAgent: no such agent in the catalogue.
            WorkspaceRefused: a folder outside what the agent may use.
            LimitReached: the owner has as many sessions or agents as a person may (the message says which).
        """
        owner_id = owner.id if owner is not None else None
        refused = refusal(self.settings, self.sessions.values(), owner_id, listing=self.listings.running(owner_id))
        if refused is not None:
            raise LimitReached(refused)
        entry = self.catalogue.get(agent_name).for_person(owner_id)
        if continuing is not None:
            workspace = continuing.cwd
        if chosen is not None:
            cwd = chosen.folder
        elif workspace and workspace.strip():
            cwd = entry.choose(workspace, self.server_files)
        elif entry.template is not None:
            # The demo never works in the user's own folder: it gets a fresh copy of the sample.
            cwd = scratch or fresh_copy(entry.template)
            self._scratch.append(cwd)
        else:
            cwd = entry.workspace or Path(os.getcwd())
        spec = self.agent_spec(entry, cwd, owner_id, env or {})
        if worktree is not None:
            spec = in_sandbox(spec, worktree)
        session_id = session_id or secrets.token_urlsafe(9)
        records = self.records
        recorder = NO_RECORDER
        if records is not None:
            recorder = records.open_journal(session_id, entry.name, spec, time.time(), owner_id)
        if entry.protocol == "acp":
            spec.mcp.servers = pick(entry.mcp_servers, None) if mcp_servers is None else list(mcp_servers)
        if spec.mcp.servers:  # on record before the agent starts: a rebuilt session lists and gives the same
            record_action(recorder, "mcp_servers", owner, **spec.mcp.public())
        if chosen is not None and chosen.others is not None:  # an admin in someone's folder: on the record
            other = {"action": "other-folder", "workspace": str(cwd), "whose": chosen.others, "by": by_json(owner)}
            recorder.record(ACTION, "user", json.dumps(other))
        if worktree is not None:  # where it works, its branch and the commit it started at: rebuilt from here
            record_action(recorder, "worktree", owner, **worktree.journalled())
        session = Session(spec, self.agent, session_id, recorder)
        session.owner = owner_id
        session.worktree = worktree
        self._limit_resumes(session)
        self._keep_keys(session)
        session.thread.max_entries = self.settings.max_entries
        session.turns.queue.bounds = PromptBounds.from_settings(self.settings)
        session.sleep.configure(self.settings, entry.name)
        session.checkpoints.store = checkpoint_store(self.settings, session.id, spec.cwd, session.workspace.hidden)
        if self.records is not None:
            session.watch(_state_recorder(session, recorder))
        self.sessions[session.id] = session
        session.rules.book, session.rules.agent = self.rules, entry.name  # its owner's rules answer from now on
        self._forget_ended()
        if continuing is not None and continuing.title:
            session.rename(continuing.title)
        session.start(continuing.id if continuing is not None else None)
        return session

    def _limit_resumes(self, session: Session) -> None:
        """A Resume of ``session`` is refused while the server drains or its owner is at a limit (`agents.limits`)."""
        limited = functools.partial(refusal, self.settings, self.sessions.values(), session.owner, session)
        session.lifecycle.may_start = lambda: (
            self.refusing
            or limited(self.listings.running(session.owner), self.elsewhere_now.get(session.owner or "", (0, 0)))
        )

    def _keep_keys(self, session: Session) -> None:
        """A key given on ``session``'s page is kept as its owner's secret (their agents start with it)."""
        keep, owner = self.keep_secret, session.owner
        if keep is not None and owner is not None:
            session.lifecycle.keep_key = lambda name, value: keep(owner, name, value)

    def get(self, session_id: str) -> Session | None:
        """The session ``session_id`` if this server has it in memory (see `open` for a stored one)."""
        return self.sessions.get(session_id)

    async def open(self, session_id: str) -> Session | None:
        """The session ``session_id``: in memory, else rebuilt from the store (its agent not running), else None."""
        session = self.sessions.get(session_id)
        if session is not None or self.records is None or len(session_id) > 64:
            return session
        opening = self._opening.get(session_id)
        if opening is None:  # one rebuild, however many pages ask at once
            opening = asyncio.ensure_future(self._rebuild(session_id))
            self._opening[session_id] = opening
            opening.add_done_callback(lambda _: self._opening.pop(session_id, None))
        return await asyncio.shield(opening)

    async def _rebuild(self, session_id: str) -> Session | None:
        assert self.records is not None
        stored = await self.records.reopen(session_id)
        if stored is None:
            return None
        worktree, journal = await journalled(stored.journal)
        spec, refused = self._stored_spec(stored)
        secrets_of = self.owner_env
        owner_env = await secrets_of(stored.owner) if secrets_of is not None and stored.owner is not None else {}
        spec = confine(with_env(spec, {**home_env(self.settings, stored.owner), **owner_env}), self.settings)
        spec = dataclasses.replace(spec, hidden=self.server_files)
        if worktree is not None and stored.workspace.is_relative_to(worktree.path):
            spec = in_sandbox(spec, worktree)
        session = Session(spec, self.agent, stored.id, stored.recorder, created=stored.created)
        session.owner = stored.owner
        self._limit_resumes(session)
        self._keep_keys(session)
        session.shares = list(stored.shares)
        session.thread.max_entries = self.settings.max_entries
        session.turns.queue.bounds = PromptBounds.from_settings(self.settings)
        session.sleep.configure(self.settings, stored.agent)
        session.checkpoints.store = checkpoint_store(self.settings, session.id, spec.cwd, session.workspace.hidden)
        await session.rebuild(journal)
        await self._refill_mcp(spec, stored.owner)
        session.lifecycle.resume_refused = refused
        session.rules.book, session.rules.agent = self.rules, stored.agent  # checked from now on, not in the replay
        recorder = _state_recorder(session, stored.recorder)
        session.watch(recorder)
        recorder(Region.STATUS)  # its state now: no agent runs (a store counts it as no longer running)
        self.sessions[session.id] = session
        self._ended_at[session.id] = time.monotonic()
        self._forget_ended()
        return session  # this request shows it, even if the cap on ended sessions forgot it at once

    async def _refill_mcp(self, spec: AgentSpec, owner: str | None) -> None:
        """The MCP servers of a rebuilt session, as its journal lists them, defined again from its catalogue entry and
        its owner's own servers as they are now (their secrets are filled in when Resume opens the agent's session)."""
        if spec.mcp.complete:
            return
        mine = await self.person_mcp(owner) if self.person_mcp is not None and owner is not None else []
        spec.mcp.refill([*spec.entry.mcp_servers, *mine])

    def _stored_spec(self, stored: StoredSession) -> tuple[AgentSpec, str | None]:
        """How to start a stored session's agent again: its catalogue entry's way, in its workspace (a fresh copy of
        the sample for the demo once its copy is gone). With why it may not be: the catalogue no longer offers the
        agent, or no longer lets it work in that folder (the session is shown, never resumed)."""
        max_line_bytes = self.settings.max_line_mb * 1024 * 1024
        try:
            entry = self.catalogue.get(stored.agent)
        except UnknownAgent:
            if is_url(stored.command):
                gone = AgentEntry(stored.agent, [], url=stored.command)
                spec = AgentSpec(gone, stored.workspace, remote_limits=self._limits)
            else:
                gone = AgentEntry(stored.agent, split_command(stored.command))
                spec = AgentSpec(gone, stored.workspace, max_line_bytes=max_line_bytes)
            return spec, f"This server no longer offers the agent {stored.agent}: the session cannot be resumed."
        cwd = stored.workspace
        # Whose folder it may be was decided when it started (`webclient.agents.folders`): among everyone's.
        everyone = tuple(above_people(root) for root in entry.roots if names_person(root))
        try:
            entry = entry.for_person(stored.owner)
        except WorkspaceRefused as no_one:
            return AgentSpec(entry, cwd, max_line_bytes=max_line_bytes), str(no_one)
        if entry.template is not None:
            if not cwd.exists():  # where it was: the thread shows paths relative to it
                cwd = fresh_copy(entry.template, cwd)
                self._scratch.append(cwd)
        elif cwd.is_relative_to(worktree_folder(self.settings, stored.id)):
            pass  # its own worktree (`webclient.agents.session_worktrees`): that session's alone
        elif not Workspace((*entry.roots, *everyone), hidden=self.server_files).contains(cwd):
            refused = f"The agent {entry.name} may no longer work in {cwd}: the session cannot be resumed."
            return AgentSpec(entry, cwd, max_line_bytes=max_line_bytes, remote_limits=self._limits), refused
        return AgentSpec(entry, cwd, max_line_bytes=max_line_bytes, remote_limits=self._limits), None

    def agent_spec(self, entry: AgentEntry, cwd: Path, owner_id: str | None, env: Mapping[str, str]) -> AgentSpec:
        """How an agent of ``entry`` (as ``owner_id`` uses it) starts in ``cwd``, for a session or to list its
        sessions: the settings' limits, its person's home and ``env`` (their secrets), its sandbox, and the server's
        own files hidden from every file request it makes."""
        spec = AgentSpec(entry, cwd, max_line_bytes=self.settings.max_line_mb * MIB, remote_limits=self._limits)
        spec = confine(with_env(spec, {**home_env(self.settings, owner_id), **env}), self.settings)
        return replace(spec, hidden=self.server_files)

    async def rename(self, session_id: str, title: str) -> bool:
        """Give a session (live or stored) the user's title; False when there is no such session."""
        session = await self.open(session_id)
        if session is None:
            return False
        session.rename(title)
        return True

    async def delete(self, session_id: str) -> bool:
        """Delete a session (live or stored): the agent deletes its own if it can, the session ends, and the store
        forgets it with its journal. False when there is no such session."""
        session = await self.open(session_id)
        if session is None:
            return False
        await session.delete()
        if session.worktree is not None:  # kept while it holds uncommitted work (the log says so); the branch stays
            await let_go(session_id, session.worktree)
        self.sessions.pop(session_id, None)
        self._ended_at.pop(session_id, None)
        self.on_release(session_id)
        if self.records is not None:
            await self.records.delete(session_id)
        return True

    async def let_go(self, session_id: str) -> None:
        """Another instance runs the session from now on (`webclient.web.cluster`): stop it here, nothing of it on
        record (its journal is the other's to write), and forget it."""
        session = self.sessions.pop(session_id, None)
        self._ended_at.pop(session_id, None)
        if session is None:
            return
        self.on_release(session_id)
        await session.close()

    async def end(self, session: Session, by: Person | None = None) -> None:
        """Stop the session's agent and let go of what only a live session needs; forget old ended sessions."""
        await session.end(by)
        session.recorder.state("ended", session.title, _agent_name(session), session.thread.turn)
        self._ended_at.setdefault(session.id, time.monotonic())
        self.on_release(session.id)
        if self._forget_ended() and self._reclaiming is None:
            self._reclaiming = asyncio.create_task(self._reclaim())
        else:
            await asyncio.to_thread(malloc_trim)

    async def _reclaim(self) -> None:
        """Free forgotten sessions now: a session and its watchers form cycles, which only the collector frees, and
        only once the request that ended it has let go of it (hence the pause)."""
        try:
            await asyncio.sleep(1)
            gc.collect()
            await asyncio.to_thread(malloc_trim)
        finally:
            self._reclaiming = None

    def _forget_ended(self) -> int:
        """Keep the ``max_ended_sessions`` most recently ended sessions (an agent that exited counts as ended);
        returns how many were forgotten."""
        now = time.monotonic()
        lost = self.records is None  # a sleeping session forgotten is rebuilt from the store; without one, it is lost
        ended = [s.id for s in self.sessions.values() if s.turns.turn_state == "ended" and not (lost and s.sleeping)]
        for session_id in ended:
            self._ended_at.setdefault(session_id, now)
        ended.sort(key=lambda session_id: self._ended_at[session_id], reverse=True)
        forgotten = ended[self.settings.max_ended_sessions :]
        for session_id in forgotten:
            log.info("forgetting ended session %s (more than %d ended)", session_id, self.settings.max_ended_sessions)
            del self.sessions[session_id]
            self._ended_at.pop(session_id, None)
            self.on_release(session_id)
            if self.on_forget is not None:
                self.on_forget(session_id)
        return len(forgotten)

    async def close_all(self) -> None:
        """Stop every session's agent (the server stops). What happens meanwhile is not recorded: after a restart,
        each session shows what it showed (a turn that ran, interrupted)."""
        if self.records is not None:
            self.records.seal()
        await asyncio.gather(*(s.close() for s in self.sessions.values()), return_exceptions=True)
        for path in self._scratch:
            shutil.rmtree(path, ignore_errors=True)
