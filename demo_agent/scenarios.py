"""The scenarios a prompt can run, chosen by its first word (``/plan`` or ``plan``); anything else runs the tour.

Each scenario is also a slash command (``available_commands_update``). A prompt that brings attachments gets
them acknowledged first; one that brings only attachments (or text naming no scenario) gets just that.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from . import texts
from .attachments import acknowledge, run_attachments
from .edit_flow import TARGET, run_edit
from .media import run_media
from .prompt_content import Prompt
from .questions import run_link, run_question
from .session_config import MODEL_GROUPS, MODELS, MODES, THOUGHT_LEVELS, Choice, config_update, mode_update
from .steering import run_steer
from .subagents import run_subagent
from .terminal_demos import run_meta_terminal, run_run, run_tests
from .tool_demos import failing_tool, line_of, read_tool, search_tool
from .tools_scenario import run_tools
from .turn import CHUNK_DELAY, STEP_DELAY, Turn

ScenarioFn = Callable[[Turn], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class Scenario:
    name: str
    description: str
    run: ScenarioFn
    hint: str | None = None
    """What the command takes after its name, shown by clients as ``input.hint``; ``None``: nothing."""

    def command(self) -> dict[str, Any]:
        """This scenario as an ``AvailableCommand``."""
        command: dict[str, Any] = {"name": self.name, "description": self.description}
        if self.hint is not None:
            command["input"] = {"hint": self.hint}
        return command


async def run_help(turn: Turn) -> None:
    lines = ["## Demo agent scenarios\n", "Type a scenario name (with or without a leading `/`):\n"]
    lines += [f"- `{s.name}`{f' *{s.hint}*' if s.hint else ''} — {s.description}" for s in SCENARIOS.values()]
    lines.append(
        "\nAnything else runs the **tour**. Attach images, audio or files (or `@`-mention workspace files) and I"
        " say exactly what I got before the scenario runs; attachments alone get just that. Unless you picked a"
        " folder, the workspace is a throw-away copy of a tiny sample project.\n"
    )
    lines.append(f"Right now: {turn.session.settings.summary()} — `modes` says what they change.\n")
    offered = [
        ("`fs/read_text_file`", turn.can_read),
        ("`fs/write_text_file`", turn.can_write),
        ("`terminal/*`", turn.can_run),
        ("`_meta` terminals", turn.can_show_terminal_meta),
        ("boolean config options", turn.session.settings.boolean_options),
    ]
    lines.append(
        "What your client offers me: "
        + ", ".join(f"{name} {'✓' if ok else '✗'}" for name, ok in offered)
        + ". Without them I read and write the disk myself and only simulate commands.\n"
    )
    await turn.say("\n".join(lines))


async def run_markdown(turn: Turn) -> None:
    await turn.think(texts.MARKDOWN_THOUGHT)
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
    await turn.think(texts.PLAN_THOUGHT)
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
    await turn.think(texts.TOUR_THOUGHT)
    await turn.say(texts.TOUR_INTRO)
    statuses = ["pending"] * 4
    how = {"ask": "asks first", "code": "code mode: no asking", "plan": "plan mode: describe only"}
    fix = f"Fix divide-by-zero ({how[turn.session.settings.mode]})"
    entries = ["Read the calculator", "Search for TODOs", fix, "Run the tests"]

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
    edited = await run_edit(turn)
    await advance(2, "completed")
    await advance(3, "in_progress")
    ran = await run_tests(turn)
    await advance(3, "completed")
    await turn.pause(STEP_DELAY)
    await turn.say(texts.TOUR_SUMMARY.format(target=target or "the workspace", edited=edited, ran=ran))


async def run_edit_scenario(turn: Turn) -> None:
    await run_edit(turn)


def _names(choices: tuple[Choice, ...]) -> str:
    return " · ".join(c.name for c in choices)


def _settings_table(turn: Turn) -> str:
    settings = turn.session.settings
    model = settings.model_info
    groups = " · ".join(
        f"{g.name}: " + ", ".join(m.choice.name for m in MODELS if m.group == g.value) for g in MODEL_GROUPS
    )
    group = next(g.name for g in MODEL_GROUPS if g.value == model.group)
    mode, thinking = settings.mode_choice, settings.thought_choice
    rows = [
        ("Mode", f"**{mode.name}** — {mode.description}", _names(MODES)),
        ("Model", f"**{model.choice.name}** ({group}) — {model.choice.description}", groups),
        ("Thinking", f"**{thinking.name}** — {thinking.description}", _names(THOUGHT_LEVELS)),
    ]
    lines = ["| Setting | Now | Choices |", "|---|---|---|"]
    lines += [f"| {name} | {now} | {choices} |" for name, now, choices in rows]
    if settings.boolean_options:
        lines.append(f"| Verbose | **{'on' if settings.verbose else 'off'}** — explain every step | on · off |")
    return "\n".join(lines)


async def run_modes(turn: Turn) -> None:
    """Explain the mode and config; ``modes <mode>`` switches mode from the agent's side."""
    settings = turn.session.settings
    await turn.think(texts.MODES_THOUGHT)
    wanted = turn.prompt.args.split()[0].lower() if turn.prompt.args else ""
    if wanted:
        if wanted in {m.value for m in MODES}:
            settings.mode = wanted
            await turn.update(mode_update(settings))
            await turn.update(config_update(settings))
            await turn.say(
                f"Switched to **{settings.mode_choice.name}** mode ({settings.mode_choice.description.lower()})."
                " I told your client with `current_mode_update` and `config_option_update`, so its selectors"
                " follow.\n\n"
            )
        else:
            await turn.say(f"There is no `{wanted}` mode; pick `ask`, `code` or `plan`.\n\n")
    verbose = texts.VERBOSE_ON if settings.boolean_options else texts.VERBOSE_OFF
    await turn.say(
        "## Modes and settings\n\n" + _settings_table(turn) + "\n\n" + texts.MODES_EFFECTS.format(verbose=verbose)
    )


