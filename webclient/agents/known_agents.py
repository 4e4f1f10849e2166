"""Agents named by a registry file in the ACP registry's format (``registry.json``, version 1), when they can run here.

An entry is a launch manifest: ``distribution`` says how to start the agent, by ``binary`` (a program per
platform), ``npx`` (an npm package) or ``uvx`` (a Python package). We download nothing: a binary is offered when
its program is on PATH, an npx or uvx one when ``npx`` or ``uvx`` is.
"""

from __future__ import annotations

import json
import platform
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ID = re.compile(r"[a-z][a-z0-9-]*")


@dataclass(frozen=True, slots=True)
class KnownAgent:
    """A registry entry that can start here, with the command line that starts it."""

    id: str
    name: str
    version: str
    description: str
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)


def platform_key() -> str:
    """This machine as the registry names platforms: ``linux-x86_64``, ``darwin-aarch64``, ..."""
    machine = {"amd64": "x86_64", "arm64": "aarch64"}.get(platform.machine().lower(), platform.machine().lower())
    return f"{platform.system().lower()}-{machine}"


def on_path(program: str, path_env: str) -> str | None:
    """The full path of `program` found on the given PATH, or None."""
    return shutil.which(program, path=path_env)


def load_registry(path: Path, path_env: str) -> list[KnownAgent]:
    """The registry file's agents that can start with the given PATH, in the file's order.

    Raises:
        ValueError (``CatalogueError``'s base): a file that cannot be read or is not the registry format,
        naming the file and the agent.
    """
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ValueError(f"{path}: cannot be read: {error.strerror or error}") from None
    except (ValueError, UnicodeDecodeError) as error:
        raise ValueError(f"{path}: not valid JSON: {error}") from None
    version = document.get("version") if isinstance(document, dict) else None
    if not isinstance(version, str) or not version.startswith("1."):
        raise ValueError(f'{path}: not a registry file of version 1 ({{"version": "1.0.0", "agents": [...]}})')
    agents = document.get("agents")
    if not isinstance(agents, list):
        raise ValueError(f"{path}: field agents must be a list")
    found = []
    for number, entry in enumerate(agents):
        agent = _known(path, number, entry, path_env)
        if agent is not None:
            found.append(agent)
    return found


def _known(path: Path, number: int, entry: object, path_env: str) -> KnownAgent | None:
    where = f"{path}: agent #{number + 1}"
    if not isinstance(entry, dict):
        raise ValueError(f"{where}: must be an object")
    agent_id = entry.get("id")
    if not isinstance(agent_id, str) or not ID.fullmatch(agent_id):
        raise ValueError(f"{where}: field id must be lower-case letters, digits and '-', not {agent_id!r}")
    where = f"{path}: agent {agent_id!r}"
    for key in ("name", "version", "description"):
        if not isinstance(entry.get(key, ""), str):
            raise ValueError(f"{where}: field {key} must be a string")
    distribution = entry.get("distribution")
    if not isinstance(distribution, dict) or not distribution.keys() & {"binary", "npx", "uvx"}:
        raise ValueError(f"{where}: field distribution must hold binary, npx or uvx")
    launch = _launch(where, distribution, path_env)
    if launch is None:
        return None
    argv, env = launch
    return KnownAgent(
        id=agent_id,
        name=entry.get("name") or agent_id,
        version=entry.get("version", ""),
        description=entry.get("description", ""),
        argv=argv,
        env=env,
    )


def _launch(where: str, distribution: dict[str, Any], path_env: str) -> tuple[list[str], dict[str, str]] | None:
    """The command line of the first distribution that can start here (an installed binary first: no download)."""
    binaries = distribution.get("binary", {})
    target = binaries.get(platform_key()) if isinstance(binaries, dict) else None
    if isinstance(target, dict):
        args, env = _args_env(f"{where}: distribution.binary.{platform_key()}", target)
        command = target.get("cmd")
        program = on_path(Path(command).name, path_env) if isinstance(command, str) and command else None
        if program is not None:
            return [program, *args], env
    for runner in ("npx", "uvx"):
        package = distribution.get(runner)
        if package is None:
            continue
        if not isinstance(package, dict) or not isinstance(package.get("package"), str):
            raise ValueError(f"{where}: field distribution.{runner}.package must be a string")
        program = on_path(runner, path_env)
        if program is None:
            continue
        args, env = _args_env(f"{where}: distribution.{runner}", package)
        command = package.get("cmd")
        if isinstance(command, str) and command:
            option = "--package" if runner == "npx" else "--from"
            return [program, option, package["package"], command, *args], env
        # npx asks before installing a package it has not cached: -y, as nobody is there to answer.
        return [program, *(["-y"] if runner == "npx" else []), package["package"], *args], env
    return None


def _args_env(where: str, table: dict[str, Any]) -> tuple[list[str], dict[str, str]]:
    args, env = table.get("args", []), table.get("env", {})
    if not isinstance(args, list) or not all(isinstance(arg, str) for arg in args):
        raise ValueError(f"{where}: field args must be a list of strings")
    if not isinstance(env, dict) or not all(isinstance(value, str) for value in env.values()):
        raise ValueError(f"{where}: field env must be an object of strings")
    return list(args), dict(env)
