"""What this machine gives a `webclient.workspace.sandbox.Sandbox`: bwrap's path, the system folders as they are laid
out here, the folders an agent's own installation lies in, and whether bwrap works at all (`probe`).

Kept apart from the policy, which reads no file and starts no process: everything here looks at the machine.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from webclient.workspace import sandbox_network
from webclient.workspace.sandbox import Mount, Sandbox

__all__ = ["SandboxUnavailable", "find_bwrap", "find_user_network", "installation", "probe", "system_mounts"]

SYSTEM_FOLDERS = ("/usr",)
"""Read-only in every sandbox, whole."""
ETC_ALLOWED = (
    *("ld.so.cache", "ld.so.conf", "ld.so.conf.d"),  # the loader
    *("ssl/certs", "ssl/openssl.cnf", "ca-certificates", "ca-certificates.conf", "pki"),  # TLS's trusted roots
    *("resolv.conf", "hosts", "nsswitch.conf", "host.conf", "gai.conf", "protocols", "services"),  # names
    *("passwd", "group"),  # who owns a file (no password is kept there: those are in shadow, never shown)
    *("localtime", "timezone", "locale.alias", "os-release", "debian_version", "mime.types", "mtab"),
    *("alternatives", "gitconfig", "inputrc", "profile", "bash.bashrc", "terminfo", "magic", "magic.mime"),
)
"""What a sandbox shows of ``/etc``, nothing else: the loader, certificates, name resolution, users and groups, time,
what programs look up at start (git, a shell, ``file``). Never the server's config or registry file, wherever they
lie, nor any other file an operator keeps there (the guide's ``/etc/webclient``)."""
LIB_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
"""Symlinks into ``/usr`` on a merged-``/usr`` system (Debian 12), folders of their own on an older one."""
PROBE_SECONDS = 10.0


class SandboxUnavailable(ValueError):
    """``WEBCLIENT_SANDBOX=bwrap`` cannot work on this machine; the message says why and what to do."""


def find_bwrap() -> str | None:
    """bwrap's full path on the server's PATH, or None."""
    return shutil.which("bwrap")


def find_user_network() -> tuple[str, ...]:
    """The command that gives a sandbox with the network on a network of its own (`sandbox_network` run by this
    interpreter, with slirp4netns's path), or ``()`` when slirp4netns is not installed."""
    slirp = shutil.which("slirp4netns")
    if slirp is None:
        return ()
    return (sys.executable, "-I", "-S", os.path.abspath(sandbox_network.__file__), slirp)


def system_mounts() -> tuple[Mount, ...]:
    """The system's folders as this machine has them: ``/usr`` read-only, ``/lib`` and the others as the symlinks or
    folders they are, and of ``/etc`` only `ETC_ALLOWED` (a symlink into ``/usr`` or ``/proc`` as the symlink it
    is, any other one as the file it names: ``resolv.conf`` into ``/run``)."""
    mounts = [Mount("ro-bind", folder) for folder in SYSTEM_FOLDERS if os.path.isdir(folder)]
    for link in LIB_LINKS:
        if os.path.islink(link):
            mounts.append(Mount("symlink", link, os.readlink(link)))
        elif os.path.isdir(link):
            mounts.append(Mount("ro-bind", link))
    for name in ETC_ALLOWED:
        path = f"/etc/{name}"
        if os.path.islink(path) and os.path.realpath(path).startswith(("/usr/", "/proc/")):
            mounts.append(Mount("symlink", path, os.readlink(path)))
        elif os.path.exists(path):
            mounts.append(Mount("ro-bind-try", path))
    return tuple(mounts)


def installation(argv: Sequence[str], path_env: str) -> tuple[Path, ...]:
    """The folders an agent's own installation lies in, to be read: its program's (found on ``path_env``), the
    interpreter its ``#!`` line names, and each argument that is the absolute path of a file (the script it runs).

    A program in ``PREFIX/bin`` gives ``PREFIX`` (a virtualenv, a Node install), one in a package's
    ``node_modules`` the folder that holds them (and where they are when that is a symlink), any other file its own
    folder; a symlink gives both ends. What the system's folders hold already is left out, and a folder just under
    ``/`` is never given whole (the file alone is).
    """
    if not argv:
        return ()
    program = argv[0] if os.sep in argv[0] else shutil.which(argv[0], path=path_env)
    files = [program] if program else []
    if program:
        files += _interpreter(program)
    files += [arg for arg in argv[1:] if os.path.isabs(arg) and os.path.isfile(arg)]
    found: list[Path] = []
    for file in files:
        for path in {Path(os.path.abspath(file)), Path(os.path.realpath(file))}:
            root = _root_of(path)
            if root is not None and root not in found:
                found.append(root)
            # A script's packages kept elsewhere (node_modules a symlink): where they really are, too.
            modules = root / "node_modules" if root is not None else None
            if modules is not None and modules.is_symlink() and (real := Path(os.path.realpath(modules))).is_dir():
                found.append(real)
    return tuple(dict.fromkeys(found))


def _interpreter(program: str) -> list[str]:
    """The interpreter of a script's ``#!`` line (``#!/usr/bin/env node``: node on no PATH but the system's)."""
    try:
        with open(program, "rb") as file:
            first = file.readline(512)
    except OSError:
        return []
    if not first.startswith(b"#!"):
        return []
    words = first[2:].decode(errors="replace").split()
    if not words:
        return []
    return [words[0]]


def _root_of(file: Path) -> Path | None:
    # Nothing of /etc but what the system's mounts show: never a folder of it, were an agent's script kept there.
    if any(file.is_relative_to(folder) for folder in (*SYSTEM_FOLDERS, "/etc", *LIB_LINKS)):
        return None
    parts = file.parts
    if "node_modules" in parts:
        root = Path(*parts[: parts.index("node_modules")])
    elif file.parent.name == "bin":
        root = file.parent.parent
    else:
        root = file.parent
    if len(root.parts) <= 2:  # "/" or "/root", "/home", "/srv": the file alone, never the whole folder
        return file
    return root


def probe(sandbox: Sandbox) -> None:
    """Run ``true`` in ``sandbox`` (network off, and on when this machine has a user-mode network), as every agent
    will be run.

    Raises:
        SandboxUnavailable: bwrap is missing, or the kernel refuses it a namespace (its own words, and what to do).
    """
    assert sandbox.bwrap is not None, "no sandbox to probe"
    true = shutil.which("true", path="/usr/bin:/bin") or "/usr/bin/true"
    for network in (False, True) if sandbox.user_network else (False,):
        command = dataclasses.replace(sandbox, network=network).command([true], Path("/"))
        # With the network on, once more before refusing to start: on a machine busy starting other sandboxes the
        # user-mode network was seen, rarely, not to come up once (the kernel's refusal repeats; this did not).
        for attempt in (1, 2) if network else (2,):
            try:
                ran = subprocess.run(command, capture_output=True, timeout=PROBE_SECONDS, stdin=subprocess.DEVNULL)
            except (OSError, subprocess.TimeoutExpired) as error:
                raise SandboxUnavailable(f"WEBCLIENT_SANDBOX=bwrap, but {sandbox.bwrap} cannot run: {error}") from None
            if ran.returncode == 0 or attempt == 2:
                break
        if ran.returncode != 0:
            said = ran.stderr.decode(errors="replace").strip() or f"exit status {ran.returncode}"
            raise SandboxUnavailable(
                f"WEBCLIENT_SANDBOX=bwrap, but bubblewrap cannot make a sandbox on this machine ({said}). It needs "
                "user namespaces (sysctl kernel.unprivileged_userns_clone=1; in a container, one that allows "
                "them, e.g. docker run --security-opt seccomp=unconfined --security-opt apparmor=unconfined), or "
                "set WEBCLIENT_SANDBOX=none"
            )
