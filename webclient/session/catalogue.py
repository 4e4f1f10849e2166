"""The agents a user may start: the config file's (``--config``), ``--agent``'s, the registry's found on PATH, the demo.

Protocol-neutral: an entry says how to reach an agent and what it may do (an :class:`AgentSpec` per session);
``protocol`` names the adapter that speaks to it: ``acp`` starts a command, ``aap`` reaches a remote agent server by
its URL (``--agent http(s)://...`` is one too).
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast, get_args

from webclient.config import Settings, acp_protocol
from webclient.session.agent_spec import AgentSpec, command_display, split_command
from webclient.session.demo import DEMO, DEMO_AGENT, demo_sample
from webclient.session.known_agents import load_registry
from webclient.session.sandboxing import demo_in_sandbox
from webclient.workspace.paths import Access, Workspace

DEMO_REMOTE = "demo-remote"
"""The built-in remote demo agent (an AAP server the web server starts), when it runs."""

PROTOCOLS = ("acp", "aap")
"""The protocols an agent may speak (``protocol = ...``), each with its adapter (``webclient/acp``, ``/aap``)."""
REMOTE_FIELDS = {"url", "agent", "api_key_env", "options"}
"""Fields of an ``aap`` entry (and only of one)."""

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
FIELDS = {
    "command", "args", "env", "workspace", "extra_roots", "file_access", "terminals", "start_timeout", "protocol",
    "description", "acp_protocol", "network", "sandbox_read", *REMOTE_FIELDS,
}  # fmt: skip


class CatalogueError(ValueError):
    """A config or registry file the server cannot use; the message names the file, the agent and the field."""


class WorkspaceRefused(ValueError):
    """A workspace chosen for a new session that lies outside what the agent may use."""


class UnknownAgent(LookupError):
    """A name the catalogue does not hold."""


@dataclass(frozen=True, slots=True)
class AgentEntry:
    """One agent of the catalogue: how to start it, where it works, and what it may do."""

    name: str
    argv: list[str]
    description: str = ""
    env: Mapping[str, str] | None = None
    workspace: Path | None = None
    """Its default working directory; None: the server's current directory (or ``template``'s fresh copy)."""
    extra_roots: tuple[Path, ...] = ()
    file_access: Access = "read-write"
    terminals: bool = True
    start_timeout: float = 120.0
    protocol: str = "acp"
    acp_protocol: int = 1
    """The ACP version offered in ``initialize`` (``acp_protocol``, else ``WEBCLIENT_ACP_PROTOCOL``)."""
    template: Path | None = None
    """A folder each session gets a fresh copy of, when no workspace is chosen: the demo's sample project."""
    url: str | None = None
    """An ``aap`` agent's server (``argv`` is then empty)."""
    remote_agent: str | None = None
    """Which of the AAP server's agents (None: its only one)."""
    api_key: str | None = field(default=None, repr=False)
    """The AAP server's API key (from the environment variable the entry names, or ``WEBCLIENT_AAP_KEY``)."""
    remote_options: Mapping[str, str] | None = None
    network: bool | None = None  # in a sandbox (None: WEBCLIENT_SANDBOX_NETWORK)
    sandbox_read: tuple[Path, ...] = ()  # more folders it may read in a sandbox, for what its installation needs

    @property
    def roots(self) -> tuple[Path, ...]:
        """The folders a chosen workspace must lie in: the default workspace (unless it is a fresh copy) and the
        extra roots."""
        if self.workspace is not None:
            return (self.workspace, *self.extra_roots)
        if self.template is None:
            return (Path(os.getcwd()), *self.extra_roots)
        return self.extra_roots

    def choose(self, chosen: str) -> Path:
        """The folder a user chose for a new session, checked to be a directory inside :attr:`roots`.

        Raises:
            WorkspaceRefused: with a sentence for the user.
        """
        path = Path(chosen.strip()).expanduser()
        if not path.is_absolute():
            raise WorkspaceRefused(f"The workspace {chosen!r} must be an absolute path.")
        if not self.roots:
            raise WorkspaceRefused(f"The agent {self.name} works in a fresh copy of its sample: no choice of folder.")
        if not Workspace(self.roots).contains(path):
            allowed = ", ".join(str(root) for root in self.roots)
            raise WorkspaceRefused(f"The workspace {path} is outside what the agent {self.name} may use ({allowed}).")
        resolved = Path(os.path.realpath(path))
        if not resolved.is_dir():
            raise WorkspaceRefused(f"The workspace {path} is not a folder.")
        return resolved

    def spec(self, workspace: Path, max_line_bytes: int) -> AgentSpec:
        return AgentSpec(
            argv=list(self.argv),
            cwd=workspace,
            env=self.env,
            extra_roots=self.extra_roots,
            file_access=self.file_access,
            terminals=self.terminals,
            start_timeout=self.start_timeout,
            max_line_bytes=max_line_bytes,
            acp_protocol=self.acp_protocol,
            url=self.url,
            remote_agent=self.remote_agent,
            api_key=self.api_key,
            remote_options=self.remote_options,
            network=self.network,
            sandbox_read=self.sandbox_read,
        )


