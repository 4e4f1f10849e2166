"""One git worktree per session: made on a branch of its own from a repository's HEAD, committed, discarded, removed.

The repository is the person's, and its ``.git`` the agent's to write: untrusted. So git runs here as a plain
program (no shell), with a bounded time and output, nothing of this process's ``GIT_*`` variables, no system or
global config (``HOME`` an empty folder of ours), and with everything a repository's config could make it run turned
off on the command line: its hooks (``core.hooksPath=/dev/null``), ``core.fsmonitor``, external diffs and text
conversions, its filters' commands (each named one emptied), signing, and ``gc --auto``. Synchronous: callers run it
off the event loop (``asyncio.to_thread``).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import threading
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from webclient.workspace.no_follow import read_file
from webclient.workspace.path_errors import FileTooLarge, PathRefused

GIT_SECONDS = 60.0
"""Longest any one git command may run (a checkout of a large repository included)."""
MAX_OUTPUT = 8 * 1024 * 1024
"""Most bytes read from one git command's output; past that it is stopped and the command fails."""
MAX_SHOWN_BYTES = 1024 * 1024
"""Largest file the branch's diff shows (old or new side)."""
MAX_SHOWN_FILES = 300
"""Most files the branch's diff lists."""
COMMITTER = ("ACP web client", "webclient@localhost")
"""Who commits (git's committer): the server; the author is the person."""

_HARDENED = (
    "-c", "core.hooksPath=/dev/null",
    "-c", "core.fsmonitor=false",
    "-c", "core.untrackedCache=false",
    "-c", "diff.external=",
    "-c", "commit.gpgSign=false",
    "-c", "tag.gpgSign=false",
    "-c", "gc.auto=0",
    "-c", "maintenance.auto=false",
    "-c", "core.editor=true",
    "-c", "core.pager=cat",
    "-c", "credential.helper=",
    "-c", "protocol.allow=never",
)  # fmt: skip
"""What every git command is told, whatever the repository's config says."""


class GitFailed(Exception):
    """A git command failed; the message says what for a person."""


class NotARepository(GitFailed):
    """The folder is not in a git repository (or its git would not say where)."""


@dataclass(frozen=True, slots=True)
class Worktree:
    """A session's worktree: its folder, its branch, the commit it was made at, and the repository it belongs to."""

    path: Path
    branch: str
    base: str
    """The commit (full hash) the branch started at: what the branch's diff is against."""
    repository: Path
    """The main checkout's top folder."""
    git_folder: Path
    """The repository's own ``.git`` folder, as git said when the worktree was made (its sandbox may write it)."""

    @property
    def admin_folder(self) -> Path:
        """The worktree's own folder in the repository's ``.git`` (its HEAD, index): git names it after the worktree's
        folder (`add` checks that it did)."""
        return self.git_folder / "worktrees" / self.path.name

    def journalled(self) -> dict[str, str]:
        """What the journal keeps of it (`from_journal` reads it back)."""
        return {key: str(value) for key, value in asdict(self).items()}

    @classmethod
    def from_journal(cls, record: dict[str, Any]) -> Worktree:
        path, repository, git_folder = (Path(str(record[key])) for key in ("path", "repository", "git_folder"))
        return cls(path, str(record["branch"]), str(record["base"]), repository, git_folder)


_home_lock = threading.Lock()
_home: list[Path] = []


def _empty_home() -> Path:
    """An empty folder of ours as git's HOME: no one's ``~/.gitconfig`` is read."""
    with _home_lock:
        if not _home:
            _home.append(Path(tempfile.mkdtemp(prefix="webclient-git-home-")))
        return _home[0]


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env.update(
        HOME=str(_empty_home()),
        XDG_CONFIG_HOME=str(_empty_home()),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL="/dev/null",
        GIT_TERMINAL_PROMPT="0",
        GIT_OPTIONAL_LOCKS="0",
        LC_ALL="C",
    )
    env.update(extra or {})
    return env


