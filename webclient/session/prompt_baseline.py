"""The second baseline of the review: what each file held when the last prompt was sent.

Changes can show what the agent changed since the last prompt rather than since the session began. When a turn
starts, the files that differ from the session's baseline are read (`mark`): what they hold is this baseline; every
other file holds what the session's baseline says. A Keep in that view folds into it; a Keep in the session's view
folds into the session's baseline, and the file's content at the prompt is copied here first, so this one stays.

It is journalled at each prompt (a ``review-mark`` event of the ``session`` kind: each file's content, or only its
path when it is what the last mark journalled), and rebuilt from it (`mark_again`). Bounded: past ``MAX_FILES``
changed files, or ``MAX_BYTES`` of them, or a file too big to keep, the view is not offered for that prompt.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from webclient.session.recorder import SESSION, Recorder
from webclient.workspace.changes import ChangeTracker, Fingerprint

MAX_FILES = 200
MAX_BYTES = 16 * 1024 * 1024


def _text(content: bytes | None) -> str | None:
    return content.decode("utf-8", "surrogateescape") if content is not None else None


def _bytes(text: object) -> bytes | None:
    return text.encode("utf-8", "surrogateescape") if isinstance(text, str) else None


class PromptBaseline:
    """What each file held when the last prompt was sent, as the review's second baseline."""

    def __init__(self, changes: ChangeTracker, recorder: Recorder) -> None:
        self.changes = changes
        self.recorder = recorder
        self.held: dict[Path, bytes | None] = {}
        """The files that differed from the session's baseline when the prompt was sent (None: not there), and
        those copied here before a Keep changed the session's baseline."""
        self.marked = False
        """A prompt was sent (else there is nothing to compare with)."""
        self.cut = False
        """Too many or too big files had changed to keep them: the view is not offered until the next prompt."""
        self._journalled: dict[Path, bytes | None] = {}
        """What the marks journalled last of each file: a mark journals only what differs."""

    @property
    def offered(self) -> bool:
        return self.marked and not self.cut

    def before(self, path: Path) -> bytes | None:
        """``path`` as it was when the last prompt was sent (None: not there, or too big to keep)."""
        if path in self.held:
            return self.held[path]
        return self.changes.original(path)

    def too_big(self, path: Path) -> bool:
        return path not in self.held and path in self.changes.baseline and self.changes.original(path) is None

    def mark(self) -> None:
        """A prompt is being sent: the changed files are read now, and journalled."""
        held: dict[Path, bytes | None] = {}
        total, cut = 0, len(self.changes.changed) > MAX_FILES
        for path in sorted(self.changes.changed)[:MAX_FILES]:
            now = self.changes.current(path)
            if isinstance(now, Fingerprint) or total + len(now or b"") > MAX_BYTES:
                cut = True
                continue
            held[path] = now
            total += len(now or b"")
        self.held, self.marked, self.cut = held, True, cut
        files: dict[str, str | None] = {}
        same: list[str] = []
        for path, content in held.items():
            if path in self._journalled and self._journalled[path] == content:
                same.append(str(path))
            else:
                files[str(path)] = _text(content)
        self._journalled = dict(held)
        event = {"event": "review-mark", "files": files, "same": same, "cut": cut}
        self.recorder.record(SESSION, "session", json.dumps(event))

    def mark_again(self, event: dict[str, Any]) -> None:
        """A journalled mark, as `mark` made it."""
        held = {Path(path): _bytes(text) for path, text in dict(event["files"]).items()}
        for path in map(Path, event.get("same", [])):
            if path in self._journalled:
                held[path] = self._journalled[path]
        self.held, self.marked, self.cut = held, True, bool(event.get("cut"))
        self._journalled = dict(held)

    def copy_before_rebase(self, path: Path) -> None:
        """The session's baseline of ``path`` is about to change (a Keep there): what it says now is what the file
        held at the prompt, unless this baseline holds that already."""
        if self.marked and path not in self.held and not self.too_big(path):
            self.held[path] = self.changes.original(path)

    def rebase(self, path: Path, content: bytes | None) -> None:
        """A Keep in this baseline's view: ``path`` is compared with ``content`` from now on."""
        self.held[path] = content
