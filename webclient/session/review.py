"""The person's review of the agent's changes: each hunk kept or undone, and the note the agent gets about it.

Keep folds a hunk into the baseline Changes compares against (`ChangeTracker.rebase`), so it leaves the review;
Undo writes the file back without it (`webclient.render.review` finds the hunk and writes). Both are journalled
with who did it (`record_action`, so the audit log has them) and shown in the file's panel as kept or undone.

What was undone is told to the agent with the next prompt, as a text block before the person's words (`turn_starting`,
which `webclient.session.turns.Turns` asks when a turn starts), since the files it last saw are no longer there. A
session rebuilt from its journal folds its kept hunks again and lists its decisions (`act_again`); a turn in the
journal means the note went with it.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from webclient.session.attribution import Actor, record_action, shown_by
from webclient.session.prompt_baseline import PromptBaseline
from webclient.session.prompt_content import PromptBlock
from webclient.session.recorder import SESSION, Recorder
from webclient.session.tasks import BackgroundTasks
from webclient.viewmodel.content import TextBlock
from webclient.workspace.changes import ChangeTracker
from webclient.workspace.files import NotText, decode, encode, join_lines, split_lines

log = logging.getLogger(__name__)

Verb = Literal["keep", "undo"]
Since = Literal["session", "prompt"]
"""Which baseline the review compares with: the session's start, or the last prompt (`PromptBaseline`)."""

MAX_DECISIONS = 2000
"""Decisions a session lists (the oldest go first): a review of a huge change must not grow without end."""
MAX_NOTED = 50
"""Hunks the agent's note names one by one; past them it says how many more."""


@dataclass(frozen=True, slots=True)
class Decision:
    """One hunk the person kept or undid: ``first``..``last`` are its changed lines in the file as it was shown
    (new-file numbers; for a hunk that only removed lines, where they were)."""

    verb: Verb
    path: str
    """The file as Changes names it (relative to the workspace)."""
    first: int
    last: int
    by: str | None = None
    """Who, as the journal names them (None: token mode's one person, or the server)."""

    @property
    def lines(self) -> str:
        return f"line {self.first}" if self.first == self.last else f"lines {self.first}–{self.last}"


@dataclass(frozen=True, slots=True)
class Fold:
    """A kept hunk, as it changes the baseline: its lines ``start``..``end`` (0-based, end excluded) become
    ``lines``; ``no_newline`` is the baseline's last line's, when the hunk reaches the end (else None); ``absent``:
    the file's deletion kept, so the baseline is a file that does not exist."""

    start: int
    end: int
    lines: tuple[str, ...]
    no_newline: bool | None
    absent: bool = False

    def json(self) -> dict[str, Any]:
        return {
            "start": self.start,
            "end": self.end,
            "lines": list(self.lines),
            "no_newline": self.no_newline,
            "absent": self.absent,
        }

    @classmethod
    def of(cls, data: dict[str, Any]) -> Fold:
        lines = data["lines"]
        if not isinstance(lines, list) or not all(isinstance(line, str) for line in lines):
            raise ValueError("a kept hunk's lines must be strings")
        no_newline = data.get("no_newline")
        return cls(
            int(data["start"]),
            int(data["end"]),
            tuple(lines),
            None if no_newline is None else bool(no_newline),
            bool(data.get("absent", False)),
        )


def fold(before: bytes | None, change: Fold) -> bytes | None:
    """``before`` (a baseline) with a kept hunk folded in, in the file's own encoding and line endings; None when it
    cannot be (not text, or the hunk does not fit: the baseline is not the one the hunk was kept against)."""
    try:
        like = decode(before) if before is not None else None
    except NotText:
        return None
    lines, no_newline = split_lines(like.text if like is not None else "")
    if not 0 <= change.start <= change.end <= len(lines):
        return None
    reaches_end = change.end == len(lines)
    lines[change.start : change.end] = change.lines
    if reaches_end and change.no_newline is not None:
        no_newline = change.no_newline
    try:
        return encode(join_lines(lines, no_newline), like)
    except ValueError:
        return None


