"""Where an agent's processes run: as the server runs them, or inside bubblewrap with only what they need.

A `Sandbox` is a policy and nothing else (pure data: no files read, no process started here): the folders the
agent may write (its session's workspace roots, its person's home), those it may only read (its own installation,
the system's folders), what must stay hidden even inside those (the server's data folder, the system's secrets),
and whether it has the network. `Sandbox.command` turns a command line into the one that runs it so: bwrap's
options, ``--``, then the command. `Sandbox.environment` is what it starts with: with bwrap an allow-list
(`ALLOWED_VARIABLES` of the server's, then the agent's own: its catalogue env, its person's home and secrets),
never the server's environment. `UNCONFINED` changes nothing: the command as it is, the server's environment but
its own ``WEBCLIENT_*`` settings (the behaviour before sandboxes).

Inside bwrap every namespace is new (``--unshare-all``: mounts, processes, network, IPC, host name, user), with a
private ``/proc`` (so no other process is seen, nor signalled), a minimal ``/dev``, a ``/tmp`` (and ``/var/tmp``,
``/dev/shm``) of its own, no capabilities and no way to make a user namespace again (so nothing mounted here can be
unmounted to look beneath), its own session (``--new-session``: no ``TIOCSTI`` into a terminal of ours), and death
with its parent. Nothing of the filesystem is there that a mount below does not put there. The network is always one
of its own: off, a loopback alone; on, a user-mode network besides (`webclient.workspace.sandbox_network`, run
before bwrap: slirp4netns), which reaches what the host reaches but for the host's loopback.
`webclient.workspace.sandbox_host` finds what this machine has (bwrap's path, the system folders' layout, an agent's
installation) and checks that bwrap works.
"""

from __future__ import annotations

import errno
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from webclient.workspace.sandbox_network import BLOCK_FD, INFO_FD, RESOLV_FD

__all__ = ["ALLOWED_VARIABLES", "UNCONFINED", "Mount", "Sandbox", "SandboxMode"]

SandboxMode = Literal["none", "bwrap"]
"""``WEBCLIENT_SANDBOX``: ``none`` (processes run as the server's own) or ``bwrap`` (each agent in a sandbox)."""

ALLOWED_VARIABLES = ("PATH", "LANG", "LANGUAGE", "TZ", "TERM")
"""The server's variables an agent in a sandbox starts with (and every ``LC_*``); the rest are the agent's own."""
_ALLOWED_PREFIXES = ("LC_",)

SERVER_PRIVATE_PREFIX = "WEBCLIENT_"
"""The server's own settings (its sign-in token, the key secrets are kept with): never an agent's, sandbox or not."""


@dataclass(frozen=True, slots=True)
class Mount:
    """One of the system's mounts inside the sandbox: a folder read-only (``ro-bind``, ``ro-bind-try`` when it may be
    missing), a symlink (``/lib -> usr/lib`` on a merged ``/usr``), an empty folder over one (``tmpfs``), or an
    empty file over one (``hide``)."""

    kind: Literal["ro-bind", "ro-bind-try", "symlink", "tmpfs", "hide"]
    path: str
    target: str = ""
    """What a symlink points to."""

    def options(self) -> list[str]:
        if self.kind == "symlink":
            return ["--symlink", self.target, self.path]
        if self.kind == "tmpfs":
            return ["--tmpfs", self.path]
        if self.kind == "hide":
            return ["--ro-bind", "/dev/null", self.path]
        return [f"--{self.kind}", self.path, self.path]