_MENTION = re.compile(r"@(\S+?)(?=[\s,.?!]*(?:\s|$))")


async def _replay_user(turn: Turn, text: str) -> None:
    """A user message of the replay; an ``@path`` of an existing workspace file becomes a ``resource_link``."""
    message_id = uuid.uuid4().hex
    start = 0
    for match in _MENTION.finditer(text):
        rel = match.group(1)
        if not turn.workspace.exists(rel):
            continue
        await turn.say(text[start : match.start()], kind="user_message_chunk", message_id=message_id, words=8)
        link = {"type": "resource_link", "uri": turn.workspace.path(rel).as_uri(), "name": rel.rsplit("/", 1)[-1]}
        await turn.send_block(link, message_id=message_id, kind="user_message_chunk")
        start = match.end()
    await turn.say(text[start:], kind="user_message_chunk", message_id=message_id, words=8)


async def run_replay(turn: Turn) -> None:
    """An earlier conversation sent back as a session replay would: user and agent chunks, one id per message."""
    await turn.say(texts.REPLAY_INTRO)
    target = turn.workspace.first_existing(TARGET)
    for who, text in texts.REPLAY:
        await turn.pause(STEP_DELAY / 2)
        if who == "user":
            await _replay_user(turn, text)
        elif who == "thought":
            await turn.say(text, thought=True, words=8, delay=CHUNK_DELAY / 3)
            if target is not None:  # the read that answered the question, already finished
                source = turn.workspace.read(target) or ""
                location = {"path": turn.abs(target), "line": line_of(source, "def divide")}
                await turn.tool("replay", f"Read {target}", "read", "completed", locations=[location])
        else:
            await turn.say(text, words=8, delay=CHUNK_DELAY / 3)
    await turn.say(texts.REPLAY_OUTRO)


SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in [
        Scenario("help", "list the scenarios, the current mode and settings (this message)", run_help),
        Scenario("tour", "a short tour of everything (also runs for any other prompt)", run_tour),
        Scenario(
            "markdown",
            "a thought, then one long Markdown answer: headings, lists, a table, a quote, code in six languages",
            run_markdown,
        ),
        Scenario(
            "media",
            "an image, an audio clip, file and web links and an embedded file, in a message and in a tool call",
            run_media,
        ),
        Scenario("plan", "a four-step plan that advances entry by entry", run_plan),
        Scenario("tools", "a tool call of every kind, incl. custom kinds and streamed content", run_tools),
        Scenario(
            "edit",
            "propose an edit to src/calculator.py: ask first (ask mode), just do it (code), only describe it (plan)",
            run_edit_scenario,
        ),
        Scenario(
            "modes",
            "the current mode, model and thinking level and what they change; add a mode to switch to it",
            run_modes,
            hint="ask, code or plan (optional)",
        ),
        Scenario("run", "run the tests in a real terminal of the client (simulated if it has none)", run_run),
        Scenario("meta-terminal", "a display-only terminal the agent reports in tool-call `_meta`", run_meta_terminal),
        Scenario("replay", "an earlier conversation replayed as `session/load` does, yours included", run_replay),
        Scenario("question", "a form question (elicitation): a choice, a number, a switch, a secret", run_question),
        Scenario("link", "a link to follow (elicitation in URL mode)", run_link),
        Scenario("subagent", "a Task that runs a subagent, shown nested, which you can stop on its own", run_subagent),
        Scenario("fail", "a tool call that fails", run_fail),
        Scenario("slow", "a long, slow answer — try the Stop button", run_slow),
        Scenario(
            "steer", "a slow walk through the project: send a prompt meanwhile with Send now to steer it", run_steer
        ),
    ]
}

ATTACHMENTS = Scenario("attachments", "say what the prompt's attachments are", run_attachments)


def choose(prompt: Prompt) -> Scenario:
    """The scenario the prompt names; else the attachments reply if it brought any, else the tour."""
    if prompt.command in SCENARIOS:
        return SCENARIOS[prompt.command]
    return ATTACHMENTS if prompt.attachments else SCENARIOS["tour"]


async def play(turn: Turn, scenario: Scenario) -> None:
    """Run ``scenario``: the prompt's attachments acknowledged first, and with *verbose* on, a closing sentence."""
    if turn.prompt.attachments and scenario is not ATTACHMENTS:
        await acknowledge(turn)
    await scenario.run(turn)
    if turn.session.settings.verbose:
        steps = ", ".join(f"{count} × `{kind}`" for kind, count in turn.sent.items())
        await turn.say(
            f"\n*Verbose:* I ran `{scenario.name}` in {turn.session.settings.summary()}. On the way I sent {steps},"
            f" about {turn.tokens} tokens in all.\n"
        )
