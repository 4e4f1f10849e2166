"""Decisions that stick: a person's (or an admin's, for everyone) allow / ask / deny for a kind of permission question.

Pure: no store, no session. A question is described by its `PermissionFacts` (the tool's kind, the paths it touches
relative to the workspace, an execute tool's command, where and for whom it runs); `decide` says which rule, if
any, answers it. Rules are consulted once per permission request, never per streamed chunk.

A command pattern judges the line the agent reports (see `webclient.people.command_line`): an allow's wildcard never
crosses into another command, an ask or a deny matches any command of the line.

Precedence: the admins' rules (``owner`` None, for everyone) come first and a person's rule cannot loosen them: an
admin's deny beats a person's allow, an admin's ask cannot become allow, while an admin's allow can be tightened by a
person's ask or deny. Among a person's own rules the most specific wins (this session, then this workspace and agent,
then everywhere), and among equally specific ones the strictest.
"""

from __future__ import annotations

import glob
import posixpath
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from functools import cached_property
from typing import Literal

from webclient.people import command_line
from webclient.people.command_line import CommandLine

Decision = Literal["allow", "ask", "deny"]
DECISIONS: tuple[Decision, ...] = ("allow", "ask", "deny")
_STRICTNESS: dict[str, int] = {"allow": 0, "ask": 1, "deny": 2}


@dataclass(frozen=True)
class Rule:
    """``decision`` for the questions it matches: those of ``tool_kind`` (None: any), every path matching
    ``path_pattern`` (an allow; for ask and deny one path is enough), the command matching ``command_pattern``; only
    in ``session_id``, or in ``workspace`` with ``agent``, when set. ``owner`` None: an admin's rule for everyone."""

    id: int
    owner: str | None
    decision: Decision
    tool_kind: str | None = None
    path_pattern: str | None = None
    command_pattern: str | None = None
    session_id: str | None = None
    workspace: str | None = None
    agent: str | None = None

    @property
    def for_everyone(self) -> bool:
        return self.owner is None

    @property
    def specificity(self) -> int:
        """3: this session only; 2: a workspace or an agent; 1: everywhere."""
        if self.session_id is not None:
            return 3
        return 2 if self.workspace is not None or self.agent is not None else 1

    @property
    def what(self) -> str:
        """What it is about, in a few words: ``edit src/**``, ``execute `git status*```, ``any tool``."""
        words = [self.tool_kind or "any tool"]
        if self.path_pattern:
            words.append(self.path_pattern)
        if self.command_pattern:
            words.append(f"`{self.command_pattern}`")
        return " ".join(words)

    @property
    def where(self) -> str:
        """Where it holds: this session, a workspace (and agent), or everywhere."""
        if self.session_id is not None:
            return "in one session"
        parts = []
        if self.workspace is not None:
            parts.append(f"in {self.workspace}")
        if self.agent is not None:
            parts.append(f"with {self.agent}")
        return " ".join(parts) or "everywhere"

    def matches(self, facts: PermissionFacts) -> bool:
        if self.session_id is not None and self.session_id != facts.session_id:
            return False
        if self.workspace is not None and self.workspace != facts.workspace:
            return False
        if self.agent is not None and self.agent != facts.agent:
            return False
        if self.tool_kind is not None and self.tool_kind != facts.tool_kind:
            return False
        if self.command_pattern is not None:
            line = facts.command_line
            if line is None:
                return False
            # An allow must cover the whole line, never crossing into another command; an ask or a deny any part.
            covered = command_line.allows if self.decision == "allow" else command_line.touches
            if not covered(self.command_pattern, line):
                return False
        if self.path_pattern is not None:
            if not facts.paths:
                return False
            if self.decision != "allow":  # one path is enough to ask or refuse
                return any(fnmatchcase(path, self.path_pattern) for path in facts.paths)
            # An allow must cover every path it lets through, and a relative pattern nothing outside the workspace.
            inside_only = not self.path_pattern.startswith("/")
            return all(
                fnmatchcase(path, self.path_pattern) and not (inside_only and outside(path)) for path in facts.paths
            )
        return True


def outside(path: str) -> bool:
    """Whether a path of `PermissionFacts` lies outside the workspace (absolute, or climbing out of it)."""
    return path.startswith("/") or path == ".." or path.startswith("../")


