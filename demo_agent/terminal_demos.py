"""Commands in terminals: a real test run through the client's ``terminal/*``, and a display-only terminal.

The one command the demo agent ever asks a client to run is its own Python interpreter (``sys.executable``)
with the small, self-contained test runner of :mod:`.runner_script` passed as ``-c`` source, in the session
cwd: it runs the sample project's tests, or only lists the folder when that is not the sample project. Without
the client's ``terminal`` capability the run is simulated (:func:`.tool_demos.execute_tool`).

The display-only terminal follows the claude-agent-acp / codex-acp convention (client capability
``_meta.terminal_output``): the agent reports a terminal in tool-call ``_meta`` — ``terminal_info``, then
``terminal_output`` chunks, then ``terminal_exit`` — and the client only shows it. Nothing is executed for it.
"""

from __future__ import annotations

import asyncio
import functools
import re
import sys
import uuid
from pathlib import Path
from typing import Any

from .jsonrpc import RequestError
from .tool_demos import execute_tool, fenced, text_item
from .turn import CHUNK_DELAY, STEP_DELAY, Turn

OUTPUT_LIMIT = 64 * 1024  # bytes of output the client keeps for us; the runner prints far less
RUN_TIMEOUT = 60.0  # seconds before a test run that hangs is killed
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_SUMMARY = re.compile(r"^=== (.+) ===$", re.MULTILINE)
_FAILED = re.compile(r"^FAILED (\S+)", re.MULTILINE)


RUNNER_HEADER = "# Test runner of the demo agent: demo_agent/runner_script.py\n"


@functools.cache
def runner_source() -> str:
    """The test runner's Python source, handed to the interpreter with ``-c``.

    Its docstring is swapped for a one-line comment: clients show the command line, which starts with it.
    """
    source = Path(__file__).with_name("runner_script.py").read_text(encoding="utf-8")
    assert source.startswith('"""'), "runner_script.py must open with its docstring"
    return RUNNER_HEADER + source[source.index('"""', 3) + 3 :].lstrip("\n")


def plain_text(output: str) -> str:
    """Terminal output as the final screen would read: ANSI codes dropped, each ``\\r`` redraw resolved."""
    lines = _ANSI.sub("", output).replace("\r\n", "\n").split("\n")
    return "\n".join(line.rsplit("\r", 1)[-1] for line in lines)


def _speed_text(speed: float) -> str:
    return f"{speed:g}"


async def run_tests(turn: Turn) -> str:
    """Run the tests in a client terminal (simulated without one), say how it went; returns a short outcome."""
    if not turn.can_run:
        await execute_tool(turn)
        await turn.say("The tests passed (a simulated run: this client does not offer terminals).\n\n")
        return "Ran the tests (simulated: your client offers no terminals)"
    cwd = str(turn.workspace.root)
    tool_id = await turn.tool(
        "run",
        "Run the tests",
        "execute",
        "pending",
        rawInput={"command": sys.executable, "args": ["-u", "-c", "<the demo agent's test runner>"], "cwd": cwd},
    )
    args = ["-u", "-c", runner_source()]
    env = {"DEMO_AGENT_SPEED": _speed_text(turn.speed)}
    try:
        async with turn.terminal(sys.executable, args, cwd=cwd, output_byte_limit=OUTPUT_LIMIT, env=env) as terminal:
            # Embed the terminal at once: the client shows its output live while we wait.
            embed = {"type": "terminal", "terminalId": terminal}
            await turn.tool_update(tool_id, status="in_progress", content=[embed])
            exit_status, timed_out = await _wait_for_exit(turn, terminal)
            output = await turn.terminal_output(terminal)
    except RequestError as exc:
        message = f"The client could not run the tests: {exc}"
        await turn.tool_update(tool_id, status="failed", content=[text_item(message)], rawOutput={"error": str(exc)})
        await turn.say(f"{message}.\n\n")
        return "Tried to run the tests (the client refused)"
    code, signal = exit_status.get("exitCode"), exit_status.get("signal")
    raw_text = output.get("output")
    text = plain_text(raw_text if isinstance(raw_text, str) else "")
    summaries = _SUMMARY.findall(text)
    summary = summaries[-1] if summaries else "no summary"
    await turn.tool_update(
        tool_id,
        status="completed" if code == 0 else "failed",
        rawOutput={
            "exitCode": code,
            "signal": signal,
            "summary": summary,
            "truncated": bool(output.get("truncated")),
            "timedOut": timed_out,
        },
    )
    line = _one_line(summary, code, signal, _FAILED.findall(text), timed_out)
    await turn.say(line + "\n\n")
    return f"Ran the tests in a terminal of your client: {summary}"


