"""Each agent's sandbox (`webclient.workspace.sandbox`), made from the server's settings and the agent's spec.

With ``WEBCLIENT_SANDBOX=bwrap`` an agent may write its session's workspace roots and its person's home, read its
own installation (`webclient.workspace.sandbox_host.installation`), the folders its catalogue entry and
``WEBCLIENT_SANDBOX_READ`` add, and the system's folders; the server's data folder (its store, the other people's
homes, the key secrets are kept with) stays hidden even where one of those folders holds it. The network is the
agent's ``network``, else ``WEBCLIENT_SANDBOX_NETWORK``.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TypedDict

from webclient.config import Settings, demo_sample
from webclient.session.agent_spec import AgentSpec
from webclient.session.server_files import server_folders
from webclient.workspace.sandbox import UNCONFINED, Sandbox
from webclient.workspace.sandbox_host import SandboxUnavailable, find_bwrap, installation, probe, system_mounts

__all__ = ["check_sandbox", "confine", "demo_in_sandbox", "server_sandbox"]


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
    return Sandbox(
        bwrap=bwrap,
        system=system_mounts(),
        readable=settings.sandbox_read,
        # A folder not made yet holds nothing to hide (and bwrap could not make a folder to cover it with).
        hidden=tuple(folder for folder in server_folders(settings) if folder.is_dir()),
        network=settings.sandbox_network,
    )


def check_sandbox(settings: Settings) -> str:
    """Check before the server starts that the sandbox asked for works here (bwrap runs ``true`` in one); the
    sentence the server prints at start, saying which sandbox is in force.

    Raises:
        SandboxUnavailable: bwrap is missing, or cannot make a sandbox on this machine (its own words, what to do).
    """
    sandbox = server_sandbox(settings)
    if not sandbox.confined:
        return "agents run without a sandbox, as this server's user (WEBCLIENT_SANDBOX=none)"
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
    sandbox = dataclasses.replace(
        base,
        writable=(spec.cwd, *spec.extra_roots, *((home,) if home is not None else ())),
        readable=(*installation(spec.argv, path_env), *spec.sandbox_read, *base.readable),
        network=settings.sandbox_network if spec.network is None else spec.network,
        home=home,
    )
    return dataclasses.replace(spec, sandbox=sandbox)


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
