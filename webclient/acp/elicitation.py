"""The agent's questions to the user (``elicitation/create``, stable since July 2026): a form from a restricted JSON
Schema, or a link to follow. Each is a `Question` entry on the thread; the user's answer, or a Stop, settles it once.
https://agentclientprotocol.com/protocol/elicitation
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any, cast

from webclient.acp import wire
from webclient.acp.wire_values import items, mapping, number, string, strings, text
from webclient.viewmodel.events import Change, Region
from webclient.viewmodel.questions import Choice, Question, QuestionField, answer_question
from webclient.viewmodel.thread import Thread

CAPABILITIES: dict[str, Any] = {"elicitation": {"form": {}, "url": {}}}
"""What this client advertises (``{}`` at the top level would advertise nothing)."""

MAX_FIELDS = 50
_TEXT_LIMIT = 2000


def form_fields(schema: Any) -> list[QuestionField]:
    """The fields of a ``requestedSchema`` (a flat object of strings, numbers, integers, booleans and enums); a
    property of another type is shown as a text field."""
    required_names = set(strings(mapping(schema).get("required")))
    fields = []
    for name, prop in list(mapping(mapping(schema).get("properties")).items())[:MAX_FIELDS]:
        if not isinstance(name, str) or not isinstance(prop, dict):
            continue
        fields.append(_field(name, prop, name in required_names))
    return fields


def _field(name: str, prop: dict[str, Any], required: bool) -> QuestionField:
    kind = prop.get("type")
    title = text(prop.get("title"), 200) or name
    description = text(prop.get("description"), _TEXT_LIMIT) or ""
    options = prop.get("enum") or prop.get("oneOf") or mapping(prop.get("items")).get("enum")
    choices: tuple[Choice, ...] = ()
    if isinstance(options, list) and options:
        names = items(prop.get("enumNames"))
        for index, option in enumerate(options):
            if isinstance(option, dict):  # oneOf: {const, title}
                value, label = option.get("const"), option.get("title")
            else:
                value, label = option, names[index] if index < len(names) else None
            if isinstance(value, str):
                choices += (Choice(value, label if isinstance(label, str) else value),)
    default = prop.get("default")
    if choices:
        return QuestionField(name, "choice", title, description, required, default, choices=choices)
    if kind == "boolean":
        return QuestionField(name, "boolean", title, description, required, default is True)
    if kind in ("number", "integer"):
        return QuestionField(
            name, kind, title, description, required, number(default),
            minimum=number(prop.get("minimum")), maximum=number(prop.get("maximum")),
        )  # fmt: skip
    max_length = prop.get("maxLength")
    return QuestionField(
        name, "string", title, description, required, default if isinstance(default, str) else None,
        secret=prop.get("format") == "password" or prop.get("writeOnly") is True or bool(prop.get("sensitive")),
        max_length=max_length if isinstance(max_length, int) else None,
    )  # fmt: skip


class Elicitations:
    """Asks the agent's questions on the thread and answers the agent, each once; ids ``e1``, ``e2``... in order (the
    same when the journal is replayed)."""

    def __init__(self, thread: Thread, changed: Callable[[Change], None]) -> None:
        self.thread = thread
        self.changed = changed
        self.asked = 0
        self._by_elicitation: dict[str, Question] = {}
        self.secrets: set[str] = set()
        """Secret values the user typed, until the answer that carries them is recorded (see `redact`)."""

    def redact(self, line: str) -> str:
        """``line`` (an answer going to the agent) as the journal and the protocol log keep it: the secrets the user
        typed replaced by ``***``. The agent gets them; nothing this server stores or shows does."""
        for secret in list(self.secrets):
            quoted = json.dumps(secret)[1:-1]
            if quoted in line:
                line = line.replace(quoted, "***")
                self.secrets.discard(secret)
        return line

    def ask(self, params: dict[str, Any], *, refuse: bool, asked_by: str | None = None) -> Awaitable[dict[str, Any]]:
        """Show the question and return the answer to come; ``refuse`` answers ``cancel`` at once (a Stop).
        ``asked_by``: the subagent (child session) that asks, if one does."""
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.asked += 1
        request = cast(wire.CreateElicitationRequest, params)
        mode = string(request.get("mode"))
        mode = "form" if mode is None else mode
        url = string(request.get("url"))
        question = Question(
            seq=0,
            turn=self.thread.turn,
            request_id=f"e{self.asked}",
            message=text(request.get("message"), 10_000) or "",
            mode=mode,
            fields=form_fields(request.get("requestedSchema")) if mode == "form" else [],
            url=url if mode == "url" and url is not None and url.startswith(("https://", "http://")) else None,
            elicitation_id=string(request.get("elicitationId")),
            asked_by=asked_by,
        )

        def answered(action: str, values: dict[str, Any] | None) -> None:
            secret = {f.name for f in question.fields if f.secret}
            self.secrets.update(v for k, v in (values or {}).items() if k in secret and isinstance(v, str) and v)
            if not future.done():
                future.set_result({"action": action, **({"content": values} if values is not None else {})})

        def withdrawn(done: asyncio.Future[dict[str, Any]]) -> None:
            if done.cancelled() and question.state == "pending":  # the agent withdrew it ($/cancel_request)
                question.state = "withdrawn"
                self.thread.listener(question.change)
                self.changed(Region.STATUS)

        question.answered = answered
        future.add_done_callback(withdrawn)
        self.thread.add_entry(question)
        if question.elicitation_id is not None:
            self._by_elicitation[question.elicitation_id] = question
        if refuse or (mode == "form" and not question.fields and request.get("requestedSchema") is None):
            answer_question(question, "cancel", None)
        elif mode not in ("form", "url") or (mode == "url" and question.url is None):
            answer_question(question, "decline", None)  # a mode this client does not know, or no link to show
        self.changed(Region.STATUS)
        return future

    def question(self, request_id: str) -> Question | None:
        recent = self.thread.latest(200)
        return next((e for e in recent if isinstance(e, Question) and e.request_id == request_id), None)

    def answer(self, request_id: str, action: str, values: dict[str, Any] | None) -> None:
        question = self.question(request_id)
        if question is not None and answer_question(question, action, values):
            self.thread.listener(question.change)
            self.changed(Region.STATUS)

    def complete(self, params: Any) -> None:
        """``elicitation/complete``: the flow at a link is done (an unknown id is ignored)."""
        notification = cast(wire.CompleteElicitationNotification, mapping(params))
        elicitation_id = string(notification.get("elicitationId"))
        question = self._by_elicitation.get(elicitation_id) if elicitation_id is not None else None
        if question is not None and not question.completed:
            question.completed = True
            self.thread.listener(question.change)

    def settle(self) -> None:
        """Answer every open question ``cancel`` (the turn was stopped, or it is over)."""
        for entry in self.thread.latest(200):
            if isinstance(entry, Question) and entry.state == "pending":
                answer_question(entry, "cancel", None)
                self.thread.listener(entry.change)