def git(
    cwd: Path,
    *args: str,
    inside: Worktree | None = None,
    env: dict[str, str] | None = None,
    seconds: float = GIT_SECONDS,
    max_output: int = MAX_OUTPUT,
    check: bool = True,
) -> tuple[int, bytes]:
    """Run ``git args`` in ``cwd`` hardened (see the module's docstring); its exit code and its output. ``inside``:
    a worktree whose git folder and work tree are given on the command line, never read from its ``.git`` file or a
    ``core.worktree`` the agent could write (a Discard must never clean another folder).

    Raises:
        GitFailed: git is missing, ran too long, said too much, or (``check``) exited with an error (its words).
    """
    git_path = shutil.which("git")
    if git_path is None:
        raise GitFailed("git is not installed on the server.")
    pinned = [f"--git-dir={inside.admin_folder}", f"--work-tree={inside.path}"] if inside is not None else []
    command = [git_path, "--no-pager", *pinned, *_HARDENED, *_filters_off(cwd, git_path, pinned), *args]
    try:
        process = subprocess.Popen(
            command, cwd=cwd, env=_env(env), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, start_new_session=True,
        )  # fmt: skip
    except OSError as error:
        raise GitFailed(f"git could not start in {cwd}: {error.strerror or error}") from None
    timed_out = threading.Event()

    def stop() -> None:
        timed_out.set()
        process.kill()

    timer = threading.Timer(seconds, stop)
    timer.start()
    errors: list[bytes] = []
    reader = threading.Thread(target=lambda: errors.append(_bounded(process.stderr, 64 * 1024)), daemon=True)
    reader.start()
    try:
        assert process.stdout is not None
        output = _bounded(process.stdout, max_output + 1)
        if len(output) > max_output:
            process.kill()
        code = process.wait()
    finally:
        timer.cancel()
        reader.join(timeout=5)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()
    if timed_out.is_set():
        raise GitFailed(f"git {args[0]} took longer than {seconds:.0f} s and was stopped.")
    if len(output) > max_output:
        raise GitFailed(f"git {args[0]} said more than {max_output:,} bytes and was stopped.")
    if check and code != 0:
        said = b"".join(errors).decode(errors="replace").strip().splitlines()
        raise GitFailed(f"git {args[0]} failed: {said[-1] if said else f'exit code {code}'}")
    return code, output


def _bounded(stream: Any, limit: int) -> bytes:
    """Up to ``limit`` bytes of ``stream`` (the rest is drained, so the process never blocks on a full pipe)."""
    kept = bytearray()
    while chunk := stream.read(65536):
        if len(kept) < limit:
            kept += chunk[: limit - len(kept)]
        if len(kept) >= limit:
            break
    return bytes(kept)


