"""Subagents: child sessions an agent runs for its session, each with a thread of its own, shown nested.

A child is announced on its parent (the session, or another child: children nest). Its messages, tool calls and
plans fold into its own `ChildThread` by the same rules as the session's thread; every change there is reported as
a change of the place the child is shown: the tool call card that launched it, or its own `Subagent` entry in the
parent's thread. Inter-session messages (a parent's prompt to a child, the child's reply) are `SessionMessage`
entries of the thread of the session whose transcript holds them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

from webclient.viewmodel.content import ContentBlock, TextBlock
from webclient.viewmodel.entries import Entry, ToolCall
from webclient.viewmodel.events import Change
from webclient.viewmodel.thread import Listener, Thread

E = TypeVar("E", bound=Entry)

RUNNING_STATES = frozenset({"running", "requires_action"})
"""A child in one of these states is working (or waits for the user): a Stop can reach it."""

MAX_CHILDREN = 500
"""Children kept per session: an agent that announces more is not followed further (their traffic is dropped)."""

MAX_MESSAGES = 5000
"""Inter-session messages whose id is remembered (a chunk of an older one starts a message of its own)."""


class ChildThread(Thread):
    """A child's thread: a `Thread` whose entries' element ids carry the child's prefix (``sub3-entry-1``), so that
    they never clash with the session's (``entry-1``) when both are on the page."""

    def __init__(self, scope: str, report: Listener) -> None:
        super().__init__(listener=report, max_entries=1000)
        self.scope = scope

    def _append(self, entry: E) -> E:
        entry.scope = self.scope
        return super()._append(entry)


@dataclass(eq=False)
class Subagent(Entry):
    """A child session as its parent announced it (``subagent_update``), with its own thread.

    ``None`` in a field means unset (never said, or cleared with ``null``)."""

    ROLE: ClassVar[str] = "subagent"
    session_id: str = ""
    title: str | None = None
    description: str | None = None
    state: str | None = None
    """``running``, ``requires_action``, ``idle``, ``unknown`` or another the agent named."""
    stop_reason: str | None = None
    """Why an ``idle`` child stopped (``end_turn``, ``cancelled``, ``error``...)."""
    error: str | None = None
    can_cancel: bool = False
    """The agent allows a Stop of this child (``capabilities.cancel``)."""
    cwd: str | None = None
    additional_directories: list[str] = field(default_factory=list)
    stopping: bool = False
    """The user stopped it and it has not said that it stopped yet."""
    launched_by: str | None = None
    """The id of the tool call (in the parent's thread) that launched it, once known: it is shown in that card."""
    card: ToolCall | None = field(default=None, init=False, repr=False)
    """The card of that tool call (an agent may reuse its id for a later card: this one is it)."""
    thread: ChildThread = field(init=False, repr=False)
    parent: Thread = field(init=False, repr=False)

    @property
    def running(self) -> bool:
        return self.state in RUNNING_STATES

    @property
    def stoppable(self) -> bool:
        """A Stop is offered: it works, the agent allows it, and it was not asked already."""
        return self.running and self.can_cancel and not self.stopping

    @property
    def shown_title(self) -> str:
        if self.title:
            return self.title
        return (self.card.title if self.card is not None else None) or "Subagent"

    @property
    def home(self) -> Change:
        """What changes on the page when this child changes: the card it is nested in, else its own entry."""
        return self.card.change if self.card is not None else self.change


@dataclass(eq=False)
class SessionMessage(Entry):
    """A message between two sessions (a parent's prompt to a child, a child's reply), in one session's transcript:
    sent by it (``sender == own``) or received."""

    ROLE: ClassVar[str] = "session-message"
    message_id: str = ""
    own: str | None = None
    """The session whose transcript this is."""
    sender: str | None = None
    recipient: str | None = None
    parts: list[str] = field(default_factory=list)
    attachments: list[ContentBlock] = field(default_factory=list)

    @property
    def sent(self) -> bool:
        return self.own is not None and self.sender == self.own

    @property
    def counterpart(self) -> str | None:
        return self.recipient if self.sent else self.sender

    @property
    def text(self) -> str:
        if len(self.parts) > 1:
            self.parts[:] = ["".join(self.parts)]
        return self.parts[0] if self.parts else ""

    def replace(self, blocks: list[ContentBlock]) -> None:
        self.parts, self.attachments = [], []
        for block in blocks:
            self.add(block)

    def add(self, block: ContentBlock) -> None:
        if isinstance(block, TextBlock):
            self.parts.append(block.text)
        else:
            self.attachments.append(block)


