"""A session's checkpoints of its folder, in a git store of their own: what a snapshot keeps and leaves out, what a
restore writes back and deletes, and what it never touches (the folder's own .git, anything through a symlink)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from webclient.workspace.checkpoint_git import CheckpointFailed
from webclient.workspace.checkpoints import CheckpointStore, FileChange
from webclient.workspace.paths import Workspace

MIB = 1024 * 1024


def git(folder: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(folder), *args], check=True, capture_output=True, text=True).stdout


def tree_of(folder: Path) -> dict[str, bytes]:
    """Every file below ``folder`` but its .git, by relative path (a symlink as ``-> target``)."""
    found: dict[str, bytes] = {}
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder)
        if relative.parts[0] == ".git":
            continue
        if path.is_symlink():
            found[relative.as_posix()] = b"-> " + os.readlink(path).encode()
        elif path.is_file():
            found[relative.as_posix()] = path.read_bytes()
    return found


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    (folder / "src" / "deep").mkdir(parents=True)
    (folder / "src" / "main.py").write_text("print('one')\n")
    (folder / "src" / "deep" / "util.py").write_text("x = 1\n")
    (folder / "README.md").write_text("readme\n")
    return folder


def store_for(tmp_path: Path, folder: Path, max_mb: float = 10) -> CheckpointStore:
    return CheckpointStore(tmp_path / "data" / "checkpoints" / "s1.git", folder, int(max_mb * MIB))


def test_a_restore_puts_back_what_changed_and_deletes_what_was_made_since(tmp_path: Path, workspace: Path) -> None:
    store = store_for(tmp_path, workspace)
    before = tree_of(workspace)
    checkpoint = store.snapshot()
    assert checkpoint.files == 3 and checkpoint.skipped_count == 0

    (workspace / "src" / "main.py").write_text("print('two')\n")
    (workspace / "README.md").unlink()
    (workspace / "made" / "since").mkdir(parents=True)
    (workspace / "made" / "since" / "new.py").write_text("new\n")
    (workspace / "src" / "main.py").chmod(0o755)

    assert store.changes_since(checkpoint.tree) == [
        FileChange("deleted", "README.md"),
        FileChange("added", "made/since/new.py"),
        FileChange("modified", "src/main.py"),
    ]
    restored = store.restore(checkpoint.tree, Workspace([workspace]))
    assert sorted(restored.written) == ["README.md", "src/main.py"] and restored.deleted == ["made/since/new.py"]
    assert restored.refused == []
    assert tree_of(workspace) == before
    assert not (workspace / "made").exists()  # the folders made for it go too, once empty
    assert not os.access(workspace / "src" / "main.py", os.X_OK)  # its mode as it was
    assert store.changes_since(checkpoint.tree) == []


def test_untracked_files_are_kept_the_folders_gitignore_honoured_and_its_git_untouched(
    tmp_path: Path, workspace: Path
) -> None:
    git(workspace, "init", "-q")
    git(workspace, "-c", "user.name=t", "-c", "user.email=t@t", "add", "src")
    git(workspace, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    (workspace / ".gitignore").write_text("*.log\nbuild/\n")
    (workspace / "debug.log").write_text("noise\n")
    (workspace / "build").mkdir()
    (workspace / "build" / "out.js").write_text("built\n")
    hooks = workspace / ".git" / "hooks"
    marker = tmp_path / "ran"
    for hook in ("pre-commit", "post-index-change", "fsmonitor-watchman"):
        (hooks / hook).write_text(f"#!/bin/sh\ntouch {marker}\n")
        (hooks / hook).chmod(0o755)
    git(workspace, "config", "core.fsmonitor", str(hooks / "fsmonitor-watchman"))
    git(workspace, "config", "core.hooksPath", str(hooks))
    before = {path: path.read_bytes() for path in (workspace / ".git").rglob("*") if path.is_file()}

    store = store_for(tmp_path, workspace)
    checkpoint = store.snapshot()
    (workspace / "README.md").write_text("changed\n")  # untracked in the folder's own repository
    (workspace / "debug.log").write_text("more noise\n")
    (workspace / "build" / "out.js").unlink()
    assert store.changes_since(checkpoint.tree) == [FileChange("modified", "README.md")]
    store.restore(checkpoint.tree, Workspace([workspace]))

    assert (workspace / "README.md").read_text() == "readme\n"
    assert (workspace / "debug.log").read_text() == "more noise\n"  # ignored: never in a checkpoint
    assert not (workspace / "build" / "out.js").exists()
    after = {path: path.read_bytes() for path in (workspace / ".git").rglob("*") if path.is_file()}
    assert after == before and not marker.exists()  # not a byte of its .git written, nothing of it run
    assert git(workspace, "status", "--porcelain").splitlines() == ["?? .gitignore", "?? README.md"]


def test_big_and_binary_files_and_other_repositories_are_left_out_and_named(tmp_path: Path, workspace: Path) -> None:
    (workspace / "big.txt").write_bytes(b"a" * (MIB + 1))
    (workspace / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0")
    nested = workspace / "vendor" / "lib"
    nested.mkdir(parents=True)
    git(nested, "init", "-q")
    (nested / "lib.c").write_text("int x;\n")
    store = store_for(tmp_path, workspace, max_mb=1)
    checkpoint = store.snapshot()
    assert sorted(checkpoint.skipped) == ["big.txt", "image.png", "vendor/lib/"] and checkpoint.skipped_count == 3

    (workspace / "big.txt").write_bytes(b"b" * 10)  # small now: in the current state, not in the checkpoint
    (workspace / "image.png").write_bytes(b"\x89PNG changed\0")
    (nested / "lib.c").write_text("int y;\n")
    assert store.changes_since(checkpoint.tree) == [FileChange("added", "big.txt")]
    store.restore(checkpoint.tree, Workspace([workspace]))
    assert (workspace / "image.png").read_bytes() == b"\x89PNG changed\0"  # left as it is
    assert (nested / "lib.c").read_text() == "int y;\n"


def test_a_restore_never_follows_a_symlink_out_of_the_folder(tmp_path: Path, workspace: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("keep me\n")
    store = store_for(tmp_path, workspace)
    checkpoint = store.snapshot()

    # The agent replaced a folder of the checkpoint by a symlink out, and a file by a symlink to a file outside.
    (workspace / "src" / "deep" / "util.py").unlink()
    (workspace / "src" / "deep").rmdir()
    (workspace / "src" / "deep").symlink_to(outside)
    (workspace / "README.md").unlink()
    (workspace / "README.md").symlink_to(outside / "secret.txt")
    (workspace / "link-out").symlink_to(outside / "secret.txt")  # made since: the link goes, never its target

    restored = store.restore(checkpoint.tree, Workspace([workspace]))
    assert (outside / "secret.txt").read_text() == "keep me\n"
    assert sorted(os.listdir(outside)) == ["secret.txt"]  # nothing written through src/deep: the link went first
    assert restored.refused == [] and sorted(restored.deleted) == ["link-out", "src/deep"]
    assert (workspace / "src" / "deep").is_dir() and not (workspace / "src" / "deep").is_symlink()
    assert (workspace / "src" / "deep" / "util.py").read_text() == "x = 1\n"
    assert (workspace / "README.md").read_text() == "readme\n" and not (workspace / "README.md").is_symlink()
    assert not (workspace / "link-out").is_symlink()


def test_a_second_snapshot_reads_only_what_changed_and_a_deleted_store_is_gone(tmp_path: Path, workspace: Path) -> None:
    store = store_for(tmp_path, workspace)
    first = store.snapshot()
    assert store.snapshot().tree == first.tree  # nothing changed: the same tree
    (workspace / "src" / "main.py").write_text("print('two')\n")
    second = store.snapshot()
    assert second.tree != first.tree
    store.delete()
    assert not store.git_dir.exists()
    with pytest.raises(CheckpointFailed):
        store.changes_since("not a tree")


def test_the_servers_own_files_in_the_folder_are_never_in_a_checkpoint(tmp_path: Path, workspace: Path) -> None:
    data = workspace / "my data [1]"  # the server's data folder in the session's folder, with the stores in it
    (data / "other").mkdir(parents=True)
    (data / "other" / "webclient.sqlite3").write_text("the store\n")
    store = CheckpointStore(data / "checkpoints" / "s1.git", workspace, MIB, hidden=[data])
    first = store.snapshot()
    second = store.snapshot()  # the store's own objects, made by the first, are not taken either
    assert first.tree == second.tree and first.files == 3
    (data / "other" / "webclient.sqlite3").write_text("changed\n")
    assert store.changes_since(first.tree) == []


def test_a_first_snapshot_packed_in_one_go_is_the_same_tree_as_one_file_by_file(
    tmp_path: Path, workspace: Path
) -> None:
    (workspace / "run.sh").write_text("#!/bin/sh\n")
    (workspace / "run.sh").chmod(0o755)
    (workspace / '"quoted" name.txt').write_text("q\n")
    (workspace / "new\nline.txt").write_text("n\n")
    (workspace / "back\\slash é.txt").write_text("b\n")
    (workspace / "link").symlink_to("src/main.py")
    packed = CheckpointStore(tmp_path / "packed.git", workspace, MIB)
    packed.pack_from = 1
    one_by_one = CheckpointStore(tmp_path / "loose.git", workspace, MIB)
    one_by_one.pack_from = 10**9
    first = packed.snapshot()
    assert first == one_by_one.snapshot() and first.files == 8
    assert not any((packed.git_dir / "objects").glob("??/*"))  # every blob and tree in the pack, none loose
    (workspace / "run.sh").write_text("#!/bin/sh\necho\n")
    assert packed.snapshot() == one_by_one.snapshot()
    assert packed.changes_since(first.tree) == [FileChange("modified", "run.sh")]


def visible(folder: Path, left_out: tuple[str, ...]) -> dict[str, bytes]:
    """``tree_of`` without what a checkpoint leaves out (and a restore leaves as it is)."""
    return {path: data for path, data in tree_of(folder).items() if not path.startswith(left_out)}


def _rename_a_file(folder: Path) -> None:
    (folder / "src" / "deep" / "util.py").rename(folder / "src" / "deep" / "tool.py")


def _replace_a_folder_by_a_file(folder: Path) -> None:
    for path in (folder / "src" / "deep").iterdir():
        path.unlink()
    (folder / "src" / "deep").rmdir()
    (folder / "src" / "deep").write_text("a file where a folder was\n")


def _replace_a_file_by_a_folder(folder: Path) -> None:
    (folder / "src" / "deep").unlink()
    (folder / "src" / "deep" / "again").mkdir(parents=True)
    (folder / "src" / "deep" / "again" / "util.py").write_text("x = 3\n")


def _same_size_and_time(folder: Path) -> None:
    path = folder / "src" / "main.py"
    before = path.stat()
    path.write_bytes(path.read_bytes().upper())  # the same size
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # and the same time: git sees its ctime


def _gitignore_changed(folder: Path) -> None:
    (folder / ".gitignore").write_text("build/\n*.log\n")
    (folder / "src" / "debug.log").write_text("now ignored\n")
    (folder / "notes.log").write_text("ignored from the start\n")


CHANGES = [
    lambda folder: (folder / "src" / "main.py").write_text("print('two')\n"),
    lambda folder: (
        (folder / "added" / "deeper").mkdir(parents=True)
        or (folder / "added" / "deeper" / "new.py").write_text("new\n")
    ),
    lambda folder: (folder / "README.md").unlink(),
    _rename_a_file,
    _replace_a_folder_by_a_file,
    lambda folder: (folder / "build").mkdir() or (folder / "build" / "out.o").write_text("ignored\n"),
    lambda folder: (folder / "big.txt").write_text("b" * 20_000),  # over the bound: left out
    lambda folder: (folder / "src" / "main.py").write_text("m" * 20_000),  # a kept file grows over the bound
    _replace_a_file_by_a_folder,
    _same_size_and_time,
    lambda folder: (folder / "link").symlink_to("src/main.py"),
    lambda folder: (folder / "run.sh").write_text("#!/bin/sh\n") or (folder / "run.sh").chmod(0o755),
    _gitignore_changed,
    lambda folder: (folder / "README.md").write_text("back\n"),
]


def test_each_checkpoint_taken_on_the_one_before_restores_exactly_the_folder_as_it_was(
    tmp_path: Path, workspace: Path
) -> None:
    """Checkpoints one on another (each reads only what git finds changed) hold the same trees as a full pass of a
    new store would, through every kind of change; each restores the folder as it was, in any order."""
    (workspace / ".gitignore").write_text("build/\n")
    store = store_for(tmp_path, workspace, max_mb=0.01)
    left_out = ("build/", "big.txt", "notes.log", "src/debug.log", "src/main.py")  # main.py: over the bound later
    taken = [(store.snapshot().tree, visible(workspace, left_out))]
    for number, change in enumerate(CHANGES):
        change(workspace)
        checkpoint = store.snapshot()
        fresh = CheckpointStore(tmp_path / f"fresh{number}.git", workspace, store.max_file_bytes).snapshot()
        assert checkpoint == fresh, number
        taken.append((checkpoint.tree, visible(workspace, left_out)))
    for tree, files in [*reversed(taken), *taken[1::3], taken[-1]]:
        restored = store.restore(tree, Workspace([workspace]))
        assert restored.refused == []
        assert visible(workspace, left_out) == files


def test_a_store_opened_again_takes_a_full_pass_and_finds_what_changed_meanwhile(
    tmp_path: Path, workspace: Path
) -> None:
    """A server started again (a store object of its own on the same index) misses nothing that changed while none
    looked, not even a file rewritten at the same size and time."""
    first = store_for(tmp_path, workspace).snapshot()
    _same_size_and_time(workspace)
    (workspace / "README.md").unlink()
    (workspace / "new.py").write_text("new\n")
    again = store_for(tmp_path, workspace)
    assert again.changes_since(first.tree) == [
        FileChange("deleted", "README.md"),
        FileChange("added", "new.py"),
        FileChange("modified", "src/main.py"),
    ]
    _same_size_and_time(workspace)
    assert again.changes_since(first.tree)[-1] == FileChange("modified", "src/main.py")
    again.restore(first.tree, Workspace([workspace]))
    assert (workspace / "src" / "main.py").read_text() == "print('one')\n" and again.changes_since(first.tree) == []
