"""Whose folder a new session may work in, in a team: a person's folders are theirs.

An agent's folders (its ``workspace`` and ``extra_roots``) either name ``{person}`` (`webclient.session.
person_folders`): each person works in their own folder, made on first use; or they are shared roots, where a folder
below the root belongs to the first person who started a session in it (kept in the store, so a restart changes
nothing). A person may start a session in:

- a folder of their own (their ``{person}`` folder, one they own under a shared root, or anything inside those);
- a shared root itself, or a folder no one owns yet under it (which becomes theirs), unless it holds someone's folder;
- the folder of a session shared with them (or one of their groups) to **drive**, and anything inside it; watching a
  session lets no one start an agent in its folder;
- as an admin, anywhere the agent may work: allowed, and put on record (the session's audit log, the server log).

Anything else, another person's folder or a folder that holds one, is refused with a sentence saying whose it is.
Token mode has one person: nothing here applies (`Folders.team` is off).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from webclient.people.person import Person
from webclient.session.agent_entry import AgentEntry, WorkspaceRefused, folder_in
from webclient.session.person_folders import above_people, names_person
from webclient.workspace.paths import Workspace

log = logging.getLogger(__name__)


class FolderRecords(Protocol):
    """Where folders' owners are kept (the store: `webclient.store.folders`)."""

    async def folder_owners(self) -> dict[str, str]: ...

    async def claim_folder(self, path: str, owner: str) -> str: ...

    async def driven_workspaces(self, person_id: str, groups: Collection[str]) -> list[str]: ...


@dataclass(frozen=True, slots=True)
class Chosen:
    """The folder a new session works in, and whose it is when an admin chose someone else's (None: their own)."""

    folder: Path
    others: str | None = None


class Folders:
    """Decides whose folder a new session may work in (see the module's docstring).

    Args:
        records: where the owners are kept; None keeps them in memory (a server without a store).
        team: whether people sign in (off in token mode: its one person owns everything).
        hidden: the server's own files (`webclient.agents.server_files`): never a session's folder.
    """

    def __init__(self, records: FolderRecords | None, team: bool, hidden: Sequence[Path] = ()) -> None:
        self.records = records
        self.team = team
        self.hidden = tuple(hidden)
        self._owners: dict[Path, str] | None = None

    async def choose(self, entry: AgentEntry, person: Person | None, chosen: str) -> Chosen | None:
        """The folder ``person`` may start a session of ``entry`` in, from what they typed (blank: the agent's
        default); None when there is nothing to decide here (token mode, no person, the demo's fresh copy).

        Raises:
            WorkspaceRefused: with a sentence for the person (whose folder it is, which is theirs).
        """
        if not self.team or person is None:
            return None
        own = entry.for_person(person.id)
        if not chosen.strip():
            if own.template is not None:
                return None  # a fresh copy of the sample: no one's folder
            chosen = str(own.workspace or os.getcwd())
        # Chosen among the person's own folders, and those that hold everyone's {person} folders (which the checks
        # below then refuse unless a share or being an admin allows them).
        above = tuple(above_people(root) for root in entry.roots if names_person(root))
        folder = folder_in(own, chosen, (*own.roots, *above), self.hidden)
        mine = [root for root, given in zip(own.roots, entry.roots, strict=True) if names_person(given)]
        if mine and Workspace(mine).contains(folder):
            return Chosen(folder)
        under_people = [base for base in above if folder.is_relative_to(base)]
        if under_people:
            return await self._of_someone(folder, person, under_people[0], own)
        return await self._under_shared_root(folder, person, own.roots)

    async def _of_someone(self, folder: Path, person: Person, base: Path, own: AgentEntry) -> Chosen:
        """A folder among everyone's ``{person}`` folders that is not ``person``'s own."""
        whose = folder.relative_to(base).parts[0] if folder != base else None
        if await self._shared_to_drive(folder, person):
            return Chosen(folder)
        if person.admin:
            return self._on_record(folder, person, whose or "everyone's")
        yours = own.workspace or (own.extra_roots[0] if own.extra_roots else base)
        if whose is None:
            raise WorkspaceRefused(f"The workspace {folder} holds other people's folders: yours is {yours}.")
        raise WorkspaceRefused(f"The workspace {folder} is another person's folder: yours is {yours}.")

    async def _under_shared_root(self, folder: Path, person: Person, roots: Sequence[Path]) -> Chosen:
        """A folder under a shared root: its owner's, or one that holds someone's, or no one's yet (then theirs)."""
        owners = await self._known_owners()
        others = sorted((path, owner) for path, owner in owners.items() if owner != person.id)
        inside = [(path, owner) for path, owner in others if folder.is_relative_to(path)]
        holds = [(path, owner) for path, owner in others if path.is_relative_to(folder) and path != folder]
        if inside and not await self._shared_to_drive(folder, person):
            path, owner = inside[-1]
            if not person.admin:
                raise WorkspaceRefused(
                    f"The workspace {folder} is {owner}'s folder ({path}): start your sessions in one of your own."
                )
            return self._on_record(folder, person, owner)
        if holds:
            path, owner = holds[0]
            if not person.admin:
                raise WorkspaceRefused(
                    f"The workspace {folder} holds {owner}'s folder {path}: choose a folder of your own inside it."
                )
            return self._on_record(folder, person, owner)
        if (
            inside
            or folder in roots
            or any(folder.is_relative_to(path) for path, o in owners.items() if o == person.id)
        ):
            return Chosen(folder)  # a shared session's folder, the shared root itself, or inside one of theirs
        first = await self._claim(folder, person.id)
        if first != person.id:  # someone else's a moment before (another server on the same store)
            raise WorkspaceRefused(
                f"The workspace {folder} is {first}'s folder: start your sessions in one of your own."
            )
        return Chosen(folder)

    def _on_record(self, folder: Path, person: Person, whose: str) -> Chosen:
        log.warning("admin %s starts a session in %s, a folder of %s", person.id, folder, whose)
        return Chosen(folder, whose)

    async def _shared_to_drive(self, folder: Path, person: Person) -> bool:
        if self.records is None:
            return False
        driven = await self.records.driven_workspaces(person.id, person.groups)
        return any(folder.is_relative_to(Path(workspace)) for workspace in driven)

    async def _known_owners(self) -> dict[Path, str]:
        if self._owners is None:
            found = await self.records.folder_owners() if self.records is not None else {}
            self._owners = {Path(path): owner for path, owner in found.items()}
        return self._owners

    async def _claim(self, folder: Path, person_id: str) -> str:
        owner = await self.records.claim_folder(str(folder), person_id) if self.records is not None else person_id
        (await self._known_owners())[folder] = owner
        return owner