@dataclass(frozen=True)
class PermissionFacts:
    """What a permission question is about, as rules see it. ``paths`` are relative to the workspace (a path
    outside it stays absolute, so a relative pattern never matches it)."""

    tool_kind: str | None
    paths: tuple[str, ...] = ()
    command: str | None = None
    workspace: str = ""
    agent: str | None = None
    session_id: str = ""

    @cached_property
    def command_line(self) -> CommandLine | None:
        """``command`` read into its simple commands, once per question however many rules look at it."""
        return None if self.command is None else command_line.read(self.command)


def _strictest(rules: Sequence[Rule]) -> Rule:
    return max(rules, key=lambda rule: _STRICTNESS[rule.decision])


def decide(rules: Iterable[Rule], facts: PermissionFacts) -> tuple[Decision, Rule] | None:
    """The decision the rules make on ``facts``, and the rule that made it; None when no rule matches (ask)."""
    admins: list[Rule] = []
    own: list[Rule] = []
    for rule in rules:
        if rule.matches(facts):
            (admins if rule.for_everyone else own).append(rule)
    admin = _strictest(admins) if admins else None
    person = None
    if own:
        most = max(rule.specificity for rule in own)
        person = _strictest([rule for rule in own if rule.specificity == most])
    if admin is None and person is None:
        return None
    if admin is None or (person is not None and _STRICTNESS[person.decision] >= _STRICTNESS[admin.decision]):
        assert person is not None
        return person.decision, person
    return admin.decision, admin


class RuleBook:
    """Every rule the server has, in memory, by owner (None: the admins'): loaded from the store at start and kept up
    to date as rules are added and deleted, so that a question is decided without waiting for the store, reading
    only the admins' rules and the asking person's."""

    def __init__(self, rules: Iterable[Rule] = ()) -> None:
        self._by_owner: dict[str | None, dict[int, Rule]] = {}
        self._owner_of: dict[int, str | None] = {}
        for rule in rules:
            self.add(rule)

    def add(self, rule: Rule) -> None:
        self.remove(rule.id)
        self._by_owner.setdefault(rule.owner, {})[rule.id] = rule
        self._owner_of[rule.id] = rule.owner

    def remove(self, rule_id: int) -> None:
        if rule_id in self._owner_of:
            owned = self._by_owner[self._owner_of.pop(rule_id)]
            del owned[rule_id]

    def all(self) -> list[Rule]:
        return [rule for owned in self._by_owner.values() for rule in owned.values()]

    def get(self, rule_id: int) -> Rule | None:
        if rule_id not in self._owner_of:
            return None
        return self._by_owner[self._owner_of[rule_id]][rule_id]

    def _of(self, person_id: str | None) -> list[Rule]:
        admins = list(self._by_owner.get(None, {}).values())
        return admins if person_id is None else admins + list(self._by_owner.get(person_id, {}).values())

    def for_person(self, person_id: str | None) -> list[Rule]:
        """The admins' rules and ``person_id``'s (None: only the admins'), oldest first."""
        return sorted(self._of(person_id), key=lambda rule: rule.id)

    def decide(self, person_id: str | None, facts: PermissionFacts) -> tuple[Decision, Rule] | None:
        return decide(self._of(person_id), facts)


def rule_from(facts: PermissionFacts, owner: str | None, scope: Literal["session", "workspace"]) -> Rule:
    """The allow rule a card's "Always allow as your rule: in this session" / "in this workspace" makes of a
    question: its tool kind and its path (several: their folder's ``*``), else its command; for its session, or its
    workspace and agent. Its ``id`` is 0 until the store gives it one."""
    path_pattern = command_pattern = None
    if len(facts.paths) == 1:
        path_pattern = glob.escape(facts.paths[0])  # this path: a ``*`` or ``[`` in its name is no wildcard
    elif facts.paths:
        folder = posixpath.commonpath(facts.paths) if all(not p.startswith("/") for p in facts.paths) else ""
        path_pattern = f"{glob.escape(folder)}/*" if folder else "*"
    elif facts.command:
        command_pattern = glob.escape(facts.command)
    here = (
        {"session_id": facts.session_id} if scope == "session" else {"workspace": facts.workspace, "agent": facts.agent}
    )
    return Rule(0, owner, "allow", facts.tool_kind, path_pattern, command_pattern, **here)
