"""Keep and Undo on the hunks Changes shows: which hunk the page meant, and what doing it writes.

A changed file's panel draws its diff against the review's baseline hunk by hunk (`webclient.render.diffs`), each
with Keep and Undo, and carries a digest of what it showed (the baseline and the file, hashed). An action names the
hunk by its header and sends the digest back: when the file (or the baseline) is no longer what the page showed, it
is refused with a message, and the page shows the file's current diff, rather than a file someone changed meanwhile
overwritten blindly.

Undo writes the file back through `webclient.workspace.files.write_text_file`: the path checks, the sandbox's file
access and the atomic write of the agent's own ``fs/write_text_file``. Keep folds the hunk into the baseline
(`webclient.session.review.Review.kept`). These read and write the disk: the web layer runs them in a thread.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from webclient.render.diffs import DiffView, HunkBlock, build_diff
from webclient.session.attribution import Actor
from webclient.session.core import Session
from webclient.session.review import Decision, Fold, Since, Verb
from webclient.workspace.changes import MAX_FILE_BYTES, ChangedFile, ChangeStatus, changed_file
from webclient.workspace.files import NotText, decode, join_lines, split_lines, write_text_file
from webclient.workspace.paths import PathRefused

Scope = Literal["hunk", "file", "all"]

MAX_PATH = 4096
"""Characters of a path an action may name (the page sends what Changes listed)."""


MAX_ALL = 500
"""Changed files past which Changes offers no Keep all and Undo all: the list, shown again at each change, reads
every file for their digest."""


class ReviewRefused(Exception):
    """An action that was not done, with the sentence the person is shown."""


@dataclass(frozen=True, slots=True)
class Hunk:
    """A hunk as the review acts on it: its header (its name on the page), and its changed lines in both texts
    (0-based, end excluded)."""

    header: str
    old_start: int
    old_end: int
    new_start: int
    new_end: int

    @property
    def first(self) -> int:
        """The first changed line in the file as shown (1-based; where lines were removed, the line after them)."""
        return self.new_start + 1 if self.new_end > self.new_start else max(1, self.new_start)

    @property
    def last(self) -> int:
        return max(self.first, self.new_end)


def hunk_of(block: HunkBlock) -> Hunk:
    changed = [op for op in block.ops if op[0] != "equal"] or list(block.ops)
    return Hunk(
        block.header,
        min(op[1] for op in changed),
        max(op[2] for op in changed),
        min(op[3] for op in changed),
        max(op[4] for op in changed),
    )


@dataclass(frozen=True, slots=True)
class ReviewPanel:
    """One changed file as the review shows it: the diff against the review's baseline (None: no change left, or
    it cannot be shown, ``error`` says why), what the page acts on, and what was decided about it."""

    display: str
    diff: DiffView | None
    digest: str
    error: str | None = None
    hunks: dict[str, Hunk] = field(default_factory=dict)
    """The diff's hunks by header."""
    decisions: list[Decision] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class _Texts:
    """A changed file's baseline and current bytes (None: absent), read at one moment."""

    path: Path
    before: bytes | None
    now: bytes | None

    @property
    def digest(self) -> str:
        hashed = hashlib.blake2b(digest_size=12)
        for side in (self.before, self.now):
            hashed.update(b"-" if side is None else b"+" + hashlib.blake2b(side).digest())
        return hashed.hexdigest()


@dataclass(frozen=True, slots=True)
class Candidate:
    """A file the review may show: its baseline (None: not there), or that it was too big to keep."""

    path: Path
    before: bytes | None
    too_big: bool


def candidates(session: Session, since: Since) -> dict[str, Candidate]:
    """The files that may differ from the baseline of ``since``, by the name Changes gives them; no disk is read.
    Since the session began: its changed files. Since the last prompt: those, and those changed when it was sent."""
    paths = [change.path for change in session.changes.files()]
    if since == "prompt":
        paths = sorted({*paths, *session.review.prompt.held}, key=str)
    review = session.review
    return {
        session.workspace.relative(path): Candidate(path, review.before(path, since), review.too_big(path, since))
        for path in paths
    }


def _texts(session: Session, candidate: Candidate) -> _Texts:
    """Raises OSError, PathRefused (a file the person may not read), ValueError (too big)."""
    if candidate.too_big:
        raise ValueError("This file was too big to keep a copy of, so its change cannot be shown.")
    try:
        _, now = session.workspace.read_only().read_bytes(str(candidate.path), max_bytes=MAX_FILE_BYTES)
    except FileNotFoundError:
        now = None
    return _Texts(candidate.path, candidate.before, now)