def _filters_off(cwd: Path, git_path: str, pinned: list[str]) -> list[str]:
    """``-c filter.NAME.clean=`` and the like for each filter the repository's config names (a filter's command
    runs on checkout and ``add``; an empty one is no filter)."""
    try:
        found = subprocess.run(
            [git_path, "--no-pager", *pinned, *_HARDENED, "config", "--name-only", "--get-regexp", r"^filter\."],
            cwd=cwd, env=_env(), stdin=subprocess.DEVNULL, capture_output=True, timeout=10,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return []
    names = {line.rsplit(".", 1)[0] for line in found.stdout.decode(errors="replace").splitlines()[:200]}
    off: list[str] = []
    for name in sorted(names):
        for key, value in (("clean", ""), ("smudge", ""), ("process", ""), ("required", "false")):
            off += ["-c", f"{name}.{key}={value}"]
    return off


def top_level(folder: Path) -> Path:
    """The top folder of the repository ``folder`` is in (the main checkout's, or a linked worktree's).

    Raises:
        NotARepository: with a sentence for the person.
    """
    if not folder.is_dir():
        raise NotARepository(f"{folder} is not a folder.")
    code, output = git(folder, "rev-parse", "--show-toplevel", check=False)
    top = output.decode(errors="replace").strip()
    if code != 0 or not top:
        raise NotARepository(f"{folder} is not in a git repository: a worktree needs one.")
    return Path(top)


def common_dir(repository: Path) -> Path:
    """The repository's own ``.git`` folder (every worktree's objects, refs and worktree records are there)."""
    _, output = git(repository, "rev-parse", "--path-format=absolute", "--git-common-dir")
    return Path(output.decode(errors="replace").strip())


def branch_name(session_id: str, label: str | None) -> str:
    """``webclient/<short session id>-<slug of label>``: a branch name git accepts, unique per session."""
    slug = re.sub(r"[^a-z0-9]+", "-", (label or "").lower()).strip("-")[:40].strip("-")
    short = re.sub(r"[^A-Za-z0-9]", "x", session_id)[:8]
    return f"webclient/{short}-{slug}" if slug else f"webclient/{short}"


def add(folder: Path, path: Path, branch: str) -> Worktree:
    """A new worktree of the repository ``folder`` is in, at ``path``, on a new ``branch`` from its HEAD.

    Raises:
        NotARepository: ``folder`` is not in a repository.
        GitFailed: the repository has no commit yet, the branch exists, or git failed otherwise (its words).
    """
    repository = top_level(folder)
    code, output = git(repository, "rev-parse", "--verify", "--quiet", "HEAD^{commit}", check=False)
    if code != 0:
        raise GitFailed(f"The repository {repository} has no commit yet: a worktree starts from one.")
    base = output.decode().strip()
    path.parent.mkdir(parents=True, exist_ok=True)
    git(repository, "worktree", "add", "--quiet", "-b", branch, str(path), base)
    made = Worktree(path, branch, base, repository, common_dir(repository))
    _, admin = git(path, "rev-parse", "--absolute-git-dir")
    if Path(admin.decode().strip()) != made.admin_folder:
        git(repository, "worktree", "remove", "--force", str(path))
        raise GitFailed(f"git named the worktree {admin.decode().strip()}, not {made.admin_folder}.")
    return made


def status(worktree: Worktree) -> list[str]:
    """The worktree's uncommitted changes, one ``XY path`` per file (untracked ones included); empty when clean."""
    _, output = git(
        worktree.path, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames", inside=worktree
    )
    return [entry.decode(errors="replace") for entry in output.split(b"\0") if entry]


def head(worktree: Worktree) -> str:
    _, output = git(worktree.path, "rev-parse", "HEAD", inside=worktree)
    return output.decode().strip()


def commit(worktree: Worktree, message: str, author: tuple[str, str]) -> str | None:
    """Commit every change of the worktree (``add -A``) on its branch, by ``author`` (name, email), committed by the
    server; the new commit's hash, or None when there was nothing to commit."""
    if not status(worktree):
        return None
    git(worktree.path, "add", "--all", inside=worktree)
    people = {
        "GIT_AUTHOR_NAME": author[0], "GIT_AUTHOR_EMAIL": author[1],
        "GIT_COMMITTER_NAME": COMMITTER[0], "GIT_COMMITTER_EMAIL": COMMITTER[1],
    }  # fmt: skip
    git(
        worktree.path,
        "commit",
        "--quiet",
        "--no-verify",
        "--no-edit",
        "--cleanup=strip",
        "-m",
        message,
        inside=worktree,
        env=people,
    )
    return head(worktree)


def discard(worktree: Worktree) -> None:
    """Put the worktree back to its last commit: changes to tracked files undone, untracked files removed (ignored
    ones stay)."""
    git(worktree.path, "reset", "--quiet", "--hard", "HEAD", inside=worktree)
    git(worktree.path, "clean", "--quiet", "-d", "--force", inside=worktree)


def remove(worktree: Worktree) -> bool:
    """Remove the worktree (its branch stays) unless it has uncommitted work: whether it was removed. A worktree
    already gone is pruned from the repository's records."""
    if worktree.path.exists():
        if status(worktree):
            return False
        git(worktree.repository, "worktree", "remove", str(worktree.path))
    git(worktree.repository, "worktree", "prune")
    return True


@dataclass(frozen=True, slots=True)
class BranchFile:
    """One file the branch changed since its base: its path in the repository, its text there and now (None: absent,
    or too large or not text to show)."""

    path: str
    old: str | None
    new: str | None
    shown: bool = True
    """False when one side was too large or binary (the file is listed, not drawn)."""


def branch_files(worktree: Worktree) -> tuple[list[BranchFile], int]:
    """The files the branch changed since it started (committed or not, untracked ones too), at most
    ``MAX_SHOWN_FILES``; with how many there are in all."""
    options = ("--no-ext-diff", "--no-textconv", "--no-renames", "--name-only", "-z")
    _, changed = git(worktree.path, "diff", *options, worktree.base, inside=worktree)
    _, untracked = git(worktree.path, "ls-files", "--others", "--exclude-standard", "-z", inside=worktree)
    found = (changed + b"\0" + untracked).split(b"\0")
    names = sorted({name.decode(errors="surrogateescape") for name in found if name})
    return [_branch_file(worktree, name) for name in names[:MAX_SHOWN_FILES]], len(names)


def _branch_file(worktree: Worktree, name: str) -> BranchFile:
    old, old_ok = _at_base(worktree, name)
    new, new_ok = _now(Path(os.path.realpath(worktree.path)), name)
    return BranchFile(name, old, new, old_ok and new_ok)


def _at_base(worktree: Worktree, name: str) -> tuple[str | None, bool]:
    code, size = git(worktree.path, "cat-file", "-s", f"{worktree.base}:{name}", inside=worktree, check=False)
    if code != 0:
        return None, True
    if int(size.strip() or 0) > MAX_SHOWN_BYTES:
        return None, False
    _, data = git(
        worktree.path, "cat-file", "blob", f"{worktree.base}:{name}", inside=worktree, max_output=MAX_SHOWN_BYTES
    )
    return _text(data)


def _now(root: Path, name: str) -> tuple[str | None, bool]:
    """The file ``name`` of the worktree ``root`` (resolved) as it is now, opened without following any symlink (the
    agent may swap a folder for one between git's listing and this read)."""
    try:
        return _text(read_file([root], root / name, name, max_bytes=MAX_SHOWN_BYTES))
    except FileNotFoundError:
        return None, True
    except (PathRefused, FileTooLarge, OSError):
        return None, False


def _text(data: bytes) -> tuple[str | None, bool]:
    if b"\0" in data[:8192] or len(data) > MAX_SHOWN_BYTES:
        return None, False
    try:
        return data.decode(), True
    except UnicodeDecodeError:
        return None, False