@dataclass(frozen=True)
class Catalogue:
    """The agents by name, in the order offered; the first is the default."""

    entries: dict[str, AgentEntry] = field(default_factory=dict)

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
        if settings.config is not None:
            configured, from_config = read_config(settings.config, settings)
            entries.update(configured)
            registry = registry or from_config
        if settings.agent is not None:
            entries.setdefault("agent", _command_entry(settings))
        if registry is not None:
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
        return cls(entries)


def is_url(text: str) -> bool:
    return text.strip().lower().startswith(("http://", "https://"))


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


def read_config(path: Path, settings: Settings) -> tuple[dict[str, AgentEntry], Path | None]:
    """The agents of a TOML config file (``[agents.NAME]`` tables) and its ``[registry] file``.

    Fields not given take the server-wide settings; relative paths are relative to the file's folder.

    Raises:
        CatalogueError: naming the file, the agent and the field.
    """
    try:
        with path.open("rb") as file:
            document = tomllib.load(file)
    except OSError as error:
        raise CatalogueError(f"{path}: cannot be read: {error.strerror or error}") from None
    except tomllib.TOMLDecodeError as error:
        raise CatalogueError(f"{path}: not valid TOML: {error}") from None
    unknown = set(document) - {"agents", "registry"}
    if unknown:
        raise CatalogueError(f"{path}: unknown section {sorted(unknown)[0]!r} (known: agents, registry)")
    agents = document.get("agents", {})
    if not isinstance(agents, dict):
        raise CatalogueError(f"{path}: agents must be tables, [agents.NAME]")
    entries = {name: _agent(path, name, table, settings) for name, table in agents.items()}
    return entries, _registry_file(path, document.get("registry"))


def _registry_file(path: Path, table: object) -> Path | None:
    if table is None:
        return None
    if not isinstance(table, dict) or set(table) - {"file"} or not isinstance(table.get("file"), str):
        raise CatalogueError(f"{path}: [registry]: field file must be a string, the path of a registry.json")
    return path.parent / Path(table["file"]).expanduser()


class _Fields:
    """Reads one agent's table, every error naming the file, the agent and the field."""

    def __init__(self, path: Path, name: str, table: dict[str, Any]) -> None:
        self.where = f"{path}: agent {name!r}"
        self.folder = path.parent
        self.table = table

    def error(self, key: str, problem: str) -> CatalogueError:
        return CatalogueError(f"{self.where}: field {key}: {problem}")

    def text(self, key: str, default: str | None = None) -> str | None:
        value = self.table.get(key, default)
        if value is not None and not isinstance(value, str):
            raise self.error(key, f"must be a string, not {value!r}")
        return value

    def strings(self, key: str) -> list[str]:
        value = self.table.get(key, [])
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise self.error(key, "must be a list of strings")
        return cast(list[str], value)

    def folder_path(self, text: str) -> Path:
        return (self.folder / Path(text).expanduser()).resolve()


