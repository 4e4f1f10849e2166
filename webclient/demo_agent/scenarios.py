"""The scenarios a prompt can run, chosen by its first word (``/plan`` or ``plan``); anything else runs the tour."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from . import texts
from .edit_flow import TARGET, run_edit
from .terminal_demos import run_meta_terminal, run_run, run_tests
from .tool_demos import failing_tool, read_tool, search_tool
from .tools_scenario import run_tools
from .turn import CHUNK_DELAY, STEP_DELAY, Turn

ScenarioFn = Callable[[Turn], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class Scenario:
    name: str
    description: str
    run: ScenarioFn


async def run_help(turn: Turn) -> None:
    lines = ["## Demo agent scenarios\n", "Type a scenario name (with or without a leading `/`):\n"]
    lines += [f"- `{s.name}` — {s.description}" for s in SCENARIOS.values()]
    lines.append(
        "\nAnything else runs the **tour**. Unless you picked a folder, the workspace is a throw-away copy"
        " of a tiny sample project.\n"
    )
    offered = [
        ("`fs/read_text_file`", turn.can_read),
        ("`fs/write_text_file`", turn.can_write),
        ("`terminal/*`", turn.can_run),
        ("`_meta` terminals", turn.can_show_terminal_meta),
    ]
    lines.append(
        "What your client offers me: "
        + ", ".join(f"{name} {'✓' if ok else '✗'}" for name, ok in offered)
        + ". Without them I read and write the disk myself and only simulate commands.\n"
    )
    await turn.say("\n".join(lines))


async def run_markdown(turn: Turn) -> None:
    await turn.say(texts.MARKDOWN_THOUGHT, thought=True)
    await turn.say(texts.MARKDOWN_ANSWER)


def _plan_entries(statuses: list[str]) -> list[dict[str, str]]:
    steps = [
        ("Read the calculator module", "high"),
        ("Find the open TODOs", "high"),
        ("Sketch a test for dividing by zero", "medium"),
        ("Summarise what to do next", "low"),
    ]
    return [{"content": c, "priority": p, "status": s} for (c, p), s in zip(steps, statuses, strict=True)]


async def run_plan(turn: Turn) -> None:
    notes = [
        "Reading `src/calculator.py`: four functions and a `RunningTotal` class.\n\n",
        "Two TODOs: `divide()` by zero, and a missing `**` operator.\n\n",
        "A test would call `divide(1, 0)` and expect a `ValueError`.\n\n",
        "Next: fix `divide()`, then add `power()`. Try `edit` to do the first one.\n",
    ]
    statuses = ["pending"] * 4
    await turn.say("Here's my plan.\n\n")
    await turn.plan(_plan_entries(statuses))
    for index, note in enumerate(notes):
        await turn.pause(STEP_DELAY)
        statuses[index] = "in_progress"
        await turn.plan(_plan_entries(statuses))
        await turn.say(note)
        await turn.pause(STEP_DELAY)
        statuses[index] = "completed"
        await turn.plan(_plan_entries(statuses))


async def run_fail(turn: Turn) -> None:
    await turn.say("Let me run the history tests.\n\n")
    await failing_tool(turn)
    await turn.say(
        "\nThat failed: `tests/test_history.py` does not exist in this project. "
        "A failed tool call shows its error in the content and in `rawOutput`.\n"
    )


async def run_slow(turn: Turn) -> None:
    # Two words every ~80 ms: several seconds in all, so there is time to press Stop.
    await turn.say(texts.SLOW_TEXT, words=2, delay=CHUNK_DELAY * 2.7)


async def run_tour(turn: Turn) -> None:
    await turn.say(texts.TOUR_THOUGHT, thought=True)
    await turn.say(texts.TOUR_INTRO)
    statuses = ["pending"] * 4
    entries = ["Read the calculator", "Search for TODOs", "Fix divide-by-zero (asks first)", "Run the tests"]

    async def advance(index: int, status: str) -> None:
        if status == "in_progress":
            await turn.pause()  # a beat before each step, so the plan visibly advances
        statuses[index] = status
        await turn.plan(
            [
                {"content": c, "priority": "high" if i < 3 else "medium", "status": s}
                for i, (c, s) in enumerate(zip(entries, statuses, strict=True))
            ]
        )

    await advance(0, "in_progress")
    target = turn.workspace.first_existing(TARGET)
    if target is not None:
        await read_tool(turn, target, focus="def divide")
    await advance(0, "completed")
    await advance(1, "in_progress")
    await search_tool(turn, "TODO")
    await advance(1, "completed")
    await advance(2, "in_progress")
    await run_edit(turn)
    await advance(2, "completed")
    await advance(3, "in_progress")
    ran = await run_tests(turn)
    await advance(3, "completed")
    await turn.pause(STEP_DELAY)
    await turn.say(texts.TOUR_SUMMARY.format(target=target or "the workspace", ran=ran))


SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in [
        Scenario("help", "list the scenarios (this message)", run_help),
        Scenario("tour", "a short tour of everything (also runs for any other prompt)", run_tour),
        Scenario("markdown", "a thought, then streamed Markdown: headings, list, table, link, code", run_markdown),
        Scenario("plan", "a four-step plan that advances entry by entry", run_plan),
        Scenario("tools", "a tool call of every kind, incl. custom kinds and streamed content", run_tools),
        Scenario("edit", "propose an edit to src/calculator.py and ask permission first", run_edit),
        Scenario("run", "run the tests in a real terminal of the client (simulated if it has none)", run_run),
        Scenario("meta-terminal", "a display-only terminal the agent reports in tool-call `_meta`", run_meta_terminal),
        Scenario("fail", "a tool call that fails", run_fail),
        Scenario("slow", "a long, slow answer — try the Stop button", run_slow),
    ]
}


def pick_scenario(prompt_text: str) -> Scenario:
    """Scenario named by the first word of the prompt (case-insensitive, optional leading ``/``), else the tour."""
    words = prompt_text.strip().lower().split(maxsplit=1)
    name = words[0].removeprefix("/") if words else ""
    return SCENARIOS.get(name, SCENARIOS["tour"])
