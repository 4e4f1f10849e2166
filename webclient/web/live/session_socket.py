"""The session page's web socket: the live view's fragments go out, the page's forms and buttons come in.

htmx's ws extension sends a form or button as JSON of its values; its ``action`` field names one of
:data:`ACTIONS`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable
from typing import Any

from starlette import status
from starlette.exceptions import HTTPException
from starlette.responses import PlainTextResponse
from starlette.websockets import WebSocket, WebSocketDisconnect

from webclient.people.person import Person
from webclient.people.roles import may_drive, role_of
from webclient.render.diffs import diff_layout
from webclient.session.core import Session
from webclient.session.prompt_queue import PromptRefused
from webclient.viewmodel.events import Region
from webclient.web.context import base_context, link_token, person, role_in, session_of, small_int
from webclient.web.context import renderer as web_renderer
from webclient.web.live.live_view import LiveView
from webclient.web.live.page_holds import page_stamps
from webclient.web.live.presence import Viewer, page_context, presence
from webclient.web.live.review_actions import review_action
from webclient.web.live.session_docs import session_docs

log = logging.getLogger(__name__)

Message = dict[str, Any]
Action = Callable[[Session, LiveView, Message, Person], object]
"""What a message of the page does, and who sent it (what it returns is not used)."""


async def session_socket(websocket: WebSocket) -> None:
    try:  # who may open it at all is settled before routing (webclient.web.access.guard); whose session it is, here
        session = await session_of(websocket)
    except HTTPException as refused:  # no such session, or not theirs: refused as its page is (404)
        await refuse_handshake(websocket, refused.status_code, refused.detail)
        return
    await websocket.accept()
    by, link = person(websocket), link_token(websocket)
    embedded = "embedded" in websocket.query_params  # an embedded page's (web.embed): pushed without the chrome too
    live = LiveView(
        session,
        web_renderer(websocket),
        session_docs(websocket).of(session),
        websocket.send_text,
        {**base_context(websocket), **page_context(websocket, session), "embedded": embedded},
    )
    holds = page_stamps(websocket).claim(websocket.query_params.get("page"), session)
    if holds is not None:  # the page rendered just before: only what changed since goes out
        live.adopt(holds)
    shut_out = Viewer(by, link, role_in(websocket, session), lambda code, reason: websocket.close(code, reason))
    leave = presence(websocket).join(session, shut_out)
    sender = asyncio.create_task(live.run(), name=f"ws-sender-{session.id}")
    sender.add_done_callback(lambda task: _sender_done(task, websocket))
    try:
        while True:
            text = await websocket.receive_text()
            _handle_client_message(session, live, text, by, link)
    except WebSocketDisconnect:
        pass
    finally:
        leave()
        sender.cancel()
        # Not gather: a gather cancelled meanwhile raises the sender's CancelledError, not the one that cancelled this
        # handler, and the server's cancel scope (anyio's) would not know it for its own.
        await asyncio.wait([sender])


def _sender_done(task: asyncio.Task[None], websocket: WebSocket) -> None:
    """A sender that failed leaves the page stale: log it and close, so the page reconnects and resyncs."""
    if task.cancelled() or task.exception() is None:
        return
    log.error("web socket sender failed", exc_info=task.exception())
    asyncio.ensure_future(websocket.close(code=status.WS_1011_INTERNAL_ERROR))


def _handle_client_message(session: Session, live: LiveView, text: str, by: Person, link: str | None) -> None:
    """Run the action a message of the page names, as ``by`` (``link``: the share link's token the page came with).

    Whether ``by`` may see and drive is asked for each message, so a share revoked or turned to watch counts at once;
    a watcher's message that would change the session is dropped (their page has no such buttons), and every
    message of someone who may not see it any more.

    Every action returns at once (what waits for the agent runs in the session's background tasks): this
    runs inside the socket's receive loop, which must stay free to see the page leave and the server stop.
    """
    try:
        message = json.loads(text)
    except json.JSONDecodeError:
        log.warning("session %s: unreadable message from the page", session.id)
        return
    if not isinstance(message, dict):
        return
    action = ACTIONS.get(str(message.get("action")))
    if action is None:
        log.warning("session %s: unknown action %r from the page", session.id, message.get("action"))
        return
    name = str(message.get("action"))
    role = role_of(by, session.owner, session.shares, link)
    if role is None:  # revoked: the socket is being closed (web.presence); not even an earlier page of it is sent
        log.warning("session %s: %r from %s, who may not see it any more: ignored", session.id, name, by.id)
        return
    if name not in VIEWING and not may_drive(role):
        log.warning("session %s: %r from %s, who may only watch: ignored", session.id, name, by.id)
        return
    action(session, live, message, by)


MAX_REASON = 500
"""Characters of the reason a person may give with a denial."""


def _text(message: Message, field: str) -> str:
    return str(message.get(field, ""))


def _strings(value: Any) -> list[str]:
    """A form field htmx sent once (a string), several times (a list) or not at all."""
    if isinstance(value, str):
        return [value]
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _prompt(session: Session, live: LiveView, message: Message, by: Person) -> None:
    uploads, mentions = _strings(message.get("attachment")), _strings(message.get("mention"))
    with contextlib.suppress(PromptRefused):  # too long, or the queue is full: the page shows the notice
        session.submit_prompt(_text(message, "prompt"), _text(message, "nonce"), uploads, mentions, by)


def _follow(session: Session, live: LiveView, message: Message, by: Person) -> None:
    live.follow = message.get("follow") == "on"
    if live.follow:
        live.mark(Region.LOCATION)


def _diff_mode(session: Session, live: LiveView, message: Message, by: Person) -> None:
    live.context["diff_mode"] = diff_layout(message.get("mode"))
    live.resync()


def _earlier(session: Session, live: LiveView, message: Message, by: Person) -> None:
    before = small_int(_text(message, "before"))
    if before:
        live.earlier(before)


def _later(session: Session, live: LiveView, message: Message, by: Person) -> None:
    after = small_int(_text(message, "after"))
    if after:
        live.later(after)


def _message_earlier(session: Session, live: LiveView, message: Message, by: Person) -> None:
    seq, before = small_int(_text(message, "seq")), small_int(_text(message, "before"))
    if seq and before:
        live.message_earlier(seq, before)


def _question(session: Session, live: LiveView, message: Message, by: Person) -> None:
    fields = {key[6:]: str(value) for key, value in message.items() if key.startswith("field:")}
    session.answers.question(_text(message, "request_id"), _text(message, "answer"), fields, by)


def _permission(session: Session, live: LiveView, message: Message, by: Person) -> None:
    reason = _text(message, "reason")[:MAX_REASON].strip()
    session.answers.permission(_text(message, "request_id"), _text(message, "option_id"), reason, by)


def _sign_in_with_key(session: Session, live: LiveView, message: Message, by: Person) -> None:
    """A key method's variables (``var:NAME`` fields), kept as the person's secrets: only the owner's are kept."""
    values = {key[4:]: value for key, value in message.items() if key.startswith("var:") and isinstance(value, str)}
    by_owner = session.owner is None or session.owner == by.id
    session.lifecycle.authenticate_with_key(_text(message, "method_id"), values, by_owner)


ACTIONS: dict[str, Action] = {
    "prompt": _prompt,
    "queue_edit": lambda session, live, message, by: session.turns.queue.edit(
        _text(message, "item_id"), _text(message, "text")
    ),
    "queue_remove": lambda session, live, message, by: session.turns.queue.remove(_text(message, "item_id")),
    "queue_send": lambda session, live, message, by: session.turns.send_queued(_text(message, "item_id")),
    "set_mode": lambda session, live, message, by: session.set_mode(_text(message, "mode_id"), by),
    "set_setting": lambda session, live, message, by: session.set_setting(
        _text(message, "setting_id"), _text(message, "value"), by
    ),
    "set_model": lambda session, live, message, by: session.set_model(_text(message, "model_id"), by),
    "permission": _permission,
    "cancel": lambda session, live, message, by: session.cancel(by),
    "cancel_entity": lambda session, live, message, by: session.cancel_entity(
        _text(message, "kind"), _text(message, "id"), by
    ),
    "cancel_subagent": lambda session, live, message, by: session.cancel_subagent(_text(message, "session_id"), by),
    "authenticate": lambda session, live, message, by: session.lifecycle.authenticate(_text(message, "method_id")),
    "sign_in_with_key": _sign_in_with_key,
    "cancel_sign_in": lambda session, live, message, by: session.lifecycle.cancel_auth(),
    "close_sign_in_terminal": lambda session, live, message, by: session.lifecycle.dismiss_terminal(),
    "retry": lambda session, live, message, by: session.lifecycle.retry(),
    "resume": lambda session, live, message, by: session.resume(by),
    "rename": lambda session, live, message, by: session.rename(_text(message, "title"), by),
    "sign_out": lambda session, live, message, by: session.sign_out(by),
    "question": _question,
    "follow": _follow,
    "diff_mode": _diff_mode,
    "earlier": _earlier,
    "later": _later,
    "message_earlier": _message_earlier,
    "restore_files": lambda session, live, message, by: session.checkpoints.ask_restore(
        small_int(_text(message, "seq")), by
    ),
    "edit_resend": lambda session, live, message, by: session.checkpoints.ask_resend(
        small_int(_text(message, "seq")),
        _text(message, "text"),
        _text(message, "nonce"),
        message.get("summary") == "on",
        by,
    ),
    "review": review_action,
}
"""The page's actions by name: what each form or button of the page sends as its ``action`` field."""

VIEWING = frozenset({"follow", "diff_mode", "earlier", "later", "message_earlier"})
"""The actions that change only what this page shows: a watcher may send them; every other one needs a driver."""


async def refuse_handshake(websocket: WebSocket, status_code: int = 404, text: str = "No such session") -> None:
    """Refuse a socket before it opens with the HTTP answer a page of the same URL gets (404: another person's
    session does not exist for them), where the server can send one (ASGI's ``websocket.http.response``, which
    uvicorn has); elsewhere closed unopened, which a server answers 403. A browser's page sees neither: it is told
    nothing more than that the socket failed."""
    if "websocket.http.response" in websocket.scope.get("extensions", {}):
        await websocket.send_denial_response(PlainTextResponse(text, status_code=status_code))
    else:
        await websocket.close(code=status.WS_1008_POLICY_VIOLATION)
