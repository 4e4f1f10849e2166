"""The agents a user may start: the config file's (``--config``), ``--agent``'s, the registry's found on PATH, the demo.

Protocol-neutral: an entry says how to reach an agent and what it may do (an :class:`AgentSpec` per session);
``protocol`` names the adapter that speaks to it: ``acp`` starts a command, ``aap`` reaches a remote agent server by
its URL (``--agent http(s)://...`` is one too).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from webclient.agents.config_file import CatalogueError, is_url, read_config
from webclient.agents.demo import DEMO, DEMO_AGENT, demo_sample
from webclient.agents.known_agents import load_registry
from webclient.agents.sandboxing import demo_in_sandbox
from webclient.agents.server_files import root_holding_data
from webclient.config import Settings
from webclient.session.agent_entry import AgentEntry, WorkspaceRefused
from webclient.session.agent_spec import command_display, split_command

__all__ = [
    "DEMO",
    "DEMO_REMOTE",
    "AgentEntry",
    "Catalogue",
    "CatalogueError",
    "UnknownAgent",
    "WorkspaceRefused",
    "is_url",
    "read_config",
]

DEMO_REMOTE = "demo-remote"
"""The built-in remote demo agent (an AAP server the web server starts), when it runs."""


class UnknownAgent(LookupError):
    """A name the catalogue does not hold."""


@dataclass(frozen=True)
class Catalogue:
    """The agents by name, in the order offered; the first is the default."""

    entries: dict[str, AgentEntry] = field(default_factory=dict)
    files: tuple[Path, ...] = ()
    """The config and registry files it was read from: the server's own, never an agent's to read."""

    def check_roots(self, settings: Settings) -> None:
        """Refuse (at start) an agent whose folders hold the server's data folder, or lie in it.

        Raises:
            CatalogueError: one line naming the agent, the folder and what to do.
        """
        roots = [(entry.name, root) for entry in self.entries.values() for root in entry.roots]
        refused = root_holding_data(settings, roots)
        if refused is not None:
            raise CatalogueError(refused)

    @property
    def default(self) -> AgentEntry:
        return next(iter(self.entries.values()))

    def get(self, name: str | None) -> AgentEntry:
        """The entry called `name`; the default one for None or "".

        Raises:
            UnknownAgent: no such agent.
        """
        if not name:
            return self.default
        try:
            return self.entries[name]
        except KeyError:
            raise UnknownAgent(f"No agent called {name!r} here.") from None

    @classmethod
    def from_settings(
        cls, settings: Settings, path_env: str | None = None, demo_remote: str | None = None
    ) -> Catalogue:
        """The config file's agents (or ``--agent``'s), then the registry's found on PATH, then the demo, and the
        remote demo when its server runs at ``demo_remote``.

        Raises:
            CatalogueError: a config or registry file that cannot be used, naming the file, agent and field.
        """
        path_env = os.environ.get("PATH", "") if path_env is None else path_env
        entries: dict[str, AgentEntry] = {}
        registry = settings.registry
        files = [settings.config] if settings.config is not None else []
        if settings.config is not None:
            configured, from_config = read_config(settings.config, settings)
            entries.update(configured)
            registry = registry or from_config
        if settings.agent is not None:
            entries.setdefault("agent", _command_entry(settings))
        if registry is not None:
            files.append(registry)
            try:
                known = load_registry(registry, path_env)
            except ValueError as error:
                raise CatalogueError(str(error)) from None
            for found in known:
                if found.id not in entries and found.id != DEMO:
                    entries[found.id] = AgentEntry(
                        name=found.id,
                        argv=found.argv,
                        description=found.description or found.name,
                        env=found.env or None,
                        workspace=settings.workspace,
                        extra_roots=settings.extra_roots,
                        file_access=settings.file_access,
                        terminals=settings.terminals,
                        start_timeout=settings.start_timeout,
                        acp_protocol=settings.acp_protocol,
                    )
        entries[DEMO] = _demo_entry(settings, alone=not entries)
        if demo_remote is not None:
            entries[DEMO_REMOTE] = AgentEntry(
                name=DEMO_REMOTE,
                argv=[],
                description="The built-in remote demo agent (AAP, over HTTP)",
                protocol="aap",
                url=demo_remote,
                file_access=settings.file_access,
                terminals=settings.terminals,
                start_timeout=settings.start_timeout,
                template=demo_sample(),
            )
        return cls(entries, tuple(files))


def _command_entry(settings: Settings) -> AgentEntry:
    """``--agent COMMAND`` (or ``--agent URL``, an AAP server): a one-entry catalogue, with the server-wide settings."""
    assert settings.agent is not None
    if is_url(settings.agent):
        url = settings.agent.strip()
        return AgentEntry(
            name="agent",
            argv=[],
            description=url,
            protocol="aap",
            url=url,
            remote_agent=settings.aap_agent,
            api_key=settings.aap_key,
            workspace=settings.workspace,
            extra_roots=settings.extra_roots,
            file_access=settings.file_access,
            terminals=settings.terminals,
            start_timeout=settings.start_timeout,
        )
    return AgentEntry(
        name="agent",
        argv=(argv := split_command(settings.agent)),
        description=command_display(argv[0], argv[1:]),
        workspace=settings.workspace,
        extra_roots=settings.extra_roots,
        file_access=settings.file_access,
        terminals=settings.terminals,
        start_timeout=settings.start_timeout,
        acp_protocol=settings.acp_protocol,
    )


def _demo_entry(settings: Settings, alone: bool) -> AgentEntry:
    """The demo: in ``--workspace`` when it is the only agent, else (and by default) in a fresh sample copy."""
    workspace = settings.workspace if alone else None
    return AgentEntry(
        name=DEMO,
        argv=split_command(DEMO_AGENT),
        description="The built-in demo agent",
        workspace=workspace,
        extra_roots=settings.extra_roots if alone else (),
        file_access=settings.file_access,
        terminals=settings.terminals,
        start_timeout=settings.start_timeout,
        acp_protocol=settings.acp_protocol,
        template=demo_sample() if workspace is None else None,
        **demo_in_sandbox(settings),
    )