class Subagents:
    """Every child of one session, at any depth, by session id; and which tool call cards show which."""

    def __init__(self, thread: Thread) -> None:
        self.main = thread
        self._children: dict[str, Subagent] = {}
        self._nested: dict[ToolCall, list[Subagent]] = {}
        self._messages: dict[tuple[int, str], SessionMessage] = {}
        """Inter-session messages by (the thread holding them, message id)."""

    def __len__(self) -> int:
        return len(self._children)

    def child(self, session_id: Any) -> Subagent | None:
        return self._children.get(session_id) if isinstance(session_id, str) else None

    def thread_of(self, session_id: Any) -> Thread | None:
        """The thread of a child, or None for a session that is not an announced child."""
        child = self.child(session_id)
        return child.thread if child is not None else None

    def title_of(self, session_id: str | None) -> str | None:
        """A child's title as shown; None for any other session (the parent)."""
        child = self.child(session_id)
        return child.shown_title if child is not None else None

    def heading(self, message: SessionMessage) -> str:
        """How a message between sessions is introduced: sent to whom, a reply from a child, or from whom."""
        other = self.child(message.counterpart)
        title = other.shown_title if other is not None else "the parent session"
        if message.sent:
            return f"\u2192 sent to {title}"
        own = self.thread_of(message.own) or self.main
        return f"\u2190 reply from {title}" if other is not None and other.parent is own else f"\u2190 from {title}"

    def announce(self, parent: Thread, session_id: str) -> Subagent | None:
        """The child ``session_id`` (announced on the session whose thread is ``parent``), made on first sight: an
        entry of ``parent`` where it was announced. None past `MAX_CHILDREN`."""
        child = self._children.get(session_id)
        if child is not None:
            return child
        if len(self._children) >= MAX_CHILDREN:
            return None
        child = Subagent(seq=0, turn=parent.turn, session_id=session_id)
        child.parent = parent
        child.thread = ChildThread(f"sub{len(self._children) + 1}-", lambda change: _report(child))
        self._children[session_id] = child
        parent.add_entry(child)
        return child

    def patch(self, child: Subagent, fields: dict[str, Any]) -> None:
        """Apply the fields the agent sent (see `Subagent`); an omitted field is unchanged, None clears it."""
        for name, value in fields.items():
            setattr(child, name, value)
        if "state" in fields and not child.running:
            child.stopping = False  # it stopped (or never ran): a Stop is no longer under way
        _report(child)

    def launched(self, child: Subagent, tool_call_id: str) -> None:
        """``tool_call_id`` launched ``child``: when its parent's thread has that card, the child is shown in it."""
        call = child.parent.tool_call(tool_call_id)
        if child.launched_by is not None or call is None:
            return
        child.launched_by, child.card = tool_call_id, call
        self._nested.setdefault(call, []).append(child)
        child.parent.listener(child.change)  # its own entry now shows nothing
        child.parent.listener(call.change)

    def nested_in(self, call: ToolCall) -> list[Subagent]:
        """The children the card ``call`` launched, in order."""
        return self._nested.get(call, [])

    def stopping(self, child: Subagent) -> None:
        child.stopping = True
        _report(child)

    def message(self, thread: Thread, own: str | None, message_id: str) -> SessionMessage:
        """The inter-session message ``message_id`` of ``thread``'s transcript, made on first sight."""
        key = (id(thread), message_id)
        message = self._messages.get(key)
        if message is None:
            message = SessionMessage(seq=0, turn=thread.turn, message_id=message_id, own=own)
            self._messages[key] = message
            if len(self._messages) > MAX_MESSAGES:
                del self._messages[next(iter(self._messages))]
            thread.add_entry(message)
        return message

    @property
    def waiting(self) -> bool:
        """Whether a child's permission question waits for the user."""
        return any(child.thread.pending_permissions for child in self._children.values())

    def interrupted(self) -> None:
        """The server stopped while the session's turn ran (it was rebuilt from its journal): the children's open
        questions can no longer be answered, and what they were doing is not known."""
        for child in self._children.values():
            child.thread.settle_permissions(interrupted=True)
            if child.running or child.stopping:
                child.state, child.stopping = "unknown", False
                _report(child)

    def all(self) -> list[Subagent]:
        return list(self._children.values())


def _report(child: Subagent) -> None:
    """A change inside ``child`` is a change of where it is shown (which, for a nested child, reports further up)."""
    child.parent.listener(child.home)