def _agent(path: Path, name: str, table: object, settings: Settings) -> AgentEntry:
    if not NAME.fullmatch(name):
        raise CatalogueError(f"{path}: agent {name!r}: the name may hold letters, digits, '.', '_' and '-'")
    if name == DEMO:
        raise CatalogueError(f"{path}: agent {name!r}: the name is the built-in demo agent's")
    if not isinstance(table, dict):
        raise CatalogueError(f"{path}: agent {name!r}: must be a table, [agents.{name}]")
    fields = _Fields(path, name, table)
    unknown = sorted(set(table) - FIELDS)
    if unknown:
        raise fields.error(unknown[0], f"unknown (known: {', '.join(sorted(FIELDS))})")
    protocol = fields.text("protocol", "aap" if "url" in table else "acp")
    if protocol not in PROTOCOLS:
        raise fields.error("protocol", f"{protocol!r} is not supported: only {', '.join(PROTOCOLS)}")
    remote = _remote_fields(fields) if protocol == "aap" else {}
    command = fields.text("command")
    if protocol == "acp" and not command:
        raise fields.error("command", "missing: the program to start (arguments go in args)")
    if protocol == "acp" and (extra := sorted(REMOTE_FIELDS & set(table))):
        raise fields.error(extra[0], 'only for a remote agent (protocol = "aap", with a url)')
    if protocol == "aap" and command:
        raise fields.error("command", 'a remote agent (protocol = "aap") is reached by its url, not started')
    env = table.get("env", {})
    if not isinstance(env, dict) or not all(isinstance(value, str) for value in env.values()):
        raise fields.error("env", 'must be a table of strings, e.g. env = { API_KEY = "..." }')
    workspace = fields.text("workspace")
    access = fields.text("file_access", settings.file_access)
    if access not in get_args(Access):
        raise fields.error("file_access", f"must be one of {', '.join(get_args(Access))}, not {access!r}")
    terminals = table.get("terminals", settings.terminals)
    if not isinstance(terminals, bool):
        raise fields.error("terminals", f"must be true or false, not {terminals!r}")
    timeout = table.get("start_timeout", settings.start_timeout)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
        raise fields.error("start_timeout", f"must be a number of seconds above 0, not {timeout!r}")
    try:
        version = acp_protocol(table.get("acp_protocol", settings.acp_protocol), "acp_protocol")
    except ValueError as error:
        raise fields.error("acp_protocol", str(error).removeprefix("acp_protocol ")) from None
    roots = tuple(fields.folder_path(root) for root in fields.strings("extra_roots"))
    network = table.get("network")
    if network is not None and not isinstance(network, bool):
        raise fields.error("network", f"must be true or false, not {network!r}")
    return AgentEntry(
        name=name,
        argv=[command, *fields.strings("args")] if command else [],
        protocol=protocol,
        **remote,
        description=fields.text("description") or remote.get("url") or "",
        env=cast(dict[str, str], env) or None,
        workspace=fields.folder_path(workspace) if workspace else settings.workspace,
        extra_roots=roots if "extra_roots" in table else settings.extra_roots,
        file_access=cast(Access, access),
        terminals=terminals,
        start_timeout=float(timeout),
        acp_protocol=version,
        network=network,
        sandbox_read=tuple(fields.folder_path(folder) for folder in fields.strings("sandbox_read")),
    )


def _remote_fields(fields: _Fields) -> dict[str, Any]:
    """An ``aap`` entry's own fields: its server's URL, which of its agents, where its API key is, option values."""
    url = fields.text("url")
    if not url or not is_url(url):
        raise fields.error("url", "missing or not an http(s):// URL: the AAP server's base URL")
    key_env = fields.text("api_key_env")
    if key_env is not None and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key_env):
        raise fields.error("api_key_env", f"must name an environment variable, not {key_env!r}")
    options = fields.table.get("options", {})
    if not isinstance(options, dict) or not all(isinstance(value, str) for value in options.values()):
        raise fields.error("options", 'must be a table of strings, e.g. options = { model = "fast" }')
    return {
        "url": url.strip(),
        "remote_agent": fields.text("agent"),
        # The key stays in the environment: read when the catalogue is made, never written to a file here.
        "api_key": os.environ.get(key_env) if key_env else None,
        "remote_options": cast(dict[str, str], options) or None,
    }
