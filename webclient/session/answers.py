"""The user's answers to the agent's questions: a permission (with a reason when the option asks for one), a form
or a link. Each is journalled first and sent once the journal holds it, so a restart shows it given; the agent's
adapter answers the agent once, however many clicks came."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from webclient.session.agent import AgentDriver
from webclient.session.attribution import Actor, record_action, shown_by
from webclient.session.recorder import NO_RECORDER, Recorder
from webclient.session.tasks import BackgroundTasks
from webclient.viewmodel.events import Change
from webclient.viewmodel.questions import Question, form_values
from webclient.viewmodel.subagents import Subagents
from webclient.viewmodel.thread import Thread

RECENT_ENTRIES = 200
"""How far back an answer looks for its question (a question far back in the thread is long settled)."""


class Answers:
    def __init__(
        self,
        agent: AgentDriver,
        thread: Thread,
        recorder: Recorder,
        tasks: BackgroundTasks,
        changed: Callable[[Change], None],
        subagents: Subagents | None = None,
    ) -> None:
        self.agent = agent
        self.thread = thread
        self.subagents = subagents
        self.recorder = recorder
        self.tasks = tasks
        self.changed = changed

    def permission(self, request_id: str, option_id: str, reason: str = "", by: Actor = None) -> None:
        """Answer the agent's permission question (``reason``: why, when the option asks): journalled with who gave
        it, shown given, and sent once the journal holds it."""
        recorded = record_action(self.recorder, "permission", by, request_id=request_id, option_id=option_id)
        answered_by(threads(self.thread, self.subagents), "permission", request_id, recorded)  # as the replay will
        if self.recorder is NO_RECORDER:
            self.agent.answer_permission(request_id, option_id, reason)
        else:
            self.tasks.spawn(self._permission_when_stored(request_id, option_id, reason), "answer")

    async def _permission_when_stored(self, request_id: str, option_id: str, reason: str) -> None:
        await self.recorder.flush()
        self.agent.answer_permission(request_id, option_id, reason)

    def question(self, request_id: str, action: str, fields: dict[str, str], by: Actor = None) -> None:
        """``accept`` with the form's ``fields`` as the page sent them, ``decline`` or ``cancel``. A form that cannot
        be taken says why and stays open."""
        recent = self.thread.latest(RECENT_ENTRIES)
        question = next((e for e in recent if isinstance(e, Question) and e.request_id == request_id), None)
        if question is None or question.state != "pending":
            return
        values = None
        if action == "accept" and question.mode == "form":
            values, question.problem = form_values(question, fields)
            if values is None:
                self.changed(question.change)
                return
        # The form's values go on record with the protocol's line, not here.
        recorded = record_action(self.recorder, "question", by, request_id=request_id, answer=action)
        answered_by([self.thread], "question", request_id, recorded)
        self.tasks.spawn(self._question_when_stored(request_id, action, values), "answer")

    async def _question_when_stored(self, request_id: str, action: str, values: dict[str, Any] | None) -> None:
        await self.recorder.flush()
        self.agent.answer_question(request_id, action, values)


def threads(main: Thread, subagents: Subagents | None) -> list[Thread]:
    """The session's thread and its subagents': a permission question may be on a card in any of them."""
    return [main, *(child.thread for child in subagents.all())] if subagents is not None else [main]


def answered_by(threads: Iterable[Thread], kind: str, request_id: str, recorded: object) -> None:
    """Name who answered the open ``permission`` or ``question`` ``request_id`` on its card, in the first of
    ``threads`` that has it open (the first answer wins, as on the agent's side); called live as the answer is given,
    and again from the journal's action."""
    by = shown_by(recorded)
    if by is None:
        return
    if kind == "permission":
        pending = (p for thread in threads for p in thread.pending_permissions if p.request_id == request_id)
        prompt = next(pending, None)
        if prompt is not None and prompt.by is None:
            prompt.by = by
        return
    thread = next(iter(threads))
    question = next(
        (e for e in thread.latest(RECENT_ENTRIES) if isinstance(e, Question) and e.request_id == request_id), None
    )
    if question is not None and question.state == "pending" and question.by is None:
        question.by = by
