"""A session's own git worktree (`webclient.workspace.worktrees`): where it lies, its agent's sandbox, and its end.

A session started with "Work in a new worktree" works in ``<data folder>/worktrees/<session id>``, on a branch named
after it, made from the chosen repository's HEAD. The data folder is hidden from every session, but this one folder is
its session's root (`webclient.workspace.paths.Workspace` lets a root given inside a hidden folder through), and its
sandbox may write it and the repository's ``.git`` folder (where a worktree's index, refs and objects live). When the
session is deleted its worktree is removed, unless it holds uncommitted work: then it is kept, and said so in the log;
so too when the store's retention deletes the session (`RetiredWorktrees`: where the worktree is, read from the
session's journal, which the server wrote, before it goes with the session).
The branch stays either way: pushing it and opening a pull request are the person's own tools' to do.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import os
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from pathlib import Path

from webclient.agents.homes import data_folder
from webclient.config import Settings
from webclient.session.agent_spec import AgentSpec
from webclient.session.recorder import ACTION, JournalRow
from webclient.workspace import worktrees
from webclient.workspace.worktrees import Worktree

log = logging.getLogger(__name__)

WORKTREES = "worktrees"
"""The folder of the data folder that holds the sessions' worktrees."""


def worktree_folder(settings: Settings, session_id: str) -> Path:
    """Where the session ``session_id``'s worktree lies (the only folder of the data folder a session may use)."""
    return data_folder(settings) / WORKTREES / session_id


async def make(settings: Settings, folder: Path, session_id: str, label: str | None) -> Worktree:
    """A new worktree for the session ``session_id`` of the repository ``folder`` is in, on its own branch.

    Raises:
        worktrees.GitFailed: not a repository (`worktrees.NotARepository`), no commit yet, or git's own failure.
    """
    path = worktree_folder(settings, session_id)
    branch = worktrees.branch_name(session_id, label)
    made = await asyncio.to_thread(worktrees.add, folder, path, branch)
    log.info("session %s works in the worktree %s on the branch %s of %s", session_id, path, branch, made.repository)
    return made


def starting_folder(worktree: Worktree, chosen: Path) -> Path:
    """Where in ``worktree`` the agent starts: the chosen folder's place below the repository's top (a folder git
    does not track is not there: then the worktree's top)."""
    try:
        below = Path(os.path.realpath(chosen)).relative_to(os.path.realpath(worktree.repository))
    except ValueError:
        return worktree.path
    inside = worktree.path / below
    return inside if inside.is_dir() and not inside.is_symlink() else worktree.path


def in_sandbox(spec: AgentSpec, worktree: Worktree) -> AgentSpec:
    """``spec`` whose sandbox (if any) may also write the repository's ``.git`` folder: git run by the agent in its
    worktree reads and writes there."""
    if not spec.sandbox.confined:
        return spec
    sandbox = dataclasses.replace(spec.sandbox, writable=(*spec.sandbox.writable, worktree.git_folder))
    return dataclasses.replace(spec, sandbox=sandbox)


async def journalled(
    journal: AsyncIterator[Sequence[JournalRow]],
) -> tuple[Worktree | None, AsyncIterator[Sequence[JournalRow]]]:
    """The worktree a stored session works in, from its journal's first batch (it is recorded as the session is
    made), and the journal to replay, whole."""
    first = await anext(journal, None)
    found = None
    for kind, _, body in first or ():
        if kind == ACTION and '"worktree"' in body:
            action = json.loads(body)
            if action.get("action") == "worktree":
                found = Worktree.from_journal(action)
                break

    async def whole() -> AsyncIterator[Sequence[JournalRow]]:
        if first is not None:
            yield first
        async for batch in journal:
            yield batch

    return found, whole()


async def let_go(session_id: str, worktree: Worktree) -> bool:
    """The session is deleted: remove its worktree (then prune), unless it has uncommitted work; whether it went."""
    return await asyncio.to_thread(_let_go, session_id, worktree)


def _let_go(session_id: str, worktree: Worktree) -> bool:
    try:
        removed = worktrees.remove(worktree)
    except worktrees.GitFailed as failed:
        log.warning("session %s: its worktree %s could not be removed: %s", session_id, worktree.path, failed)
        return False
    if not removed:
        log.warning(
            "session %s deleted: its worktree %s (branch %s) has uncommitted work and is kept",
            session_id, worktree.path, worktree.branch,
        )  # fmt: skip
    return removed


JournalOf = Callable[[str], AsyncGenerator[Sequence[JournalRow], None]]
"""The start of a stored session's journal, read without reopening it (`webclient.store.store.Store.journal_start`)."""


class RetiredWorktrees:
    """The worktrees of the sessions the store's retention deletes, let go of as a deleted session's (`let_go`):
    `deleting` reads where each one is from the session's journal before it goes with the session, `deleted` (in a
    thread, after) removes the clean ones and logs the kept ones."""

    def __init__(self, settings: Settings, journal_of: JournalOf) -> None:
        self.settings = settings
        self.journal_of = journal_of
        self._found: dict[str, Worktree] = {}

    async def deleting(self, session_ids: Sequence[str]) -> None:
        found: dict[str, Worktree] = {}
        for session_id in session_ids:
            journal = self.journal_of(session_id)
            try:
                worktree, _ = await journalled(journal)
            finally:
                await journal.aclose()
            # Only the session's own folder of ours: never a folder a journal record would name elsewhere.
            if worktree is not None and worktree.path == worktree_folder(self.settings, session_id):
                found[session_id] = worktree
        self._found = found

    def deleted(self, session_ids: Sequence[str]) -> None:
        for session_id in session_ids:
            worktree = self._found.pop(session_id, None)
            if worktree is not None:
                _let_go(session_id, worktree)
