"""The workspace's files by name, for ``@`` mentions (``webclient.workspace.listing``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from webclient.workspace.listing import list_files, match


def touch(root: Path, *paths: str) -> None:
    for relative in paths:
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x")


# --- list_files --------------------------------------------------------------------------------


def test_list_files_relative_paths_in_a_stable_order(tmp_path: Path) -> None:
    touch(tmp_path, "b.txt", "a.txt", "src/z.py", "src/lib/m.py", "docs/x.md")
    assert list_files([tmp_path]) == ["a.txt", "b.txt", "docs/x.md", "src/z.py", "src/lib/m.py"]


def test_list_files_skips_dependency_cache_and_hidden_dirs(tmp_path: Path) -> None:
    touch(
        tmp_path,
        "keep.py",
        ".git/config",
        "node_modules/pkg/index.js",
        "src/node_modules/deep/index.js",
        "__pycache__/m.cpython-311.pyc",
        ".venv/lib/site.py",
        ".hidden/secret.txt",
        "src/.cache/blob",
        "src/ok.py",
    )
    assert list_files([tmp_path]) == ["keep.py", "src/ok.py"]


def test_list_files_keeps_hidden_files(tmp_path: Path) -> None:
    touch(tmp_path, ".env.example", "a.txt")
    assert list_files([tmp_path]) == [".env.example", "a.txt"]


def test_list_files_does_not_follow_symlinked_dirs(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    touch(root, "a.txt")
    touch(outside, "secret.txt")
    os.symlink(outside, root / "link", target_is_directory=True)
    os.symlink(root, root / "loop", target_is_directory=True)
    assert list_files([root]) == ["a.txt"]


def test_list_files_prefixes_later_roots_with_their_name(tmp_path: Path) -> None:
    main, extra = tmp_path / "main", tmp_path / "extra"
    touch(main, "a.py")
    touch(extra, "b.py", "sub/c.py")
    assert list_files([main, extra]) == ["a.py", "extra/b.py", "extra/sub/c.py"]


@pytest.mark.parametrize("limit", [1, 2, 3])
def test_list_files_stops_at_the_limit(tmp_path: Path, limit: int) -> None:
    main, extra = tmp_path / "main", tmp_path / "extra"
    touch(main, "a", "b")
    touch(extra, "c", "d")
    assert list_files([main, extra], limit=limit) == ["a", "b", "extra/c", "extra/d"][:limit]


def test_list_files_with_limit_zero_is_empty(tmp_path: Path) -> None:
    touch(tmp_path, "a")
    assert list_files([tmp_path], limit=0) == []


def test_list_files_of_no_roots_or_an_empty_root(tmp_path: Path) -> None:
    assert list_files([]) == []
    assert list_files([tmp_path]) == []


# --- match -------------------------------------------------------------------------------------

PATHS = [
    "docs/guide.md",  # "app" only as a subsequence
    "src/mapping.py",  # name contains "app"
    "app/main.py",  # path contains "app"
    "src/app.py",  # name starts with "app"
    "tests/test_app.py",  # name contains "app"
    "README.md",  # no match
]


def test_match_ranks_name_prefix_then_name_substring_then_path_then_subsequence() -> None:
    paths = [*PATHS, "src/a/p/p.txt"]
    assert match(paths, "app") == ["src/app.py", "src/mapping.py", "tests/test_app.py", "app/main.py", "src/a/p/p.txt"]


def test_match_prefers_shorter_paths_within_a_rank() -> None:
    assert match(["deep/nested/dir/app.py", "app.py", "x/app.py"], "app") == [
        "app.py",
        "x/app.py",
        "deep/nested/dir/app.py",
    ]


def test_match_subsequence_needs_the_letters_in_order() -> None:
    assert match(["src/calculator.py", "lib/cs.py"], "scl") == ["src/calculator.py"]
    assert match(["abc"], "cba") == []


def test_match_is_case_insensitive_and_returns_paths_as_given() -> None:
    assert match(["README.md", "src/Readme.txt"], "readme") == ["README.md", "src/Readme.txt"]
    assert match(["src/app.py"], "  APP ") == ["src/app.py"]


@pytest.mark.parametrize("query", ["", "   "])
def test_match_empty_query_returns_the_first_paths_in_order(query: str) -> None:
    assert match(PATHS, query) == PATHS
    assert match(PATHS, query, limit=2) == PATHS[:2]


def test_match_limit() -> None:
    paths = [f"f{n}.py" for n in range(50)]
    assert len(match(paths, "f")) == 30
    assert match(paths, "f", limit=3) == ["f0.py", "f1.py", "f2.py"]


def test_match_nothing() -> None:
    assert match(PATHS, "zzz") == []
    assert match([], "a") == []
