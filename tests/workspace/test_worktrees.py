"""`webclient.workspace.worktrees`: a session's git worktree made, committed, discarded and removed, and nothing a
hostile repository's config names (hooks, fsmonitor, filters, signing) ever run."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from webclient.workspace import worktrees
from webclient.workspace.worktrees import GitFailed, NotARepository


def plain_git(folder: Path, *args: str) -> str:
    """git as a person runs it in their repository (for setting one up and looking at it; never hooks here)."""
    command = ["git", "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "user.name=Someone"]
    command += ["-c", "user.email=someone@example.org", "-c", "commit.gpgSign=false", *args]
    return subprocess.run(command, cwd=folder, check=True, capture_output=True, text=True).stdout


def repository(folder: Path) -> Path:
    """A repository with one commit: ``notes.txt`` saying ``first``."""
    folder.mkdir(parents=True)
    plain_git(folder, "init", "--quiet", "--initial-branch=main")
    (folder / "notes.txt").write_text("first\n")
    plain_git(folder, "add", "notes.txt")
    plain_git(folder, "commit", "--quiet", "-m", "first")
    return folder


def hostile(repo: Path, marker: Path) -> None:
    """Everything a repository's config can make git run, each leaving ``marker`` if it runs."""
    (repo / ".gitattributes").write_text("* filter=evil diff=evil\n")
    plain_git(repo, "add", ".gitattributes")
    plain_git(repo, "commit", "--quiet", "-m", "attributes")
    touch = f"touch {marker}"
    for key, value in [
        ("core.fsmonitor", f"{touch}; true"),
        ("filter.evil.smudge", f"{touch}; cat"),
        ("filter.evil.clean", f"{touch}; cat"),
        ("diff.external", touch),
        ("diff.evil.textconv", touch),
        ("commit.gpgSign", "true"),
        ("gpg.program", touch),
    ]:
        plain_git(repo, "config", key, value)
    hooks = repo / ".git" / "hooks"
    for hook in ("pre-commit", "commit-msg", "post-commit", "post-checkout", "reference-transaction"):
        (hooks / hook).write_text(f"#!/bin/sh\n{touch}\n")
        (hooks / hook).chmod(0o755)


def test_a_worktree_is_made_on_its_own_branch_committed_and_removed(tmp_path: Path) -> None:
    repo = repository(tmp_path / "repo")
    made = worktrees.add(repo / ".", tmp_path / "data" / "worktrees" / "s1", worktrees.branch_name("s1", "Demo agent"))
    assert made.branch == "webclient/s1-demo-agent"
    assert made.base == plain_git(repo, "rev-parse", "HEAD").strip()
    assert (made.path / "notes.txt").read_text() == "first\n"

    (made.path / "notes.txt").write_text("second\n")
    (made.path / "new.txt").write_text("new\n")
    assert worktrees.status(made) == [" M notes.txt", "?? new.txt"]
    files, total = worktrees.branch_files(made)
    assert total == 2
    assert [(file.path, file.old, file.new) for file in files] == [
        ("new.txt", None, "new\n"),
        ("notes.txt", "first\n", "second\n"),
    ]
    assert not worktrees.remove(made), "uncommitted work keeps the worktree"
    assert made.path.is_dir()

    commit = worktrees.commit(made, "The agent's work", ("A Person", "person@example.org"))
    assert commit is not None
    log = plain_git(repo, "log", "--format=%H|%an|%ae|%cn|%s", made.branch)
    assert log.splitlines()[0] == f"{commit}|A Person|person@example.org|ACP web client|The agent's work"
    assert (repo / "notes.txt").read_text() == "first\n", "the main checkout is untouched"
    assert worktrees.commit(made, "again", ("A Person", "p@example.org")) is None, "nothing to commit"
    files, _ = worktrees.branch_files(made)
    assert [file.path for file in files] == ["new.txt", "notes.txt"], "committed: still the branch's diff"

    assert worktrees.remove(made)
    assert not made.path.exists()
    assert made.branch in plain_git(repo, "branch", "--list", made.branch), "the branch stays"
    assert "s1" not in plain_git(repo, "worktree", "list")


