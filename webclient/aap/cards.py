"""What a remote agent's tool-call card says: the tool's title as it was declared, and what the call will do.

The client runs its own tools and knows everything about them, so their cards say it as an ACP agent's would: a
file write shows its path and its content as a diff against the file on disk, a command its command line and
folder, a search its pattern and folder. A server tool is named by the title (and described by the description)
the server declared in ``/meta``. What a card says is worked out once, when the call arrives (the file on disk is
read then), and journalled as the client's own ``client_card`` record, so the page rebuilt after a restart shows
the same diff although the file has been written since.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from webclient.aap.meta import ToolSpec
from webclient.aap.turn import ToolCallSeen
from webclient.viewmodel.content import Diff, Location
from webclient.workspace.files import NotText, read_text_file
from webclient.workspace.paths import PathRefused, Workspace

CARD = "client_card"
"""Not an AAP event: the client's record of what a call's card says (`card_record`)."""


class Resolver(Protocol):
    """Where a client tool's path argument points (`webclient.aap.hands.Hands.resolve`)."""

    workspace: Workspace

    def resolve(self, value: str) -> str: ...


@dataclass(frozen=True, slots=True)
class Asked:
    """What a permission question on a card says besides the tool's title."""

    command: str | None = None
    cwd: str | None = None
    description: str | None = None


def card_record(call: ToolCallSeen, hands: Resolver, tools: Iterable[ToolSpec]) -> dict[str, Any]:
    """What ``call``'s card says, as the journal keeps it: ``title``, and for the client's own tools ``path`` (with
    ``oldText``/``newText`` for a write), ``command`` and ``cwd``, or a search's ``subject``; ``description`` for
    a server tool's question."""
    spec = next((tool for tool in tools if tool.name == call.name), None)
    record: dict[str, Any] = {"toolCallId": call.id, "title": (spec.title if spec else None) or call.name}
    if record["title"] != call.name:
        record["name"] = call.name  # shown beside the title
    arguments = call.input

    def where(key: str, default: str | None = None) -> str | None:
        value = arguments.get(key, default)
        if not isinstance(value, str) or not value or "\0" in value:
            return None
        return os.path.normpath(hands.resolve(value))  # as shown: the tool itself resolves it as given

    if call.name in ("read_file", "write_file") and (path := where("path")) is not None:
        record["path"] = path
        content = arguments.get("content")
        if call.name == "write_file" and isinstance(content, str):
            record["oldText"] = _on_disk(hands.workspace, path)
            record["newText"] = content
    elif call.name == "run_command" and isinstance(arguments.get("command"), str):
        args = arguments.get("args") if isinstance(arguments.get("args"), list) else []
        record["command"] = shlex.join([arguments["command"], *(str(a) for a in args or [])])
        record["cwd"] = where("cwd", ".")
    elif call.name in ("search", "list_files"):
        folder = hands.workspace.relative(Path(where("path", ".") or "."))
        pattern = arguments.get("pattern")
        record["subject"] = f"“{pattern}” in {folder}" if isinstance(pattern, str) else folder
    elif spec is not None and call.name not in ("read_file", "write_file", "run_command"):
        record["description"] = spec.description
    return record


def _on_disk(workspace: Workspace, path: str) -> str | None:
    """The file's text now, the left side of a write's diff; None when there is no such text file (a new file)."""
    try:
        return read_text_file(workspace, path)
    except (PathRefused, NotText, ValueError, OSError):
        return None


def card_patch(record: dict[str, Any]) -> dict[str, Any]:
    """The record as a patch of the call's card (`webclient.viewmodel.thread.Thread.upsert_tool_call`)."""
    title = str(record.get("title") or "Tool call")
    if isinstance(record.get("subject"), str):
        title = f"{title}: {record['subject']}"
    patch: dict[str, Any] = {"title": title}
    if isinstance(record.get("name"), str):
        patch["name"] = record["name"]
    if isinstance(record.get("path"), str):
        patch["locations"] = [Location(path=record["path"])]
        if isinstance(record.get("newText"), str):
            old = record.get("oldText")
            raw = {"type": "diff", "path": record["path"], "oldText": old, "newText": record["newText"]}
            patch["content"] = [Diff(record["path"], old if isinstance(old, str) else None, record["newText"], raw)]
    return patch


def asked_of(record: dict[str, Any]) -> Asked:
    """What a question on the card says: the command line and its folder, or the server tool's description."""

    def text(key: str) -> str | None:
        value = record.get(key)
        return value if isinstance(value, str) else None

    return Asked(text("command"), text("cwd"), text("description"))