@dataclass(frozen=True, slots=True)
class Sandbox:
    """What one agent's processes (the agent, its commands, its sign-in) may see and do; `UNCONFINED` for none."""

    bwrap: str | None = None
    """bwrap's path; None: no sandbox at all."""
    writable: tuple[Path, ...] = ()
    """Read and written: the session's workspace roots, the person's home."""
    readable: tuple[Path, ...] = ()
    """Read only: the agent's own installation (its program's, the script it runs), folders the catalogue adds."""
    hidden: tuple[Path, ...] = ()
    """Never seen, even inside a folder above (the server's data folder, its home): an empty folder over them."""
    system: tuple[Mount, ...] = ()
    """The system's folders (``/usr``, the lib symlinks, of ``/etc`` an allow-list), as this machine lays them out."""
    hidden_files: tuple[Path, ...] = ()
    """Files never read, wherever they lie (the server's config and registry files): an empty file over them."""
    network: bool = False
    """A network of its own that reaches out, not the host's loopback (on), or only a loopback of its own (off)."""
    user_network: tuple[str, ...] = ()
    """The command that gives a sandbox with the network on its network (`webclient.workspace.sandbox_network`
    with slirp4netns's path), run with bwrap's command line after ``--``; empty: none here, the network cannot be on."""
    home: Path | None = None
    """The agent's HOME, when it has one of its own (its person's home, one of the writable folders)."""

    @property
    def confined(self) -> bool:
        return self.bwrap is not None

    @property
    def name(self) -> str:
        """How the server names it at start: ``none``, ``bwrap (network on)``, ``bwrap (network off)``."""
        if self.bwrap is None:
            return "none"
        return f"bwrap (network {'on' if self.network else 'off'})"

    def reading(self, *paths: Path) -> Sandbox:
        """The same policy, with more folders (or files) to read: a helper program of the server's own."""
        return replace(self, readable=(*self.readable, *paths)) if self.bwrap is not None else self

    def command(self, argv: Sequence[str], cwd: Path) -> list[str]:
        """The command line that runs ``argv`` in ``cwd`` under this policy (``argv`` itself when unconfined).

        ``cwd`` must lie in a writable or readable folder: bwrap enters it by its path inside, where only what this
        policy mounts exists (a folder swapped for a symlink out of the workspace points at nothing there).

        Raises:
            OSError: the network is on and this machine has no user-mode network to give it (no slirp4netns).
        """
        if self.bwrap is None:
            return list(argv)
        if self.network and not self.user_network:  # never the host's network instead: the start fails, saying why
            raise OSError(errno.ENOPKG, "the network is on in a bubblewrap sandbox, and slirp4netns is not installed")
        options = [self.bwrap, "--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent"]
        options += ["--new-session"]
        if self.network:  # held until its network is up; its resolver is the user-mode network's
            options += ["--info-fd", str(INFO_FD), "--block-fd", str(BLOCK_FD)]
        options += ["--cap-drop", "ALL"]  # bwrap started by root would leave them all to the sandbox
        options += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/dev/shm", "--tmpfs", "/tmp", "--tmpfs", "/var/tmp"]
        # The system's folders, then its secrets hidden in them; then the agent's folders, each after any that holds
        # it: a hidden folder inside a readable or writable one (the data folder in a workspace) is covered after
        # it, and a writable one inside a hidden one (a home in the data folder) after that.
        hides = [mount for mount in self.system if mount.kind in ("tmpfs", "hide")]
        for mount in [*(mount for mount in self.system if mount not in hides), *hides]:
            if not (self.network and mount.path == RESOLV_CONF):
                options += mount.options()
        if self.network:
            options += ["--ro-bind-data", str(RESOLV_FD), RESOLV_CONF]
        shown = [*(Path(mount.path) for mount in self.system if mount.kind.startswith("ro-bind")), *self.readable]
        shown += self.writable
        hidden = [path for path in self.hidden if any(path.is_relative_to(folder) for folder in shown)]
        masks = [mount.path for mount in hides if mount.kind == "tmpfs"] + [str(path) for path in hidden]
        # "-try": a folder that is not there (an extra root not made yet) is left out rather than failing the start.
        mounts = {**{path: "--ro-bind-try" for path in self.readable}, **{path: "--bind-try" for path in self.writable}}
        mounts.update({path: "--tmpfs" for path in hidden})  # the same folder hidden and writable: hidden
        for path in _outermost_first(list(mounts)):
            kind = mounts[path]
            options += [kind, str(path)] if kind == "--tmpfs" else [kind, str(path), str(path)]
        for file in self.hidden_files:
            if any(file.is_relative_to(folder) for folder in shown):
                options += ["--ro-bind", "/dev/null", str(file)]
        # Neither the empty folders over hidden ones nor those bwrap made to mount on (the data folder around a home
        # in it) are a place to write; the writable folders inside them stay writable.
        for mask in ["/", *masks]:
            options += ["--remount-ro", mask]
        options += ["--chdir", str(cwd), "--"]
        if self.network:
            return [*self.user_network, "--", *options, *argv]
        return options + list(argv)

    def environment(self, server: Mapping[str, str], own: Mapping[str, str] | None = None) -> dict[str, str]:
        """The variables a process of the agent starts with: ``own`` (its catalogue env, its person's home and
        secrets, what a request adds) over those of the ``server``'s it may have.

        Unconfined, the server's are all of them but its ``WEBCLIENT_*`` settings; in a sandbox, only
        `ALLOWED_VARIABLES` and ``LC_*``, and HOME is the agent's own (its person's home) or none at all.
        """
        if self.bwrap is None:
            inherited = {k: v for k, v in server.items() if not k.startswith(SERVER_PRIVATE_PREFIX)}
        else:
            inherited = {k: v for k, v in server.items() if k in ALLOWED_VARIABLES or k.startswith(_ALLOWED_PREFIXES)}
            if self.home is not None:
                inherited["HOME"] = str(self.home)
        return {**inherited, **(own or {})}


RESOLV_CONF = "/etc/resolv.conf"

UNCONFINED = Sandbox()
"""No sandbox: ``WEBCLIENT_SANDBOX=none``, and every process that is not an agent's."""


def _outermost_first(paths: Sequence[Path]) -> list[Path]:
    """Each path once, a folder before what lies inside it (a mount inside another must come after it)."""
    return sorted(set(paths), key=lambda path: (len(path.parts), str(path)))
