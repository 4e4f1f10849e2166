"""What a remote call's card says (`webclient.aap.cards`): the title the tool was declared with, and for the
client's own tools what the call will do, worked out from the workspace when the call arrives."""

from __future__ import annotations

from pathlib import Path

from webclient.aap.cards import asked_of, card_patch, card_record
from webclient.aap.hands import SPECS, Hands
from webclient.aap.meta import ToolSpec
from webclient.aap.turn import ToolCallSeen
from webclient.viewmodel.content import Diff, Location
from webclient.workspace.paths import Workspace

DEPLOY = ToolSpec("deploy_preview", "Deploy a branch to a preview environment.", {"type": "object"}, "Deploy a preview")


def record(tmp_path: Path, name: str, arguments: dict[str, object]) -> dict[str, object]:
    hands = Hands(Workspace([tmp_path]), None, events=None)
    return card_record(ToolCallSeen("c1", name, arguments), hands, [*SPECS.values(), DEPLOY])


def test_a_write_shows_its_path_and_a_diff_against_the_file_on_disk(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("old\n")
    patch = card_patch(record(tmp_path, "write_file", {"path": "notes.md", "content": "new\n"}))
    assert patch["title"] == "Write a file" and patch["name"] == "write_file"
    assert patch["locations"] == [Location(path=str(tmp_path.resolve() / "notes.md"))]
    assert patch["content"] == [Diff(str(tmp_path.resolve() / "notes.md"), "old\n", "new\n")]
    new_file = card_patch(record(tmp_path, "write_file", {"path": "sub/new.md", "content": "hi\n"}))
    assert new_file["content"][0].old_text is None  # no file yet: all of it is added


def test_a_command_shows_its_command_line_and_folder_on_its_question(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    made = record(tmp_path, "run_command", {"command": "grep", "args": ["-r", "a b", "."], "cwd": "src"})
    assert card_patch(made)["title"] == "Run a command"
    asked = asked_of(made)
    assert asked.command == "grep -r 'a b' ." and asked.cwd == str(tmp_path.resolve() / "src")


def test_a_search_shows_its_pattern_and_folder(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    assert card_patch(record(tmp_path, "search", {"pattern": "TODO", "path": "src"}))["title"] == (
        "Search files: “TODO” in src"
    )
    assert card_patch(record(tmp_path, "list_files", {}))["title"] == "List a folder: ."


def test_a_server_tool_is_named_and_described_as_the_server_declared_it(tmp_path: Path) -> None:
    made = record(tmp_path, "deploy_preview", {"branch": "main"})
    assert card_patch(made) == {"title": "Deploy a preview", "name": "deploy_preview"}
    assert asked_of(made).description == "Deploy a branch to a preview environment."
    assert card_patch(record(tmp_path, "mystery", {})) == {"title": "mystery"}  # undeclared: its name, once
