"""The person's rules, checked where a permission question arrives: a rule's allow or deny answers it at once (and
says so on the card), ask (or no rule) leaves it to the person.

Checked once per question, never per streamed chunk: the adapter tells the session of a live question
(`webclient.session.agent.AgentHost.asked`); a question replayed from the journal is not checked again (the journal
holds its answer). The answer is journalled like a person's, with the rule as ``by``, so a restart shows it.
"""

from __future__ import annotations

import json
import os
import shlex
import time
from typing import Any, Protocol

from webclient.people.rules import Decision, PermissionFacts, Rule, RuleBook
from webclient.session.agent import AgentDriver
from webclient.session.agent_spec import AgentSpec
from webclient.session.answers import Answers
from webclient.session.recorder import ACTION, Recorder
from webclient.viewmodel.content import Diff
from webclient.viewmodel.entries import PermissionPrompt, RuleNote, ToolCall
from webclient.viewmodel.thread import Thread

ALLOW_KINDS = ("allow_once", "allow_always")
REJECT_KINDS = ("reject_once", "reject_always")


def note(rule: Rule, decision: Decision) -> RuleNote:
    return RuleNote(rule.id, decision, rule.what, rule.for_everyone)


def note_of(recorded: object) -> RuleNote | None:
    """The rule a journalled answer names (see `SessionRules.answer`), or None."""
    if not isinstance(recorded, dict):
        return None
    rule_id, decision, what = recorded.get("id"), recorded.get("decision"), recorded.get("what")
    if not isinstance(rule_id, int) or not isinstance(decision, str) or not isinstance(what, str):
        return None
    return RuleNote(rule_id, decision, what, recorded.get("everyone") is True)


def option_for(prompt: PermissionPrompt, decision: Decision) -> str | None:
    """The agent's option that says ``decision`` (allow: allow once, else always; deny: reject once, else always);
    None when it offers none (a deny then answers cancelled)."""
    for kind in ALLOW_KINDS if decision == "allow" else REJECT_KINDS:
        for option in prompt.options:
            if option.kind == kind:
                return option.option_id
    return None


def facts_of(
    call: ToolCall, prompt: PermissionPrompt, workspace: str, agent: str | None, session_id: str
) -> PermissionFacts:
    """What a question is about, as rules see it: the tool's kind, its locations', diffs' and input's paths relative
    to the workspace, an execute tool's command (its raw input's, else the question's own)."""
    paths: list[str] = [location.path for location in call.locations]
    paths += [item.path for item in call.content if isinstance(item, Diff)]
    raw: Any = call.raw_input
    if isinstance(raw, dict):  # a tool's own input naming its file (AAP's write_file, Claude's Edit)
        paths += [raw[key] for key in ("path", "file_path") if isinstance(raw.get(key), str)]
    return PermissionFacts(
        tool_kind=call.kind,
        paths=tuple(dict.fromkeys(relative(path, workspace) for path in paths)),
        command=command_of(call, prompt),
        workspace=workspace,
        agent=agent,
        session_id=session_id,
    )


def relative(path: str, workspace: str) -> str:
    """``path`` relative to ``workspace`` (with ``/``), or as it is when it lies outside."""
    if not os.path.isabs(path):
        return os.path.normpath(path).replace(os.sep, "/")
    inside = os.path.relpath(os.path.normpath(path), workspace) if workspace else path
    return path if inside == ".." or inside.startswith("../") else inside.replace(os.sep, "/")


def command_of(call: ToolCall, prompt: PermissionPrompt) -> str | None:
    raw: Any = call.raw_input
    command = raw.get("command") if isinstance(raw, dict) else None
    if isinstance(command, list) and all(isinstance(part, str) for part in command):
        command = shlex.join(command)  # its argv as the line that runs it: ["sh", "-c", "rm -rf x"] keeps its script
    if isinstance(command, str) and command.strip():
        return command.strip()
    if prompt.command:
        return prompt.command
    subject = call.raw.get("subject")
    if isinstance(subject, dict) and isinstance(subject.get("command"), str):
        return str(subject["command"])
    return None


class RuledSession(Protocol):
    """What of a session its rules read (whose, where) and answer through (`webclient.session.core.Session`)."""

    @property
    def id(self) -> str: ...
    @property
    def owner(self) -> str | None: ...
    @property
    def spec(self) -> AgentSpec: ...
    @property
    def recorder(self) -> Recorder: ...
    @property
    def thread(self) -> Thread: ...
    @property
    def agent(self) -> AgentDriver: ...
    @property
    def answers(self) -> Answers: ...


class SessionRules:
    """One session's check of its owner's rules. ``book`` is set (by the session manager) once the session is live: a
    session being rebuilt checks nothing."""

    def __init__(self, session: RuledSession) -> None:
        self.session = session
        self.book: RuleBook | None = None
        self.agent: str | None = None
        """The catalogue's name of its agent (a rule may hold for one agent)."""

    @property
    def workspace(self) -> str:
        return str(self.session.spec.cwd)

    def facts(self, call: ToolCall, prompt: PermissionPrompt) -> PermissionFacts:
        return facts_of(call, prompt, self.workspace, self.agent, self.session.id)

    def asked(self, call: ToolCall, prompt: PermissionPrompt) -> None:
        """A live question arrived on ``call``'s card: answer it now if a rule allows or denies it."""
        if self.book is None or prompt.state != "pending":
            return
        decided = self.book.decide(self.session.owner, self.facts(call, prompt))
        if decided is None or decided[0] == "ask":
            return
        decision, rule = decided
        self.answer(prompt, decision, rule)

    def answer(self, prompt: PermissionPrompt, decision: Decision, rule: Rule) -> None:
        """Answer ``prompt`` as ``rule`` says, journalled first (with the rule) so that a restart shows it."""
        option_id = option_for(prompt, decision)
        prompt.rule = note(rule, decision)
        ruled = {"id": rule.id, "decision": decision, "what": rule.what, "everyone": rule.for_everyone}
        # A person's answer's record (``by`` as `webclient.session.attribution` writes a person), the rule as its by.
        by = {"id": f"rule:{rule.id}", "name": f"rule {rule.id}", "at": round(time.time(), 3)}
        action = {"action": "permission", "request_id": prompt.request_id, "option_id": option_id, "by": by}
        self.session.recorder.record(ACTION, "user", json.dumps({**action, "rule": ruled}))
        session = self.session
        if option_id is None:  # nothing to reject with: the question is answered cancelled
            session.thread.answer_permission(prompt.request_id, None)
            return
        session.answers.tasks.spawn(self._when_stored(prompt.request_id, option_id), "answer")

    async def _when_stored(self, request_id: str, option_id: str) -> None:
        await self.session.recorder.flush()
        self.session.agent.answer_permission(request_id, option_id)
