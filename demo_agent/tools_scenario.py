"""The ``tools`` scenario: one tool call of every kind, plus the v2 draft extras a client must survive.

Covers: every v1 ``ToolKind``, a custom ``_demo_widget`` kind with a custom ``_warming_up`` status, an
unknown content type ``_demo_chart``, content streamed with ``tool_call_content_chunk`` and then replaced,
and a ``tool_call_update`` for an id that was never announced (v2 upsert). Nothing here writes to disk:
delete/move/edit are previews.
"""

from __future__ import annotations

from .tool_demos import execute_tool, fenced, read_tool, search_tool, text_item
from .turn import STEP_DELAY, Turn

TEST_FILE = "tests/test_calculator.py"
NEW_TEST = """

def test_power() -> None:
    total = RunningTotal(2)
    assert total.apply("**", 3) == 8
"""


async def run_tools(turn: Turn) -> None:
    ws = turn.workspace
    await turn.say(
        "Here is one tool call of every kind. Reads and searches are real; nothing is written, and the test run is"
        " simulated (`run` runs the tests for real).\n\n"
    )

    target = ws.first_existing("src/calculator.py")
    if target is not None:
        await read_tool(turn, target, focus="def divide")
    await search_tool(turn, "TODO")
    await _edit_preview(turn)
    await execute_tool(turn)
    await _fetch(turn)
    await _think(turn)
    await _delete_and_move(turn)
    await _switch_mode(turn)
    await _other(turn)
    await _widget(turn)
    await _upsert_only(turn)
    await turn.say(
        "\nThat was every tool kind, including a custom `_demo_widget` one and content streamed in chunks.\n"
    )


async def _edit_preview(turn: Turn) -> None:
    rel = TEST_FILE if turn.workspace.exists(TEST_FILE) else turn.workspace.first_existing()
    if rel is None:
        return
    old = await turn.read_text(rel) or ""
    path = turn.abs(rel)
    diff = {"type": "diff", "path": path, "oldText": old, "newText": old.rstrip("\n") + "\n" + NEW_TEST}
    tool_id = await turn.tool(
        "edit",
        f"Draft a new test in {rel} (preview)",
        "edit",
        "pending",
        content=[diff],
        locations=[{"path": path, "line": old.count("\n") + 1}],
    )
    await turn.pause(STEP_DELAY)
    await turn.tool_update(
        tool_id,
        status="completed",
        content=[
            diff,
            text_item("Preview only — nothing was written. Try `edit` for a real edit with permission."),
        ],
    )


async def _fetch(turn: Turn) -> None:
    url = "https://agentclientprotocol.com/protocol/tool-calls"
    tool_id = await turn.tool("fetch", f"Fetch {url}", "fetch", "in_progress", rawInput={"url": url, "simulated": True})
    await turn.pause(STEP_DELAY)
    await turn.tool_update(
        tool_id,
        status="completed",
        content=[
            text_item(
                "**Tool Calls** — Tool calls represent actions that language model requests Agents to perform during a "
                "prompt turn. *(simulated page excerpt)*"
            )
        ],
        rawOutput={"status": 200, "contentType": "text/html", "bytes": 18342},
    )


async def _think(turn: Turn) -> None:
    tool_id = await turn.tool("think", "Think about edge cases", "think", "in_progress")
    await turn.pause(STEP_DELAY)
    await turn.tool_update(
        tool_id,
        status="completed",
        content=[
            text_item(
                "- `divide(x, 0)` should fail with a clear message\n- `RunningTotal.apply` with an unknown operator "
                "raises `KeyError`\n- floats: `0.1 + 0.2 != 0.3`"
            )
        ],
    )


async def _delete_and_move(turn: Turn) -> None:
    cache = turn.abs(".pytest_cache")
    tool_id = await turn.tool(
        "delete",
        "Delete .pytest_cache/ (simulated)",
        "delete",
        "pending",
        locations=[{"path": cache}],
        rawInput={"path": cache, "recursive": True},
    )
    await turn.pause(STEP_DELAY / 2)
    await turn.tool_update(tool_id, status="completed", content=[text_item("Simulated — nothing was deleted.")])

    source = turn.workspace.first_existing("src/calculator.py") or "src/calculator.py"
    old, new = turn.abs(source), turn.abs("src/calc.py")
    tool_id = await turn.tool(
        "move",
        f"Rename {source} → src/calc.py (simulated)",
        "move",
        "pending",
        locations=[{"path": old}, {"path": new}],
        rawInput={"from": old, "to": new},
    )
    await turn.pause(STEP_DELAY / 2)
    await turn.tool_update(tool_id, status="completed", content=[text_item("Simulated — nothing was moved.")])


async def _switch_mode(turn: Turn) -> None:
    tool_id = await turn.tool(
        "mode",
        "Switch to plan mode",
        "switch_mode",
        "pending",
        rawInput={"modeId": "plan", "reason": "Think before editing"},
    )
    await turn.pause(STEP_DELAY / 2)
    await turn.tool_update(tool_id, status="completed", content=[text_item("Now in *plan* mode (for show only).")])


async def _other(turn: Turn) -> None:
    files = turn.workspace.text_files()
    # A real project (--workspace) can be big: the table shows a dozen files, the totals cover all of them.
    counts = {rel: (turn.workspace.read(rel) or "").count("\n") for rel in files}
    shown = dict(list(counts.items())[:12])
    tool_id = await turn.tool("other", "Count lines of code", "other", "in_progress", rawInput={"glob": "**/*"})
    await turn.pause(STEP_DELAY / 2)
    rows = [f"| `{rel}` | {n} |" for rel, n in shown.items()]
    if len(counts) > len(shown):
        rows.append(f"| *…and {len(counts) - len(shown)} more* | |")
    table = "| File | Lines |\n|---|---:|\n" + "\n".join(rows) + f"\n\n**Total:** {sum(counts.values())} lines"
    await turn.tool_update(
        tool_id,
        status="completed",
        content=[text_item(table)],
        rawOutput={"files": len(counts), "lines": sum(counts.values())},
    )


async def _widget(turn: Turn) -> None:
    """Custom kind, custom status and an unknown content item: a client should keep them and render generically."""
    counts = {rel: (turn.workspace.read(rel) or "").count("\n") for rel in turn.workspace.text_files()[:6]}
    tool_id = await turn.tool(
        "widget", "Render a custom widget", "_demo_widget", "_warming_up", rawInput={"widget": "bar_chart"}
    )
    await turn.pause(STEP_DELAY)
    await turn.tool_update(tool_id, status="in_progress")
    await turn.pause(STEP_DELAY / 2)
    chart = {
        "type": "_demo_chart",
        "title": "Lines per file",
        "series": [{"label": rel, "value": n} for rel, n in counts.items()],
    }
    await turn.tool_update(
        tool_id,
        status="completed",
        content=[
            text_item("A custom tool kind (`_demo_widget`) with an unknown content item (`_demo_chart`):"),
            chart,
        ],
    )


async def _upsert_only(turn: Turn) -> None:
    """A tool call that only ever arrives as ``tool_call_update`` (v2: the first update creates it)."""
    tool_id = turn.session.next_tool_id("upsert")
    await turn.tool_update(
        tool_id,
        title="Created by an update alone",
        kind="other",
        status="in_progress",
        content=[text_item("This tool call was never announced with `tool_call`.")],
    )
    await turn.pause(STEP_DELAY / 2)
    log = "upsert: created on first tool_call_update\nupsert: patched status → completed"
    await turn.tool_update(tool_id, status="completed", content=[text_item(fenced(log, "text"))])