def _text(data: bytes | None) -> str | None:
    return decode(data).text if data is not None else None


def _problem(error: Exception) -> str:
    if isinstance(error, NotText):
        return f"This is not a text file: {error}"
    if isinstance(error, OSError):
        return str(error.strerror or error)
    return str(error)


def review_files(session: Session, since: Since) -> list[ChangedFile]:
    """The files Changes lists: since the session began, as the tracker has them; since the last prompt, each
    candidate read now and compared, its lines counted as the tracker counts them."""
    if since == "session":
        return session.changes.files()
    listed: list[ChangedFile] = []
    for candidate in candidates(session, since).values():
        try:
            texts = _texts(session, candidate)
        except (OSError, ValueError, PathRefused):
            listed.append(ChangedFile(candidate.path, "modified", None, None))
            continue
        before, now = texts.before, texts.now
        if now != before:
            status: ChangeStatus = "added" if before is None else "deleted" if now is None else "modified"
            listed.append(changed_file(candidate.path, status, before, now))
    return listed


def review_panel(session: Session, display: str, since: Since = "session") -> ReviewPanel | None:
    """The panel of a changed file named as Changes names it; None if it is neither changed nor reviewed."""
    decisions = session.review.of(display)
    candidate = candidates(session, since).get(display)
    if candidate is None:
        return ReviewPanel(display, None, "", decisions=decisions) if decisions else None
    try:
        texts = _texts(session, candidate)
        old, new = _text(texts.before), _text(texts.now)
    except (OSError, ValueError, PathRefused) as error:
        return ReviewPanel(display, None, "", _problem(error), decisions=decisions)
    if old is None and new is None or old == new:
        return ReviewPanel(display, None, texts.digest, decisions=decisions)
    diff = build_diff(old, new, display)
    hunks = {block.header: hunk_of(block) for block in diff.blocks if isinstance(block, HunkBlock)}
    return ReviewPanel(display, diff, texts.digest, None, hunks, decisions)


def _all_digest(session: Session, files: dict[str, Candidate]) -> tuple[str, dict[str, _Texts]]:
    hashed = hashlib.blake2b(digest_size=12)
    texts: dict[str, _Texts] = {}
    for display, candidate in files.items():
        hashed.update(display.encode("utf-8", "surrogatepass") + b"\0")
        try:
            texts[display] = _texts(session, candidate)
            hashed.update(texts[display].digest.encode())
        except (OSError, ValueError, PathRefused):
            hashed.update(b"?")
    return hashed.hexdigest(), texts


def all_digest(session: Session, since: Since = "session") -> str | None:
    """One digest of every file the review shows as it is now: what the panel's Keep all and Undo all carry; None
    past ``MAX_ALL`` files (each is read for it), when the panel offers neither."""
    files = candidates(session, since)
    return None if len(files) > MAX_ALL else _all_digest(session, files)[0]


# -- acting ----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Done:
    """What an action did to one file's hunks on disk (an undo wrote it), for the session to record."""

    display: str
    path: Path
    hunks: list[Hunk]
    folds: list[Fold]


async def act(
    session: Session,
    verb: Verb,
    scope: Scope,
    display: str,
    header: str,
    digest: str,
    by: Actor = None,
    since: Since = "session",
) -> int:
    """Keep or undo one hunk, one file's hunks or every file's, against the baseline of ``since``; returns how many
    hunks. The disk is read and written in a thread; the review's state changes here, on the event loop.

    Raises:
        ReviewRefused: the file is not a change of this session, it is no longer what the page showed, the hunk is
            not in it, or the write was refused (path checks, file access, encoding); nothing was done (for ``all``:
            the other files were).
    """
    files = candidates(session, since)
    refused: list[str] = []
    if scope == "all":
        done, refused = await asyncio.to_thread(_all, session, verb, files, digest)
    else:
        hunk = header if scope == "hunk" else None
        done = [await asyncio.to_thread(_one, session, verb, files.get(display), display, hunk, digest)]
    for each in done:
        if verb == "undo":
            session.changes.note_write(each.path)
            for hunk_done in each.hunks:
                session.review.undone(each.display, hunk_done.first, hunk_done.last, by)
        else:
            for hunk_done, change in zip(each.hunks, each.folds, strict=True):
                session.review.kept(each.path, each.display, hunk_done.first, hunk_done.last, change, by, since)
    if refused:
        raise ReviewRefused(" ".join(refused))
    return sum(len(each.hunks) for each in done)


