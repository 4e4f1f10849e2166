"""The edit that asks for permission: propose a diff, ask, then really write the file (or not).

Used by the ``edit`` scenario and by the tour. The session mode decides: *ask* asks first (unless an "always"
answer is remembered), *code* writes without asking, *plan* only describes the change as a diff.

The change is worked out from the file's *current* text, so running ``edit`` several times in one session
proposes a new, still-valid change each time. Files are read and written through the client
(``fs/read_text_file``, ``fs/write_text_file``) when it offers that, so an editor's unsaved changes are seen
and the write goes through the client; otherwise straight from/to disk.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from .jsonrpc import RequestError
from .tool_demos import fenced
from .turn import Turn

TARGET = "src/calculator.py"
# Used when the workspace is not the sample project (e.g. the user picked their own folder).
FALLBACK_TARGET = "DEMO_AGENT_NOTES.md"

PERMISSION_OPTIONS: list[dict[str, str]] = [
    {"optionId": "allow-once", "name": "Allow once", "kind": "allow_once"},
    {"optionId": "allow-always", "name": "Always allow", "kind": "allow_always"},
    {"optionId": "reject-once", "name": "Reject", "kind": "reject_once"},
    {"optionId": "reject-always", "name": "Always reject", "kind": "reject_always"},
]

# (what it does, [(old snippet, new snippet), ...]) — the first one whose snippets are all present is proposed.
_CALCULATOR_EDITS: list[tuple[str, list[tuple[str, str]]]] = [
    (
        "make `divide()` raise a clear `ValueError` instead of `ZeroDivisionError`",
        [
            (
                "    # TODO: give a friendlier error than ZeroDivisionError when b is 0\n    return a / b\n",
                '    if b == 0:\n        raise ValueError("cannot divide by zero")\n    return a / b\n',
            )
        ],
    ),
    (
        'add a `power()` function and the `"**"` operator to `RunningTotal`',
        [
            (
                "\n\nclass RunningTotal:",
                '\n\ndef power(a: float, b: float) -> float:\n    """Return a ** b."""\n    return a**b\n'
                "\n\nclass RunningTotal:",
            ),
            (
                '        # TODO: support "**" (power)\n'
                '        ops = {"+": add, "-": subtract, "*": multiply, "/": divide}\n',
                '        ops = {"+": add, "-": subtract, "*": multiply, "/": divide, "**": power}\n',
            ),
        ],
    ),
]


@dataclass(frozen=True, slots=True)
class ProposedEdit:
    rel: str
    old_text: str | None  # None = new file (ACP diff convention)
    new_text: str
    summary: str
    line: int  # 1-based first changed line, for the follow-along location


async def plan_edit(turn: Turn) -> ProposedEdit:
    """Pick the change to propose, based on what the workspace looks like right now."""
    current = await turn.read_text(TARGET)
    if current is not None:
        for summary, replacements in _CALCULATOR_EDITS:
            if all(old in current for old, _ in replacements):
                new = current
                for old, replacement in replacements:
                    new = new.replace(old, replacement, 1)
                return ProposedEdit(TARGET, current, new, summary, _first_changed_line(current, new))
        # Every scripted change is already in: append a harmless comment so there is still something to show.
        passes = current.count("# Reviewed by the demo agent") + 1
        new = current.rstrip("\n") + f"\n\n# Reviewed by the demo agent (pass {passes}).\n"
        return ProposedEdit(TARGET, current, new, "add a review note at the end", _first_changed_line(current, new))
    notes = await turn.read_text(FALLBACK_TARGET)
    line = "- The demo agent was here.\n"
    if notes is None:
        text = "# Demo agent notes\n\nThis file was written by the ACP demo agent.\n\n" + line
        return ProposedEdit(FALLBACK_TARGET, None, text, "create a small notes file", 1)
    new = notes.rstrip("\n") + "\n" + line
    return ProposedEdit(FALLBACK_TARGET, notes, new, "append a line to the notes file", _first_changed_line(notes, new))


def _first_changed_line(old: str, new: str) -> int:
    for number, (a, b) in enumerate(zip(old.splitlines(), new.splitlines(), strict=False), start=1):
        if a != b:
            return number
    return min(len(old.splitlines()), len(new.splitlines())) + 1


async def describe_edit(turn: Turn, edit: ProposedEdit) -> None:
    """Plan mode: say what the edit would be, as a unified diff, and change nothing."""
    old = (edit.old_text or "").splitlines(keepends=True)
    new = edit.new_text.splitlines(keepends=True)
    diff = "".join(difflib.unified_diff(old, new, f"a/{edit.rel}", f"b/{edit.rel}", n=2))
    await turn.say(
        f"**Plan mode**, so I change nothing. I would {edit.summary} in `{edit.rel}`, from line {edit.line}:"
        f"\n\n{fenced(diff, 'diff')}\n\nSwitch to *Ask* or *Code* mode (or type `modes ask`) and run `edit` again"
        " to apply it.\n\n"
    )


async def run_edit(turn: Turn) -> str:
    """Propose the edit; ask (unless an "always" answer is remembered, or in code mode), then apply or skip it.

    In plan mode only describe it. Returns one line on what happened, for the tour's summary.
    """
    edit = await plan_edit(turn)
    mode = turn.session.settings.mode
    if mode == "plan":
        await describe_edit(turn, edit)
        return f"Described an edit to `{edit.rel}` and changed nothing (plan mode)"
    path = turn.abs(edit.rel)
    diff = {"type": "diff", "path": path, "oldText": edit.old_text, "newText": edit.new_text}
    locations = [{"path": path, "line": edit.line}]
    title = f"Edit {edit.rel}"

    intent = "I'll" if mode == "code" else "I'd like to"
    await turn.say(f"{intent} {edit.summary} in `{edit.rel}`.\n\n")
    tool_id = await turn.tool(
        "edit",
        title,
        "edit",
        "pending",
        content=[diff],
        locations=locations,
        rawInput={"path": path, "summary": edit.summary},
    )

    policy = turn.session.edit_policy
    if mode == "code":
        allowed, note = True, " (Code mode: I edit without asking.)"
    elif policy is None:
        tool_call = {
            "toolCallId": tool_id,
            "title": title,
            "kind": "edit",
            "status": "pending",
            "content": [diff],
            "locations": locations,
        }
        choice = await turn.ask_permission(tool_call, PERMISSION_OPTIONS)
        allowed = choice.startswith("allow")
        if choice.endswith("-always"):
            turn.session.edit_policy = "allow" if allowed else "reject"
            note = (
                f" I'll remember “{'Always allow' if allowed else 'Always reject'}” for edits in this session,"
                " so I won't ask again."
            )
        else:
            note = ""
    else:
        allowed = policy == "allow"
        label = "Always allow" if allowed else "Always reject"
        note = f" (You chose “{label}” earlier in this session, so I didn't ask again.)"

    if not allowed:
        await turn.tool_update(
            tool_id,
            status="failed",
            content=[
                {
                    "type": "content",
                    "content": {"type": "text", "text": "Skipped at your request — nothing was written."},
                },
                diff,
            ],
        )
        await turn.say(f"Okay, I did **not** edit `{edit.rel}`.{note}\n\n")
        return f"Proposed an edit to `{edit.rel}`; you said no, so nothing changed"

    await turn.tool_update(tool_id, status="in_progress")
    await turn.pause()
    # Last check before touching the disk: a cancel during the pause above must leave the file alone.
    turn.check()
    if await turn.read_text(edit.rel) != edit.old_text:
        await _fail(turn, tool_id, f"`{edit.rel}` changed meanwhile; not written.")
        await turn.say(f"`{edit.rel}` changed while I was waiting, so I left it alone.{note}\n\n")
        return f"Proposed an edit to `{edit.rel}`, which changed meanwhile, so I left it alone"
    turn.check()  # the read above went to the client and back: a cancel may have come meanwhile
    try:
        await turn.write_text(edit.rel, edit.new_text)
    except (RequestError, OSError) as exc:
        await _fail(turn, tool_id, f"Could not write `{edit.rel}`: {exc}")
        await turn.say(f"I could not write `{edit.rel}`: {exc}{note}\n\n")
        return f"Tried to edit `{edit.rel}`, but could not write it"
    how = "fs/write_text_file" if turn.can_write else "disk"
    await turn.tool_update(tool_id, status="completed", content=[diff], rawOutput={"written": path, "via": how})
    via = " (through your client's `fs/write_text_file`)" if turn.can_write else ""
    await turn.say(f"Done — I edited `{edit.rel}`{via} to {edit.summary}.{note}\n\n")
    if mode == "code":
        return f"Edited `{edit.rel}` without asking (code mode)"
    return f"Proposed an edit to `{edit.rel}` and made it with your go-ahead"


async def _fail(turn: Turn, tool_id: str, message: str) -> None:
    item = {"type": "content", "content": {"type": "text", "text": message}}
    await turn.tool_update(tool_id, status="failed", content=[item])
