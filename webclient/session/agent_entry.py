"""One agent the catalogue offers (`webclient.agents.catalogue`): how to start it, the folders it may work in, and
what it may do there; a folder a person chooses for a new session checked against them."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from webclient.session.mcp_servers import McpServer
from webclient.session.person_folders import expand, names_person
from webclient.workspace.paths import FileAccess, Workspace


class WorkspaceRefused(ValueError):
    """A workspace chosen for a new session that the person may not use: outside what the agent may use, or
    another person's (`webclient.agents.folders`)."""


@dataclass(frozen=True, slots=True)
class AgentEntry:
    """One agent of the catalogue: how to start it, where it works, and what it may do (a session's
    `webclient.session.agent_spec.AgentSpec` holds it)."""

    name: str
    argv: list[str]
    description: str = ""
    env: Mapping[str, str] | None = field(default=None, repr=False)
    """Variables over the server's environment for its processes."""
    workspace: Path | None = None
    """Its default working directory; None: the server's current directory (or ``template``'s fresh copy)."""
    extra_roots: tuple[Path, ...] = ()
    """Directories besides the workspace the agent may read and write through the client."""
    file_access: FileAccess = "read-write"
    terminals: bool = True
    start_timeout: float = 120.0
    """Seconds the agent has to answer ``initialize`` and ``session/new``."""
    protocol: str = "acp"
    acp_protocol: int = 1
    """The ACP version offered in ``initialize`` (``acp_protocol``, else ``WEBCLIENT_ACP_PROTOCOL``: 1, or 2 for the
    v2 draft); the client speaks what the agent answers."""
    template: Path | None = None
    """A folder each session gets a fresh copy of, when no workspace is chosen: the demo's sample project."""
    url: str | None = None
    """An ``aap`` agent's server (``argv`` is then empty)."""
    remote_agent: str | None = None
    """Which of the AAP server's agents (None: its only one)."""
    api_key: str | None = field(default=None, repr=False)
    """The AAP server's API key (from the environment variable the entry names, or ``WEBCLIENT_AAP_KEY``), sent as
    ``Authorization: Bearer``; never shown, never logged (hence no repr)."""
    api_key_env: str | None = None
    """The environment variable the config file names for :attr:`api_key` (said at start when it is not set)."""
    remote_options: Mapping[str, str] | None = None
    """Values for the remote agent's options (its defaults otherwise)."""
    network: bool | None = None  # in a sandbox (None: WEBCLIENT_SANDBOX_NETWORK)
    sandbox_read: tuple[Path, ...] = ()  # more folders it may read in a sandbox, for what its installation needs
    instance_labels: tuple[str, ...] = ()
    """What an instance must offer to run it, of several of one service (``WEBCLIENT_INSTANCE_LABELS``: a GPU, a
    region); empty: any instance."""
    mcp_servers: tuple[McpServer, ...] = ()
    """Its MCP servers (``[agents.NAME.mcp_servers.SERVER]``), offered to every session of it (an ACP agent's only)."""

    @property
    def roots(self) -> tuple[Path, ...]:
        """The folders a chosen workspace must lie in: the default workspace (unless it is a fresh copy) and the
        extra roots."""
        if self.workspace is not None:
            return (self.workspace, *self.extra_roots)
        if self.template is None:
            return (Path(os.getcwd()), *self.extra_roots)
        return self.extra_roots

    @property
    def per_person(self) -> bool:
        """Whether its folders name ``{person}``: each person has their own (:meth:`for_person`)."""
        return any(names_person(root) for root in self.roots)

    def for_person(self, person_id: str | None) -> AgentEntry:
        """The entry as ``person_id`` uses it: ``{person}`` in its folders replaced by their folder's name, those
        folders made (``0700``) if they are not there yet; itself when its folders name no one.

        Raises:
            WorkspaceRefused: a session that is no one's (nobody's folder to work in).
        """
        if not self.per_person:
            return self
        if not person_id:
            raise WorkspaceRefused(f"The agent {self.name} works in each person's own folder: sign in to use it.")
        workspace = expand(self.workspace, person_id) if self.workspace is not None else None
        extra = tuple(expand(root, person_id) for root in self.extra_roots)
        for folder, given in zip((workspace, *extra), (self.workspace, *self.extra_roots), strict=True):
            if folder is not None and given is not None and names_person(given):
                folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        return dataclasses.replace(self, workspace=workspace, extra_roots=extra)

    def choose(self, chosen: str, hidden: Sequence[Path] = ()) -> Path:
        """The folder a user chose for a new session, checked to be a directory inside :attr:`roots` and none of
        ``hidden`` (the server's own).

        Raises:
            WorkspaceRefused: with a sentence for the user.
        """
        return folder_in(self, chosen, self.roots, hidden)


def folder_in(entry: AgentEntry, chosen: str, roots: Sequence[Path], hidden: Sequence[Path] = ()) -> Path:
    """What a person typed for ``entry``'s new session, resolved, checked to be a folder inside ``roots`` and none of
    ``hidden`` (the server's own files).

    Raises:
        WorkspaceRefused: with a sentence for the person.
    """
    path = Path(chosen.strip()).expanduser()
    if not path.is_absolute():
        raise WorkspaceRefused(f"The workspace {chosen!r} must be an absolute path.")
    if not roots:
        raise WorkspaceRefused(f"The agent {entry.name} works in a fresh copy of its sample: no choice of folder.")
    if not Workspace(roots, hidden=hidden).contains(path):
        allowed = ", ".join(str(root) for root in entry.roots)
        raise WorkspaceRefused(f"The workspace {path} is outside what the agent {entry.name} may use ({allowed}).")
    resolved = Path(os.path.realpath(path))
    if not resolved.is_dir():
        raise WorkspaceRefused(f"The workspace {path} is not a folder.")
    return resolved