async def _wait_for_exit(turn: Turn, terminal_id: str) -> tuple[dict[str, Any], bool]:
    """Wait for the command to end; past :data:`RUN_TIMEOUT` kill it (timeouts are the agent's job)."""
    try:
        return await asyncio.wait_for(turn.wait_for_terminal_exit(terminal_id), RUN_TIMEOUT), False
    except TimeoutError:
        await turn.kill_terminal(terminal_id)
        return await turn.wait_for_terminal_exit(terminal_id), True


def _one_line(summary: str, code: Any, signal: Any, failed: list[str], timed_out: bool) -> str:
    if timed_out:
        return f"The tests were still running after {RUN_TIMEOUT:g} s, so I stopped them."
    if summary.startswith("listed"):
        return f"This folder is not the sample project, so the runner only {summary} — nothing was tested."
    if code == 0:
        return f"All green: **{summary}**, in a real terminal your client ran for me."
    ended = f"exit code {code}" if code is not None else f"killed by {signal}"
    line = f"The test run failed ({ended}): **{summary}**."
    if failed:
        line += " Failing: " + ", ".join(f"`{name}`" for name in failed) + "."
    if "test_divide_by_zero" in failed:
        line += " That test still expects `ZeroDivisionError` — its TODO says to expect `ValueError` once `divide()`"
        line += " checks for zero, which the edit did."
    return line


# -- display-only terminal ----------------------------------------------------------------------------

GREEN, BOLD, DIM, RESET = "\x1b[32m", "\x1b[1m", "\x1b[2m", "\x1b[0m"


def _format_chunks(files: list[str]) -> list[str]:
    """The pieces of output of a pretend formatting check, in the order they are "printed"."""
    chunks = [
        f"{BOLD}$ demo-format --check .{RESET}\n{DIM}(reported by the demo agent: nothing runs){RESET}\n",
        f"Checking {len(files)} file{'s' if len(files) != 1 else ''}…\n",
    ]
    for rel in files:
        chunks.append(f"  {DIM}…{RESET} {rel}")  # redrawn in place by the next chunk
        chunks.append(f"\r  {GREEN}✓{RESET} {rel}\n")
    chunks.append(f"{GREEN}{BOLD}{len(files)} file{'s' if len(files) != 1 else ''} already formatted{RESET}\n")
    return chunks


async def meta_terminal(turn: Turn) -> None:
    """A tool call whose terminal the agent reports in ``_meta``, when the client shows such terminals."""
    files = [rel for rel in turn.workspace.text_files() if rel.endswith((".py", ".toml"))][:6]
    chunks = _format_chunks(files)
    title = "Check the formatting (reported by the agent)"
    raw_input = {"command": "demo-format --check .", "simulated": True}
    if not turn.can_show_terminal_meta:
        tool_id = await turn.tool("format", title, "execute", "in_progress", rawInput=raw_input)
        await turn.pause(STEP_DELAY)
        note = "Your client does not advertise `_meta.terminal_output`, so here is the output as text:"
        output = fenced(plain_text("".join(chunks)), "console")
        await turn.tool_update(tool_id, status="completed", content=[text_item(f"{note}\n\n{output}")])
        return
    terminal_id = f"demo-term-{uuid.uuid4().hex[:8]}"
    tool_id = await turn.tool(
        "format",
        title,
        "execute",
        "in_progress",
        content=[{"type": "terminal", "terminalId": terminal_id}],
        rawInput=raw_input,
        _meta={"terminal_info": {"terminal_id": terminal_id, "cwd": str(turn.workspace.root)}},
    )
    for chunk in chunks:
        await turn.pause(CHUNK_DELAY * 5)
        await turn.tool_update(tool_id, _meta={"terminal_output": {"terminal_id": terminal_id, "data": chunk}})
    await turn.tool_update(
        tool_id,
        status="completed",
        _meta={"terminal_exit": {"terminal_id": terminal_id, "exit_code": 0, "signal": None}},
    )


# -- scenarios ----------------------------------------------------------------------------------------


async def run_run(turn: Turn) -> None:
    """``run``: the tests in a real client terminal, then a display-only terminal (each when offered)."""
    if turn.can_run:
        await turn.say(
            "Your client runs commands for me (`terminal/create`), so I'll run the tests for real: my own Python"
            " with a small test runner passed as `-c` source, in this session's folder.\n\n"
        )
    await run_tests(turn)
    if turn.can_show_terminal_meta:
        await turn.say("Next, a terminal I only *report* (in tool-call `_meta`); your client just shows it.\n\n")
        await meta_terminal(turn)
        await turn.say("That one ran nothing: its output came from me, chunk by chunk.\n")


async def run_meta_terminal(turn: Turn) -> None:
    """``meta-terminal``: only the display-only terminal."""
    await turn.say("A terminal I report myself in tool-call `_meta`; nothing is executed.\n\n")
    await meta_terminal(turn)
