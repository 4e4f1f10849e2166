"""Who did what in a session: every prompt, answer, change and Stop carries the person who did it (``by``).

The person goes into the journal with the action (``{"action": ..., "by": {"id", "name", "at"}}``), so a rebuilt
page names them as the live one did, and the store's audit log gets a row for it. Cards name a person only in a
team: token mode's one person (`webclient.people.person.LOCAL`) is "you", and is never named.
"""

from __future__ import annotations

import json
import time
from typing import Any, Protocol

from webclient.people.person import LOCAL, Person
from webclient.session.recorder import ACTION, Recorder
from webclient.viewmodel.by import By

Actor = Person | None
"""Who did something: a person, or None (the server itself, or a test driving a session directly)."""


def by_json(person: Actor) -> dict[str, Any] | None:
    """What the journal keeps of ``person`` with an action: id, name (as shown then) and the time."""
    if person is None:
        return None
    return {"id": person.id, "name": person.label, "at": round(time.time(), 3)}


def record_action(recorder: Recorder, action: str, by: Actor = None, **arguments: object) -> dict[str, Any] | None:
    """Journal what a person did, with who did it (the store's audit log reads it); returns the "by" it journalled."""
    recorded = by_json(by)
    attributed = {"by": recorded} if recorded is not None else {}
    recorder.record(ACTION, "user", json.dumps({"action": action, **arguments, **attributed}))
    return recorded


_LEGACY_LOCAL = {"id": "local", "name": "you"}
"""What a journal written before migration 0004 keeps of token mode's person (a person of a team named ``local`` has
the name the proxy or provider gave, never "you")."""


def shown_by(recorded: object) -> By | None:
    """The card's "by" from what `by_json` made (live, or read back from the journal); None for token mode's one
    person, and for a record this code cannot read."""
    if not isinstance(recorded, dict) or recorded.get("id") in (None, LOCAL.id):
        return None
    if all(recorded.get(key) == value for key, value in _LEGACY_LOCAL.items()):
        return None
    at = recorded.get("at")
    return By(str(recorded["id"]), str(recorded.get("name") or recorded["id"]), float(at) if at else time.time())


def named(person: Actor) -> str | None:
    """The name a notice gives for ``person`` (None: no one to name, as in token mode)."""
    by = shown_by(by_json(person))
    return by.name if by is not None else None


class Notices(Protocol):
    """Where a line naming who did something goes (`webclient.session.shown.Shown`, which records it too)."""

    def notice(self, level: str, title: str, detail: str = "") -> None: ...


def say(shown: Notices, by: Actor, what: str, subject: Any = "") -> None:
    """A small line on the thread naming who changed something (``subject``: the mode, model or setting, None when
    there is no such one), in a session more than one person uses."""
    if subject is not None and (name := named(by)) is not None:
        shown.notice("info", " ".join(filter(None, (name, what, getattr(subject, "name", subject)))))
