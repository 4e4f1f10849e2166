"""What this machine gives a `webclient.workspace.sandbox.Sandbox`: bwrap's path, the system folders as they are laid
out here, the folders an agent's own installation lies in, and whether bwrap works at all (`probe`).

Kept apart from the policy, which reads no file and starts no process: everything here looks at the machine.
"""

from __future__ import annotations

import dataclasses
import glob
import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from webclient.workspace.sandbox import Mount, Sandbox

__all__ = ["SandboxUnavailable", "find_bwrap", "installation", "probe", "system_mounts"]

SYSTEM_FOLDERS = ("/usr", "/etc")
"""Read-only in every sandbox (``/etc`` without `SECRET_FILES` and `SECRET_FOLDERS`)."""
LIB_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
"""Symlinks into ``/usr`` on a merged-``/usr`` system (Debian 12), folders of their own on an older one."""
SECRET_FILES = ("/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/security/opasswd")
SECRET_GLOBS = ("/etc/ssh/ssh_host_*_key",)
SECRET_FOLDERS = ("/etc/ssl/private",)
PROBE_SECONDS = 10.0


class SandboxUnavailable(ValueError):
    """``WEBCLIENT_SANDBOX=bwrap`` cannot work on this machine; the message says why and what to do."""


def find_bwrap() -> str | None:
    """bwrap's full path on the server's PATH, or None."""
    return shutil.which("bwrap")


def system_mounts() -> tuple[Mount, ...]:
    """The system's folders as this machine has them: ``/usr`` and ``/etc`` read-only, ``/lib`` and the others as
    the symlinks or folders they are, the resolver's file when ``/etc/resolv.conf`` points elsewhere, and the
    system's secrets (password hashes, the SSH host keys, TLS private keys) hidden."""
    mounts = [Mount("ro-bind", folder) for folder in SYSTEM_FOLDERS if os.path.isdir(folder)]
    for link in LIB_LINKS:
        if os.path.islink(link):
            mounts.append(Mount("symlink", link, os.readlink(link)))
        elif os.path.isdir(link):
            mounts.append(Mount("ro-bind", link))
    resolver = os.path.realpath("/etc/resolv.conf")
    if not resolver.startswith(("/etc/", "/usr/")) and os.path.exists(resolver):
        mounts.append(Mount("ro-bind-try", resolver))
    secrets = [path for path in SECRET_FILES if os.path.lexists(path)]
    secrets += [path for pattern in SECRET_GLOBS for path in sorted(glob.glob(pattern))]
    mounts += [Mount("hide", path) for path in secrets if os.path.isfile(path) and not os.path.islink(path)]
    mounts += [Mount("tmpfs", path) for path in SECRET_FOLDERS if os.path.isdir(path)]
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
    if any(file == Path(folder) or file.is_relative_to(folder) for folder in (*SYSTEM_FOLDERS, *LIB_LINKS)):
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
    """Run ``true`` in ``sandbox`` (and again with the network on and off), as every agent will be run.

    Raises:
        SandboxUnavailable: bwrap is missing, or the kernel refuses it a namespace (its own words, and what to do).
    """
    assert sandbox.bwrap is not None, "no sandbox to probe"
    true = shutil.which("true", path="/usr/bin:/bin") or "/usr/bin/true"
    for network in (False, True):
        command = dataclasses.replace(sandbox, network=network).command([true], Path("/"))
        try:
            ran = subprocess.run(command, capture_output=True, timeout=PROBE_SECONDS, stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired) as error:
            raise SandboxUnavailable(f"WEBCLIENT_SANDBOX=bwrap, but {sandbox.bwrap} cannot run: {error}") from None
        if ran.returncode != 0:
            said = ran.stderr.decode(errors="replace").strip() or f"exit status {ran.returncode}"
            raise SandboxUnavailable(
                f"WEBCLIENT_SANDBOX=bwrap, but bubblewrap cannot make a sandbox on this machine ({said}). It needs "
                "user namespaces (sysctl kernel.unprivileged_userns_clone=1; in a container, one that allows "
                "them, e.g. docker run --security-opt seccomp=unconfined --security-opt apparmor=unconfined), or "
                "set WEBCLIENT_SANDBOX=none"
            )