class Review:
    """The decisions of one session's review, and what the agent has not been told of yet."""

    def __init__(self, changes: ChangeTracker, recorder: Recorder, tasks: BackgroundTasks) -> None:
        self.changes = changes
        self.recorder = recorder
        self.tasks = tasks
        """Where the page's Keep and Undo run (they read and write the disk), stopped with the session."""
        self.decisions: list[Decision] = []
        self.untold: list[Decision] = []
        """Hunks undone since the last prompt: the next one tells the agent of them."""
        self.prompt = PromptBaseline(changes, recorder)
        """What each file held when the last prompt was sent: the baseline of "since the last prompt"."""
        self._refold: list[dict[str, Any]] = []
        """A rebuilt session's Keeps, folded again once the originals are known (`fold_again`)."""
        self._refold_from = 0
        """The first of them made after the last prompt's mark."""

    def of(self, path: str) -> list[Decision]:
        """The decisions about one file, in the order they were made."""
        return [decision for decision in self.decisions if decision.path == path]

    def before(self, path: Path, since: Since) -> bytes | None:
        """The baseline of ``path`` the review compares with (None: not there, or too big to keep)."""
        return self.prompt.before(path) if since == "prompt" else self.changes.original(path)

    def too_big(self, path: Path, since: Since) -> bool:
        """Whether ``path`` was too big to keep a copy of in that baseline."""
        if since == "prompt":
            return self.prompt.too_big(path)
        return path in self.changes.baseline and self.changes.original(path) is None

    def kept(
        self, path: Path, display: str, first: int, last: int, change: Fold, by: Actor = None, since: Since = "session"
    ) -> None:
        """A hunk kept: folded into the baseline (it leaves the review), journalled, listed."""
        self._fold(path, change, since, copy=True)
        # The lines go in a record of their own, for the rebuild; the audit log keeps the action without them.
        folded = {"event": "review-fold", "path": str(path), "shown": display, "fold": change.json(), "since": since}
        self.recorder.record(SESSION, "session", json.dumps(folded))
        recorded = record_action(self.recorder, "review_keep", by, shown=display, first=first, last=last, since=since)
        self._decided(Decision("keep", display, first, last, _name(recorded)))

    def undone(self, display: str, first: int, last: int, by: Actor = None) -> None:
        """A hunk undone (the file is already written back): journalled, listed, and told to the agent next."""
        recorded = record_action(self.recorder, "review_undo", by, shown=display, first=first, last=last)
        decision = Decision("undo", display, first, last, _name(recorded))
        self._decided(decision)
        self.untold.append(decision)

    def _fold(self, path: Path, change: Fold, since: Since, copy: bool) -> None:
        """Fold a kept hunk into the baseline of ``since``; ``copy``: a Keep made after the last prompt's mark, so the
        prompt's baseline keeps what the session's said before."""
        if self.too_big(path, since):
            return  # too big to keep a copy of: its hunks are never shown, so never kept
        folded = None if change.absent else fold(self.before(path, since), change)
        if folded is None and not change.absent:
            return
        if since == "prompt":
            self.prompt.rebase(path, folded)
            return
        if copy:
            self.prompt.copy_before_rebase(path)
        self.changes.rebase(path, folded)

    def _decided(self, decision: Decision) -> None:
        self.decisions.append(decision)
        del self.decisions[:-MAX_DECISIONS]

    def turn_starting(self) -> list[PromptBlock]:
        """A prompt is being sent: what the files hold now becomes the prompt's baseline, and the note for it is
        returned (none when nothing was undone); the agent is told once."""
        self.prompt.mark()
        if not self.untold:
            return []
        named = ", ".join(f"{d.path} ({d.lines})" for d in self.untold[:MAX_NOTED])
        more = len(self.untold) - MAX_NOTED
        if more > 0:
            named += f", and {more} more"
        self.untold = []
        text = (
            f"The person undid these changes of yours since your last turn: {named}. "
            "Those files are as they were before the changes; read them again before editing them.\n\n"
        )
        return [TextBlock(text=text)]

    # -- rebuilt from the journal -------------------------------------------------------------------

    def act_again(self, action: dict[str, Any]) -> None:
        """A journalled Keep or Undo, shown again (a kept hunk's fold is its own record: `fold_recorded`)."""
        verb: Verb = "keep" if action["action"] == "review_keep" else "undo"
        decision = Decision(
            verb, str(action["shown"]), int(action["first"]), int(action["last"]), _name(action.get("by"))
        )
        self._decided(decision)
        if verb == "undo":
            self.untold.append(decision)

    def fold_recorded(self, event: dict[str, Any]) -> None:
        """A journalled kept hunk's fold (a ``review-fold`` event), folded in by `fold_again`."""
        self._refold.append(event)

    def mark_again(self, event: dict[str, Any]) -> None:
        """A journalled prompt's baseline (`PromptBaseline.mark`)."""
        self.prompt.mark_again(event)
        self._refold_from = len(self._refold)

    def fold_again(self) -> None:
        """The kept hunks of a rebuilt session folded into its baselines again, in the order they were kept: a Keep
        in the prompt's view only when made after the last prompt (an earlier one's baseline is gone)."""
        for index, action in enumerate(self._refold):
            since: Since = "prompt" if action.get("since") == "prompt" else "session"
            after_mark = index >= self._refold_from
            if since == "prompt" and not after_mark:
                continue
            try:
                self._fold(Path(str(action["path"])), Fold.of(action["fold"]), since, copy=after_mark)
            except (KeyError, TypeError, ValueError):  # a record this code cannot read: the others still fold
                log.warning("a kept hunk of the journal was unreadable: %r", action.get("shown"))
        self._refold = []

    def told(self) -> None:
        """A turn started (read from the journal): what was undone before it was told with it."""
        self.untold = []


def _name(recorded: object) -> str | None:
    by = shown_by(recorded)
    return by.name if by is not None else None
