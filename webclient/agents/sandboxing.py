"""Each agent's sandbox (`webclient.workspace.sandbox`), made from the server's settings and the agent's spec.

With ``WEBCLIENT_SANDBOX=bwrap`` an agent may write its session's workspace roots and its person's home, read its
own installation (`webclient.workspace.sandbox_host.installation`) and its catalogue entry's stdio MCP servers'
(which it starts, inside its sandbox, with its network rules), the folders its catalogue entry and
``WEBCLIENT_SANDBOX_READ`` add, and the system's folders; the server's data folder (its store, the other people's
homes, the key secrets are kept with) stays hidden even where one of those folders holds it, and so do the config and
registry files (and their folders, but one the agent is given). The network is the agent's ``network``, else
``WEBCLIENT_SANDBOX_NETWORK``: on, a network of its own through slirp4netns, which must then be installed.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TypedDict

from webclient.agents.demo import demo_sample
from webclient.agents.server_files import server_folders
from webclient.config import Settings
from webclient.session.agent_spec import AgentSpec
from webclient.workspace.sandbox import UNCONFINED, Sandbox
from webclient.workspace.sandbox_host import (
    SandboxUnavailable,
    find_bwrap,
    find_user_network,
    installation,
    probe,
    system_mounts,
)

__all__ = ["check_sandbox", "confine", "demo_in_sandbox", "mcp_installations", "server_sandbox"]


def server_sandbox(settings: Settings) -> Sandbox:
    """The sandbox the settings ask for, with nothing of an agent's in it yet (what the start-up probe runs).

    Raises:
        SandboxUnavailable: ``bwrap`` is asked for and not installed (never a silent run without a sandbox).
    """
    if settings.sandbox == "none":
        return UNCONFINED
    bwrap = find_bwrap()
    if bwrap is None:
        raise SandboxUnavailable(
            "WEBCLIENT_SANDBOX=bwrap, but bwrap is not installed: install it (Debian: apt-get install bubblewrap, as "
            "scripts/ensure-bubblewrap does) or set WEBCLIENT_SANDBOX=none"
        )
    user_network = find_user_network()
    return Sandbox(
        bwrap=bwrap,
        system=system_mounts(),
        readable=settings.sandbox_read,
        # A folder not made yet holds nothing to hide (and bwrap could not make a folder to cover it with).
        hidden=tuple(folder for folder in [*server_folders(settings), *_config_folders(settings)] if folder.is_dir()),
        hidden_files=tuple(file for file in _config_files(settings) if file.is_file()),
        # Without a user-mode network, the network stays off until the start's check refuses (never the host's).
        network=settings.sandbox_network and bool(user_network),
        user_network=user_network,
    )


def check_sandbox(settings: Settings) -> str:
    """Check before the server starts that the sandbox asked for works here (bwrap runs ``true`` in one); the
    sentence the server prints at start, saying which sandbox is in force.

    Raises:
        SandboxUnavailable: bwrap is missing, or cannot make a sandbox on this machine (its own words, what to do), or
            the agents have the network (``WEBCLIENT_SANDBOX_NETWORK=on``) and slirp4netns is missing.
    """
    sandbox = server_sandbox(settings)
    if not sandbox.confined:
        return "agents run without a sandbox, as this server's user (WEBCLIENT_SANDBOX=none)"
    if settings.sandbox_network and not sandbox.user_network:
        raise SandboxUnavailable(
            "WEBCLIENT_SANDBOX=bwrap with the network on (WEBCLIENT_SANDBOX_NETWORK=on) needs slirp4netns, which is "
            "not installed: install it (Debian: apt-get install slirp4netns, as scripts/ensure-slirp4netns does), "
            "or set WEBCLIENT_SANDBOX_NETWORK=off (an agent whose network = true then does not start)"
        )
    probe(sandbox)
    network = "on" if settings.sandbox_network else "off"
    return f"agents run in a bubblewrap sandbox ({sandbox.bwrap}; network {network} unless an agent says otherwise)"


def confine(spec: AgentSpec, settings: Settings) -> AgentSpec:
    """``spec`` with the sandbox its processes run in (``spec`` itself with ``WEBCLIENT_SANDBOX=none``); call it
    once the spec's environment holds the person's home."""
    base = server_sandbox(settings)
    if not base.confined:
        return spec
    env = spec.env or {}
    home = Path(env["HOME"]) if env.get("HOME") else None
    path_env = env.get("PATH") or os.environ.get("PATH", "")
    writable = (spec.cwd, *spec.entry.extra_roots, *((home,) if home is not None else ()))
    readable = (*installation(spec.entry.argv, path_env), *spec.entry.sandbox_read, *base.readable)
    readable += mcp_installations(spec, path_env)
    network = settings.sandbox_network if spec.entry.network is None else spec.entry.network
    # The config's folder is hidden but where it is the agent's own (its workspace): there the files alone are.
    given = {*writable, *readable}
    kept = set(_config_folders(settings)) & given
    sandbox = dataclasses.replace(
        base,
        writable=writable,
        readable=readable,
        hidden=tuple(folder for folder in base.hidden if folder not in kept),
        network=network,
        home=home,
    )
    return dataclasses.replace(spec, sandbox=sandbox)


def mcp_installations(spec: AgentSpec, path_env: str) -> tuple[Path, ...]:
    """The installations of the stdio MCP servers of the agent's catalogue entry, to be read: the agent starts them
    inside its sandbox. A person's own servers add nothing (naming a command must not open a folder to the agent):
    theirs run from what the sandbox reads already, the system's folders or the entry's ``sandbox_read``."""
    found: list[Path] = []
    for server in spec.entry.mcp_servers:
        if server.kind == "stdio":
            found += installation([server.command, *server.args], path_env)
    return tuple(dict.fromkeys(found))


class DemoInSandbox(TypedDict, total=False):
    """The demo's catalogue fields in a sandbox."""

    sandbox_read: tuple[Path, ...]
    env: Mapping[str, str]


def demo_in_sandbox(settings: Settings) -> DemoInSandbox:
    """What the built-in demo agent needs in a sandbox: its package read, and found there first (an editable install
    finds it through a hook that may name another checkout); nothing without a sandbox."""
    sample = demo_sample()
    if settings.sandbox == "none" or sample is None:
        return DemoInSandbox()
    package = sample.parent
    return DemoInSandbox(sandbox_read=(package,), env={"PYTHONPATH": str(package.parent)})


def _config_files(settings: Settings) -> list[Path]:
    """The config and registry files: what agents' keys may be written in."""
    return [file for file in (settings.config, settings.registry) if file is not None]


def _config_folders(settings: Settings) -> list[Path]:
    """The folders of the config and registry files (what else an operator keeps beside them), never ``/``."""
    return [file.parent for file in _config_files(settings) if len(file.parent.parts) > 1]