def _all(session: Session, verb: Verb, files: dict[str, Candidate], digest: str) -> tuple[list[_Done], list[str]]:
    found, texts = _all_digest(session, files)
    if len(files) > MAX_ALL or digest != found:
        raise ReviewRefused("The changes are no longer what the page showed: nothing was done. They are shown again.")
    done: list[_Done] = []
    refused: list[str] = []
    for display, each in texts.items():  # one file refused (its write, say) leaves the others done, and recorded
        try:
            done.append(_on_file(session, verb, display, None, each))
        except ReviewRefused as refusal:
            refused.append(str(refusal))
    return done, refused


def _one(
    session: Session, verb: Verb, candidate: Candidate | None, display: str, header: str | None, digest: str
) -> _Done:
    if candidate is None:
        raise ReviewRefused(f"{display} is not among this session's changes: nothing was done.")
    try:
        texts = _texts(session, candidate)
    except (OSError, ValueError, PathRefused) as error:
        raise ReviewRefused(f"{display}: {_problem(error)}") from None
    if digest != texts.digest:
        raise ReviewRefused(
            f"{display} changed since the page showed it (someone or something else wrote it): nothing was done. "
            "Its current diff is shown."
        )
    return _on_file(session, verb, display, header, texts)


def _on_file(session: Session, verb: Verb, display: str, header: str | None, texts: _Texts) -> _Done:
    try:
        old, new = _text(texts.before), _text(texts.now)
    except NotText as error:
        raise ReviewRefused(f"{display}: {_problem(error)}") from None
    if old is None and new is None:
        return _Done(display, texts.path, [], [])
    diff = build_diff(old, new, display)
    hunks = [hunk_of(block) for block in diff.blocks if isinstance(block, HunkBlock)]
    if header is not None:
        hunks = [hunk for hunk in hunks if hunk.header == header]
        if not hunks:
            raise ReviewRefused(f"{display} has no such change any more: nothing was done. Its current diff is shown.")
    if not hunks:
        return _Done(display, texts.path, [], [])
    if verb == "undo":
        _undo(session, texts, old, new, hunks, display)
        return _Done(display, texts.path, hunks, [])
    return _keep(texts, old, new, hunks, display)


def _undo(session: Session, texts: _Texts, old: str | None, new: str | None, hunks: list[Hunk], display: str) -> None:
    """Write the file back without ``hunks`` (the last first, so the earlier ones' lines stay where they are)."""
    try:
        if old is None:  # a new file, undone whole: it goes (the file the change lists, not where a link leads)
            if session.workspace.check(str(texts.path), write=True) != texts.path:
                raise PathRefused(f"{display} is no longer the file the change lists (a link now?): not removed.")
            os.unlink(texts.path)
            return
        old_lines, old_no_newline = split_lines(old)
        lines, no_newline = split_lines(new or "")
        for hunk in sorted(hunks, key=lambda h: h.new_start, reverse=True):
            if hunk.new_end == len(lines):
                no_newline = old_no_newline if hunk.old_end == len(old_lines) else False
            lines[hunk.new_start : hunk.new_end] = old_lines[hunk.old_start : hunk.old_end]
        write_text_file(session.workspace, str(texts.path), join_lines(lines, no_newline))
    except (OSError, ValueError, PathRefused) as error:
        raise ReviewRefused(f"{display} was not written back: {_problem(error)}") from None


def _keep(texts: _Texts, old: str | None, new: str | None, hunks: list[Hunk], display: str) -> _Done:
    """How ``hunks`` fold into the baseline: the last first, so that each applies to the baseline the one before
    left."""
    new_lines, new_no_newline = split_lines(new or "")
    old_lines, _ = split_lines(old or "")
    if new is None:  # a deletion kept: the file is gone for the review too
        whole = Hunk("", 0, len(old_lines), 0, 0)
        return _Done(display, texts.path, [whole], [Fold(0, len(old_lines), (), None, absent=True)])
    ordered = sorted(hunks, key=lambda h: h.old_start, reverse=True)
    folds = [
        Fold(
            hunk.old_start,
            hunk.old_end,
            tuple(new_lines[hunk.new_start : hunk.new_end]),
            new_no_newline if hunk.old_end == len(old_lines) else None,
        )
        for hunk in ordered
    ]
    return _Done(display, texts.path, ordered, folds)
