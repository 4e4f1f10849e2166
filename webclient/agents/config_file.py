"""The agents of a TOML config file (``--config``, ``WEBCLIENT_CONFIG``; see agents.example.toml): one
:class:`AgentEntry` per ``[agents.NAME]`` table, and the ``[registry] file`` it names. Every mistake stops the start
with a line naming the file, the agent and the field."""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path
from typing import Any, cast, get_args

from webclient.agents.demo import DEMO
from webclient.agents.mcp_config import read_servers
from webclient.config import Settings, acp_protocol
from webclient.session.agent_entry import AgentEntry
from webclient.workspace.paths import FileAccess

PROTOCOLS = ("acp", "aap")
"""The protocols an agent may speak (``protocol = ...``), each with its adapter (``webclient/acp``, ``/aap``)."""
REMOTE_FIELDS = {"url", "agent", "api_key_env", "options"}
"""Fields of an ``aap`` entry (and only of one)."""

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
FIELDS = {
    "command", "args", "env", "workspace", "extra_roots", "file_access", "terminals", "start_timeout", "protocol",
    "description", "acp_protocol", "network", "sandbox_read", "instance_labels", "mcp_servers", *REMOTE_FIELDS,
}  # fmt: skip


class CatalogueError(ValueError):
    """A config or registry file the server cannot use; the message names the file, the agent and the field."""


def is_url(text: str) -> bool:
    return text.strip().lower().startswith(("http://", "https://"))


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
    if access not in get_args(FileAccess):
        raise fields.error("file_access", f"must be one of {', '.join(get_args(FileAccess))}, not {access!r}")
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
        file_access=cast(FileAccess, access),
        terminals=terminals,
        start_timeout=float(timeout),
        acp_protocol=version,
        network=network,
        sandbox_read=tuple(fields.folder_path(folder) for folder in fields.strings("sandbox_read")),
        instance_labels=tuple(fields.strings("instance_labels")),
        mcp_servers=read_servers(table.get("mcp_servers"), fields, protocol),
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
        "api_key_env": key_env,
        "remote_options": cast(dict[str, str], options) or None,
    }
