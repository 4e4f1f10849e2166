"""The client's own tools, offered to a remote AAP agent: the same hands ACP agents get, run here, inside the
session's workspace, with the same path checks and limits (`webclient.workspace`).

``read_file``, ``list_files`` and ``search`` only look; ``write_file`` and ``run_command`` change things, so the
person is asked first (see `webclient.aap.answering`). A command runs in a terminal of the session whose output
streams into the tool's card. Every tool answers with text; a refusal (a path outside the workspace, a command
that cannot start) is an answer too, so the agent can say what went wrong.
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from webclient.aap.meta import ToolSpec
from webclient.workspace.files import NotText, WriteResult, read_text_file, write_text_file
from webclient.workspace.listing import list_files
from webclient.workspace.paths import PathRefused, Workspace
from webclient.workspace.terminals import Terminals

MAX_LISTED = 500
MAX_MATCHES = 200
MAX_OUTPUT_CHARS = 20_000
COMMAND_OUTPUT_BYTES = 1024 * 1024

_PATH = {"type": "string", "description": "A path relative to the workspace, or absolute inside it"}

SPECS: dict[str, ToolSpec] = {
    spec.name: spec
    for spec in [
        ToolSpec(
            "read_file",
            "Read a text file of the workspace.",
            {
                "type": "object",
                "properties": {
                    "path": _PATH,
                    "line": {"type": "integer", "minimum": 1, "description": "First line to read (1-based)"},
                    "limit": {"type": "integer", "minimum": 1, "description": "How many lines to read"},
                },
                "required": ["path"],
                "additionalProperties": False,
            },
            "Read a file",
        ),
        ToolSpec(
            "write_file",
            "Write a text file of the workspace (created, or replaced whole).",
            {
                "type": "object",
                "properties": {"path": _PATH, "content": {"type": "string", "description": "The whole new text"}},
                "required": ["path", "content"],
                "additionalProperties": False,
            },
            "Write a file",
        ),
        ToolSpec(
            "list_files",
            "List the files and folders of a folder of the workspace.",
            {
                "type": "object",
                "properties": {"path": {**_PATH, "default": "."}},
                "additionalProperties": False,
            },
            "List a folder",
        ),
        ToolSpec(
            "search",
            "Search the workspace's text files for a regular expression; answers path:line: text.",
            {
                "type": "object",
                "properties": {
                    "pattern": {"type": "string", "description": "A regular expression (Python syntax)"},
                    "path": {**_PATH, "description": "A folder to search in (the whole workspace by default)"},
                },
                "required": ["pattern"],
                "additionalProperties": False,
            },
            "Search files",
        ),
        ToolSpec(
            "run_command",
            "Run a command in the workspace and answer its exit code and output.",
            {
                "type": "object",
                "properties": {
                    "command": {"type": "string", "description": "The program to run"},
                    "args": {"type": "array", "items": {"type": "string"}, "description": "Its arguments"},
                    "cwd": {**_PATH, "description": "Where to run it (the workspace by default)"},
                },
                "required": ["command"],
                "additionalProperties": False,
            },
            "Run a command",
        ),
    ]
}

CHANGES_THINGS = frozenset({"write_file", "run_command"})
"""Tools the person is asked about before they run (unless they said yes for the session)."""


@dataclass(frozen=True, slots=True)
class ToolAnswer:
    text: str
    """What the agent is told."""
    failed: bool = False
    card: str | None = None
    """What the call's card shows, when not ``text`` (a command's card has its terminal: just how it ended)."""

    @property
    def shown(self) -> str:
        return self.card if self.card is not None else self.text


class Hands:
    """Runs the client's tools for one session."""

    def __init__(self, workspace: Workspace, terminals: Terminals | None, events: Any) -> None:
        self.workspace = workspace
        self.terminals = terminals
        self.events = events

    def specs(self) -> list[ToolSpec]:
        """The tools this session can really serve: none that write when files are read-only, no commands without
        terminals, nothing at all when file access is off."""
        offered = []
        for spec in SPECS.values():
            if spec.name == "run_command" and self.terminals is None:
                continue
            if spec.name != "run_command" and self.workspace.access == "none":
                continue
            if spec.name == "write_file" and self.workspace.access != "read-write":
                continue
            offered.append(spec)
        return offered

    async def run(self, name: str, arguments: dict[str, Any], terminal_shown: Callable[[str], None]) -> ToolAnswer:
        """Run tool ``name``; ``terminal_shown`` is told the terminal a command runs in, to show it on the card."""
        if name not in {spec.name for spec in self.specs()}:
            return ToolAnswer(f"This client offers no tool named {name!r}.", failed=True)
        try:
            if name == "run_command":
                return await self._run_command(arguments, terminal_shown)
            if name == "write_file":
                answer, written = await asyncio.to_thread(self._write_file, arguments)
                self.events.file_written(written)  # on the loop: the changes list and the diff update from here
                return answer
            return await asyncio.to_thread(getattr(self, f"_{name}"), arguments)
        except (PathRefused, NotText, ValueError, OSError, re.error) as error:
            return ToolAnswer(str(error) or type(error).__name__, failed=True)

    # -- the tools -----------------------------------------------------------------------------------

    def resolve(self, value: str) -> str:
        """A path argument as an absolute path (relative ones are to the workspace), not yet checked."""
        return value if os.path.isabs(value) else str(self.workspace.roots[0] / value)

    def _path(self, arguments: dict[str, Any], key: str = "path", default: str | None = None) -> str:
        value = arguments.get(key, default)
        if not isinstance(value, str) or not value:
            raise ValueError(f"{key} must be a non-empty string")
        return self.resolve(value)

    def _folder(self, arguments: dict[str, Any], key: str = "path") -> Path:
        """A folder the arguments name, inside the workspace once its symlinks are resolved."""
        folder = Path(os.path.realpath(self._path(arguments, key, ".")))
        if not self.workspace.contains(folder) or not folder.is_dir():
            raise ValueError(f"{arguments.get(key, '.')!s} is not a folder of the workspace")
        return folder

    def _read_file(self, arguments: dict[str, Any]) -> ToolAnswer:
        line, limit = arguments.get("line"), arguments.get("limit")
        text = read_text_file(
            self.workspace,
            self._path(arguments),
            line if isinstance(line, int) and not isinstance(line, bool) else None,
            limit if isinstance(limit, int) and not isinstance(limit, bool) else None,
        )
        return ToolAnswer(text[:MAX_OUTPUT_CHARS])

    def _write_file(self, arguments: dict[str, Any]) -> tuple[ToolAnswer, WriteResult]:
        content = arguments.get("content")
        if not isinstance(content, str):
            raise ValueError("content must be a string")
        result = write_text_file(self.workspace, self._path(arguments), content)
        return ToolAnswer(f"Wrote {len(content.encode())} bytes to {arguments['path']}."), result

    def _list_files(self, arguments: dict[str, Any]) -> ToolAnswer:
        folder = self._folder(arguments)
        names = []
        with os.scandir(folder) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                if self.workspace.hides(Path(entry.path)):
                    continue  # the server's own: not the agent's to know of
                names.append(entry.name + ("/" if entry.is_dir(follow_symlinks=False) else ""))
        shown = names[:MAX_LISTED]
        more = f"\n… and {len(names) - MAX_LISTED} more" if len(names) > MAX_LISTED else ""
        return ToolAnswer("\n".join(shown) + more if shown else "(empty folder)")

    def _search(self, arguments: dict[str, Any]) -> ToolAnswer:
        pattern = arguments.get("pattern")
        if not isinstance(pattern, str) or not pattern:
            raise ValueError("pattern must be a non-empty string")
        expression = re.compile(pattern)
        folder = self._folder(arguments)
        root = self.workspace.roots[0]
        found: list[str] = []
        for relative in list_files([folder], hides=self.workspace.lexically_hides):
            path = folder / relative
            try:
                text = read_text_file(self.workspace, str(path))
            except (PathRefused, NotText, ValueError, OSError):
                continue  # binary, too large, or a symlink out: not searched
            for number, line in enumerate(text.splitlines(), 1):
                if expression.search(line):
                    shown = path.relative_to(root) if path.is_relative_to(root) else path
                    found.append(f"{shown}:{number}: {line.strip()[:200]}")
                    if len(found) >= MAX_MATCHES:
                        return ToolAnswer("\n".join(found) + f"\n(stopped at {MAX_MATCHES} matches)")
        return ToolAnswer("\n".join(found) if found else f"No line matches {pattern!r}.")

    async def _run_command(self, arguments: dict[str, Any], terminal_shown: Callable[[str], None]) -> ToolAnswer:
        assert self.terminals is not None  # only offered with terminals
        command, args = arguments.get("command"), arguments.get("args") or []
        if not isinstance(command, str) or not command or "\0" in command:
            raise ValueError("command must be a non-empty string")
        if not isinstance(args, list) or not all(isinstance(a, str) and "\0" not in a for a in args):
            raise ValueError("args must be a list of strings")
        cwd = self._folder(arguments, "cwd") if arguments.get("cwd") is not None else self.workspace.roots[0]
        env = self.terminals.sandbox.environment(os.environ)  # in a sandbox, only its allow-list of the server's
        terminal_id = await self.terminals.create(
            command,
            args,
            cwd=cwd,
            env=env,
            output_byte_limit=COMMAND_OUTPUT_BYTES,
            on_output=self.events.terminal_output,
            on_exit=self.events.terminal_exited,
        )
        self.events.terminal_started(terminal_id, command, args, cwd)
        terminal_shown(terminal_id)
        process = self.terminals.get(terminal_id)
        status = await process.wait_for_exit()
        output, truncated, _ = process.output()
        said = f"exit code {status.exit_code}" if status.signal is None else f"killed by {status.signal}"
        cut = " (output truncated)" if truncated else ""
        return ToolAnswer(f"{said}{cut}\n{output[-MAX_OUTPUT_CHARS:]}", failed=status.exit_code != 0, card=said + cut)
