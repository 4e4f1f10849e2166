"""A session rebuilt from its journal: every record, in order, shown again by the code that showed it live.

The protocol's messages go to the agent's adapter (`AgentDriver.replay`), which folds them as it did when they
went over the wire; the session's own events (`webclient.session.shown`) and the agent's work in the workspace
(`webclient.session.workspace_events`) are shown again by their modules; the user's answers to questions settle
them again. Nothing is sent, run or recorded on the way. No agent runs afterwards: the session waits for Resume.

A turn still running at the end of the journal (the server stopped or died during it) is then marked
interrupted, its open questions "not answered: the server restarted", and that is recorded, so that every later
rebuild shows the same.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Protocol

from webclient.session import shown, workspace_events
from webclient.session.agent import AgentDriver
from webclient.session.agent_lifecycle import AgentLifecycle
from webclient.session.answers import answered_by, threads
from webclient.session.checkpoints import Checkpoints
from webclient.session.prompt_queue import QueuedPrompt
from webclient.session.recorder import ACTION, FILE, NOTICE, ORIGINAL, PROTOCOL, SESSION, TERMINAL, JournalRow
from webclient.session.review import Review
from webclient.session.rules import note_of
from webclient.session.shown import Shown
from webclient.session.turns import Turns
from webclient.viewmodel.controls import SessionControls
from webclient.viewmodel.subagents import Subagents
from webclient.viewmodel.thread import Thread
from webclient.workspace.changes import ChangeTracker
from webclient.workspace.worktrees import Worktree

log = logging.getLogger(__name__)


class Rebuilt(Protocol):
    """The parts of a session its journal is shown again on (`webclient.session.core.Session` has them)."""

    @property
    def id(self) -> str: ...
    @property
    def thread(self) -> Thread: ...
    @property
    def controls(self) -> SessionControls: ...
    @property
    def subagents(self) -> Subagents: ...
    @property
    def agent(self) -> AgentDriver: ...
    @property
    def lifecycle(self) -> AgentLifecycle: ...
    @property
    def turns(self) -> Turns: ...
    @property
    def shown(self) -> Shown: ...
    @property
    def changes(self) -> ChangeTracker: ...
    @property
    def checkpoints(self) -> Checkpoints: ...
    @property
    def review(self) -> Review: ...

    worktree: Worktree | None


class Rebuild:
    """Shows a session's journal again on its (new, empty) thread and controls, batch after batch, then `done`."""

    def __init__(self, session: Rebuilt) -> None:
        self.session = session
        self.turn_open = False
        self.ended = False
        self.asleep = False
        """Its idle agent was put to sleep, and not woken since (`webclient.session.sleep`)."""
        self.written: dict[Path, bytes | None] = {}
        """Each file's text before the agent first wrote it through the client (journals before ``original``)."""
        self.originals: dict[Path, bytes | None] = {}
        """Each file as it was when the session began, as the Changes view first listed it."""

    def replay(self, journal: Iterable[JournalRow]) -> None:
        session = self.session
        thread, agent = session.thread, session.agent
        for kind, direction, body in journal:
            try:
                if kind == PROTOCOL:
                    agent.replay(direction, body)
                elif kind == SESSION:
                    event = json.loads(body)
                    if event["event"] == "queue":
                        session.turns.queue.items = [QueuedPrompt(*item) for item in shown.queued_again(event)]
                    shown.show_again(thread, event)
                    if event["event"] == "interrupted":
                        session.subagents.interrupted()
                    if event["event"] == "checkpoint":
                        session.checkpoints.again(event)
                    if event["event"] in ("turn", "turn-end", "interrupted"):
                        self.turn_open = event["event"] == "turn"
                    if event["event"] == "turn":
                        session.review.told()
                    elif event["event"] == "review-mark":
                        session.review.mark_again(event)
                    elif event["event"] == "review-fold":
                        session.review.fold_recorded(event)
                elif kind in (FILE, TERMINAL):
                    event = json.loads(body)
                    workspace_events.show_again(thread, kind, event)
                    self._original(self.written, kind, event)
                elif kind == ORIGINAL:
                    self._original(self.originals, kind, json.loads(body))
                elif kind == ACTION:
                    action = json.loads(body)
                    _act_again(session, action)
                    if action["action"] in ("review_keep", "review_undo"):
                        session.review.act_again(action)
                    if action["action"] in ("end", "resume"):
                        self.ended = action["action"] == "end"
                    if action["action"] in ("end", "resume", "sleep"):
                        self.asleep = action["action"] == "sleep"
                elif kind == NOTICE:
                    _store_notice(thread, json.loads(body))
            except (ValueError, KeyError, TypeError):  # a record this code cannot read: the rest still shows
                log.warning("session %s: a %s record of its journal was unreadable", session.id, kind, exc_info=True)

    @staticmethod
    def _original(into: dict[Path, bytes | None], kind: str, event: dict[str, object]) -> None:
        found = workspace_events.originals(kind, event)
        if found is not None:
            into.setdefault(*found)  # the first: what it was before the session touched it

    def done(self) -> None:
        """The whole journal is shown: the session waits for Resume, a turn that ran is marked interrupted."""
        session = self.session
        hello = session.agent.hello
        if hello is not None:
            session.lifecycle.agent_info = hello.info
            session.lifecycle.prompt_capabilities = hello.prompt_capabilities
        # Ended by the user, it says so; else the server stopped while its agent ran. Either way, Resume is offered.
        session.lifecycle.agent_state = "exited" if self.ended else "stopped"
        session.lifecycle.closing = self.ended
        session.lifecycle.sleeping = self.asleep
        if self.turn_open or session.thread.pending_permissions:
            session.shown.interrupted()
            session.subagents.interrupted()
        # Changes are listed again against the originals (the journal's, else the first write's old text).
        if self.written or self.originals:
            session.changes.keep(self.written | self.originals)
        session.review.fold_again()
        # Prompts that waited for their turn wait for the user's "Send now" after Resume; those typed later do not.
        for item in session.turns.queue:
            item.kept = True


def _act_again(session: Rebuilt, action: dict[str, object]) -> None:
    """What the user did that the protocol does not say: an answer is settled on the thread before it is sent."""
    if action.get("action") in ("permission", "question"):
        where = threads(session.thread, session.subagents)
        answered_by(where, str(action["action"]), str(action["request_id"]), action.get("by"))
    if action.get("action") == "permission":
        session.thread.answer_permission(str(action["request_id"]), str(action["option_id"]))
        call = session.thread.tool_call_for_permission(str(action["request_id"]))
        prompt = call.permission if call is not None else None
        if "rule" in action and prompt is not None and prompt.request_id == action["request_id"]:  # a rule's answer
            prompt.rule = note_of(action["rule"])
    elif action.get("action") == "rename":
        session.controls.name(str(action["title"]) or None)
    elif action.get("action") == "mcp_servers":  # the servers it was given (values blank until `McpServers.refill`)
        session.lifecycle.spec.mcp.replayed(action)
    elif action.get("action") == "worktree":  # its path, branch and base commit, as when it was made
        session.worktree = Worktree.from_journal(action)


def _store_notice(thread: Thread, notice: dict[str, object]) -> None:
    if "dropped" in notice:
        thread.add_notice(
            "warning", f"{notice['dropped']} records of this session were not stored", str(notice.get("why", ""))
        )
    elif "cut" in notice:
        thread.add_notice("warning", "What came after this was not stored", str(notice.get("why", "")))
