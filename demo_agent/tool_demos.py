"""Tool calls shared by several scenarios: a read with a location, a streamed search, simulated commands.

Reads and searches are real (they look at the session workspace; reads go through the client's
``fs/read_text_file`` when it offers it). The commands here are simulated: ``execute_tool`` stands in for the
real test run of :mod:`.terminal_demos` when the client offers no terminals, and ``failing_tool`` always is.
"""

from __future__ import annotations

import re
from typing import Any

from .jsonrpc import RequestError
from .turn import CHUNK_DELAY, STEP_DELAY, Turn

EXCERPT_LINES = 12


def text_item(text: str) -> dict[str, Any]:
    """A ``ToolCallContent`` item holding Markdown text."""
    return {"type": "content", "content": {"type": "text", "text": text}}


def fenced(text: str, lang: str = "") -> str:
    """Markdown code fence that survives backticks inside ``text`` (the README has its own fences)."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{text.rstrip()}\n{fence}"


def language_of(rel: str) -> str:
    return {"py": "python", "md": "markdown", "toml": "toml", "sh": "bash", "json": "json"}.get(
        rel.rsplit(".", 1)[-1], ""
    )


def line_of(text: str, needle: str) -> int:
    """1-based line of the first line containing ``needle``; 1 if absent."""
    for number, line in enumerate(text.splitlines(), start=1):
        if needle in line:
            return number
    return 1


async def read_tool(turn: Turn, rel: str, focus: str | None = None) -> str:
    """Read ``rel`` and point the follow-along location at the line containing ``focus``.

    Through the client when it offers ``fs/read_text_file``: the whole file to find ``focus``, then the excerpt
    with ``line``/``limit``. Otherwise both come from the disk.
    """
    path = turn.abs(rel)
    text = await turn.read_text(rel) or ""
    line = line_of(text, focus) if focus else 1
    location = [{"path": path, "line": line}]
    tool_id = await turn.tool(
        "read",
        f"Read {rel}",
        "read",
        "pending",
        locations=location,
        rawInput={"path": path, "line": line, "limit": EXCERPT_LINES},
    )
    await turn.tool_update(tool_id, status="in_progress")
    await turn.pause(STEP_DELAY)
    lines = text.splitlines()
    if turn.can_read:
        try:
            excerpt = await turn.read_text_file(path, line=line, limit=EXCERPT_LINES)
        except RequestError as exc:
            failure = text_item(f"Could not read `{rel}`: {exc}")
            await turn.tool_update(tool_id, status="failed", content=[failure], rawOutput={"error": str(exc)})
            return tool_id
    else:
        excerpt = "\n".join(lines[line - 1 : line - 1 + EXCERPT_LINES])
    link = {"type": "resource_link", "uri": f"file://{path}", "name": rel, "mimeType": "text/plain"}
    await turn.tool_update(
        tool_id,
        status="completed",
        content=[
            text_item(fenced(excerpt, language_of(rel))),
            {"type": "content", "content": link},
        ],
        rawOutput={"path": path, "totalLines": len(lines), "via": "fs/read_text_file" if turn.can_read else "disk"},
    )
    return tool_id


async def search_tool(turn: Turn, needle: str = "TODO") -> str:
    """Search the workspace, streaming each hit as a v2 ``tool_call_content_chunk``, then replace the content
    with a summary (a v1-only client that drops the chunks still ends up with the full result)."""
    root = str(turn.workspace.root)
    tool_id = await turn.tool(
        "search",
        f"Search for `{needle}`",
        "search",
        "in_progress",
        rawInput={"pattern": needle, "path": root, "caseSensitive": True},
    )
    matches = turn.workspace.grep(needle)
    for match in matches:
        await turn.pause(CHUNK_DELAY * 4)
        await turn.tool_chunk(tool_id, text_item(f"`{match.rel}:{match.line}` — {match.text}"))
    await turn.pause(STEP_DELAY)
    files = sorted({m.rel for m in matches})
    summary = f"Found **{len(matches)}** match{'es' if len(matches) != 1 else ''} in {len(files)} file(s)."
    listing = "\n".join(f"- `{m.rel}:{m.line}` — {m.text}" for m in matches)
    await turn.tool_update(
        tool_id,
        status="completed",
        content=[text_item(summary + ("\n\n" + listing if listing else ""))],
        locations=[{"path": turn.abs(m.rel), "line": m.line} for m in matches],
        rawOutput={"matches": [{"path": turn.abs(m.rel), "line": m.line, "text": m.text} for m in matches]},
    )
    return tool_id


_PYTEST_HEAD = "$ pytest -q\n"
_PYTEST_BODY = "...                                                                      [100%]\n"
_PYTEST_TAIL = "3 passed in 0.04s\n"


async def execute_tool(turn: Turn) -> str:
    """A simulated ``pytest -q``: in_progress with partial output, then completed with the full output.

    Stands in for :func:`.terminal_demos.run_tests` when the client offers no terminals.
    """
    tool_id = await turn.tool(
        "execute",
        "Run `pytest -q`",
        "execute",
        "pending",
        rawInput={"command": "pytest -q", "cwd": str(turn.workspace.root), "simulated": True},
    )
    await turn.pause(STEP_DELAY / 2)
    await turn.tool_update(tool_id, status="in_progress", content=[text_item(fenced(_PYTEST_HEAD, "console"))])
    await turn.pause(STEP_DELAY)
    await turn.tool_update(tool_id, content=[text_item(fenced(_PYTEST_HEAD + _PYTEST_BODY, "console"))])
    await turn.pause(STEP_DELAY)
    full = _PYTEST_HEAD + _PYTEST_BODY + _PYTEST_TAIL
    await turn.tool_update(
        tool_id,
        status="completed",
        content=[text_item(fenced(full, "console"))],
        rawOutput={"exitCode": 0, "stdout": _PYTEST_BODY + _PYTEST_TAIL, "simulated": True},
    )
    return tool_id


async def failing_tool(turn: Turn) -> str:
    """A (simulated) command that fails: status ``failed`` with the error in content and rawOutput."""
    command = "pytest -q tests/test_history.py"
    tool_id = await turn.tool(
        "execute",
        f"Run `{command}`",
        "execute",
        "pending",
        rawInput={"command": command, "cwd": str(turn.workspace.root), "simulated": True},
    )
    await turn.pause(STEP_DELAY / 2)
    await turn.tool_update(tool_id, status="in_progress")
    await turn.pause(STEP_DELAY * 2)
    error = "ERROR: file or directory not found: tests/test_history.py"
    await turn.tool_update(
        tool_id,
        status="failed",
        content=[text_item(f"The command exited with status 4.\n\n{fenced(error, 'console')}")],
        rawOutput={"exitCode": 4, "stderr": error, "error": "file or directory not found", "simulated": True},
    )
    return tool_id
