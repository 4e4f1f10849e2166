"""Keep and Undo from the page's socket: the ``review`` action, its inputs bounded, run off the socket's loop.

Who may send it is settled where every action is (`webclient.web.live.session_socket`: a watcher's is dropped);
what it does is `webclient.render.review.act`. A refusal (the file changed meanwhile, a write the sandbox refused)
is said in a notice, and the Changes view is shown again, so the page shows the file as it is now.
"""

from __future__ import annotations

from typing import Any, cast, get_args

from webclient.people.person import Person
from webclient.render.review import MAX_PATH, ReviewRefused, Scope, act
from webclient.session.core import Session
from webclient.session.review import Since, Verb

MAX_HEADER = 120
"""Characters of a hunk's header (``@@ -a,b +c,d @@``) an action may name."""
MAX_DIGEST = 64


def review_action(session: Session, message: dict[str, Any], by: Person) -> None:
    """Keep or undo what the message names (``verb``, ``scope``: hunk, file or all; ``path``, ``hunk``, ``digest``:
    what the page showed; ``since``: ``prompt`` for the last prompt's baseline). Returns at once; a message that is
    not one the page sends is ignored."""
    verb, scope = str(message.get("verb")), str(message.get("scope"))
    path, header, digest = (str(message.get(name, "")) for name in ("path", "hunk", "digest"))
    if verb not in get_args(Verb) or scope not in get_args(Scope):
        return
    if len(path) > MAX_PATH or len(header) > MAX_HEADER or len(digest) > MAX_DIGEST:
        return
    since: Since = "prompt" if message.get("since") == "prompt" else "session"
    run = _run(session, cast(Verb, verb), cast(Scope, scope), path, header, digest, by, since)
    session.review.tasks.spawn(run, "review")


async def _run(
    session: Session, verb: Verb, scope: Scope, path: str, header: str, digest: str, by: Person, since: Since
) -> None:
    try:
        await act(session, verb, scope, path, header, digest, by, since)
    except ReviewRefused as refused:
        session.shown.notice("warning", "Not " + ("kept" if verb == "keep" else "undone"), str(refused))
    finally:
        session.changes.on_change()  # the panel shows the file as it is now, done or not