def test_discard_puts_back_the_last_commit_and_removes_untracked_files(tmp_path: Path) -> None:
    repo = repository(tmp_path / "repo")
    made = worktrees.add(repo, tmp_path / "wt", "webclient/discard")
    (made.path / "notes.txt").write_text("changed\n")
    (made.path / "folder").mkdir()
    (made.path / "folder" / "new.txt").write_text("new\n")
    worktrees.discard(made)
    assert worktrees.status(made) == []
    assert (made.path / "notes.txt").read_text() == "first\n"
    assert not (made.path / "folder").exists()


def test_a_folder_outside_any_repository_is_refused(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(NotARepository, match="not in a git repository"):
        worktrees.add(plain, tmp_path / "wt", "webclient/x")
    empty = tmp_path / "empty"
    empty.mkdir()
    plain_git(empty, "init", "--quiet")
    with pytest.raises(GitFailed, match="no commit yet"):
        worktrees.add(empty, tmp_path / "wt2", "webclient/x")


def test_nothing_the_repository_config_names_runs(tmp_path: Path) -> None:
    repo = repository(tmp_path / "repo")
    marker = tmp_path / "ran"
    hostile(repo, marker)
    made = worktrees.add(repo, tmp_path / "wt", "webclient/hostile")
    (made.path / "notes.txt").write_text("changed\n")
    worktrees.status(made)
    worktrees.branch_files(made)
    assert worktrees.commit(made, "work", ("P", "p@example.org")) is not None
    (made.path / "more.txt").write_text("more\n")
    worktrees.discard(made)
    assert worktrees.remove(made)
    assert not marker.exists(), "a hook, fsmonitor, filter, external diff or signing program of the repository ran"


def test_branch_names_are_valid_for_any_title(tmp_path: Path) -> None:
    repo = repository(tmp_path / "repo")
    for session_id, label in [("a-_b", "../x.lock"), ("Zz9", None), ("id", "Ünïcode — and ~^:?*[ spaces")]:
        name = worktrees.branch_name(session_id, label)
        plain_git(repo, "check-ref-format", "--branch", name)
        assert name.startswith("webclient/")


def test_the_branch_diff_reads_no_file_through_a_symlink(tmp_path: Path) -> None:
    repo = repository(tmp_path / "repo")
    made = worktrees.add(repo, tmp_path / "wt", "webclient/links")
    secret = tmp_path / "secret.txt"
    secret.write_text("the server's own\n")
    (made.path / "link.txt").symlink_to(secret)
    (made.path / "folder").symlink_to(tmp_path)
    files, _ = worktrees.branch_files(made)
    assert {file.path: file.new for file in files} == {"folder": None, "link.txt": None}
    assert all("the server's own" not in (file.new or "") for file in files)


def test_a_work_tree_the_repository_config_names_is_never_the_one_cleaned(tmp_path: Path) -> None:
    repo = repository(tmp_path / "repo")
    made = worktrees.add(repo, tmp_path / "wt", "webclient/pinned")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "precious.txt").write_text("keep\n")
    plain_git(repo, "config", "extensions.worktreeConfig", "true")  # what an agent that may write .git can do
    (made.admin_folder / "config.worktree").write_text(f"[core]\n\tworktree = {elsewhere}\n")
    plain_git(repo, "config", "core.worktree", str(elsewhere))
    (made.path / "stray.txt").write_text("stray\n")
    assert worktrees.status(made) == ["?? stray.txt"]
    worktrees.discard(made)
    assert (elsewhere / "precious.txt").read_text() == "keep\n"
    assert not (made.path / "stray.txt").exists() and (made.path / "notes.txt").exists()
