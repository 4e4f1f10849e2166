"""Keep and Undo from the page's socket: the ``review`` action, its inputs bounded, run off the socket's loop.

Who may send it is settled where every action is (`webclient.web.live.session_socket`: a watcher's is dropped);
what it does is `webclient.render.review.act`. A refusal (the file changed meanwhile, a write the sandbox refused)
is said to the person who clicked, on their page alone (`LiveView.reply`), in the Changes panel beside the file
(`templates/_review_reply.html`): not a notice of the session's thread, which everyone sees and the journal keeps.
Done or not, the Changes view is shown again, so every page shows the file as it is now; a Keep or Undo that is done
clears the person's last refusal there.
"""

from __future__ import annotations

from typing import Any, cast, get_args

from webclient.people.person import Person
from webclient.render.dom import review_reply_id
from webclient.render.review import MAX_PATH, ReviewRefused, Scope, act
from webclient.session.core import Session
from webclient.session.review import Since, Verb
from webclient.web.live.live_view import LiveView

MAX_HEADER = 120
"""Characters of a hunk's header (``@@ -a,b +c,d @@``) an action may name."""
MAX_DIGEST = 64


def review_action(session: Session, live: LiveView, message: dict[str, Any], by: Person) -> None:
    """Keep or undo what the message names (``verb``, ``scope``: hunk, file or all; ``path``, ``hunk``, ``digest``:
    what the page showed; ``since``: ``prompt`` for the last prompt's baseline) for the page of ``live``, which alone
    is told what it came to. Returns at once; a message that is not one the page sends is ignored."""
    verb, scope = str(message.get("verb")), str(message.get("scope"))
    path, header, digest = (str(message.get(name, "")) for name in ("path", "hunk", "digest"))
    if verb not in get_args(Verb) or scope not in get_args(Scope):
        return
    if len(path) > MAX_PATH or len(header) > MAX_HEADER or len(digest) > MAX_DIGEST:
        return
    since: Since = "prompt" if message.get("since") == "prompt" else "session"
    run = _run(session, live, cast(Verb, verb), cast(Scope, scope), path, header, digest, by, since)
    session.review.tasks.spawn(run, "review")


async def _run(
    session: Session,
    live: LiveView,
    verb: Verb,
    scope: Scope,
    path: str,
    header: str,
    digest: str,
    by: Person,
    since: Since,
) -> None:
    refusal: str | None = None
    try:
        await act(session, verb, scope, path, header, digest, by, since)
    except ReviewRefused as refused:
        refusal = str(refused)
    finally:
        session.changes.on_change()  # the panel shows the file as it is now, done or not
    reply_id = review_reply_id("" if scope == "all" else path, since)
    title = "Not " + ("kept" if verb == "keep" else "undone")
    live.reply(live.renderer.page("_review_reply.html", reply_id=reply_id, title=title, refusal=refusal, oob=True))
