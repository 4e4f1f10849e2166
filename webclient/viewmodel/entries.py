"""The entries of a conversation thread (in the spirit of Zed's ``AgentThreadEntry``).

Entries are plain mutable dataclasses owned by a :class:`~webclient.viewmodel.thread.Thread`; only the
thread changes them, so it can tell its listener exactly what changed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, NamedTuple

from webclient.viewmodel.by import By
from webclient.viewmodel.content import (
    ContentBlock,
    Location,
    PermissionOption,
    PlanItem,
    ToolContent,
)
from webclient.viewmodel.events import EntryChanged

MessageRole = Literal["user-message", "agent-message", "thought"]

# Statuses after which a tool call will not change by itself any more.
FINISHED_STATUSES = frozenset({"completed", "failed", "cancelled"})


@dataclass(eq=False)
class Entry:
    """Base of every thread entry; ``seq`` is unique in its thread and names the entry in the page."""

    ROLE: ClassVar[str] = "entry"
    seq: int
    turn: int
    change: EntryChanged = field(init=False, repr=False)
    """What the thread tells its listener when this entry changes: set once it is numbered, so a streamed chunk
    makes no new event."""
    scope: str = field(default="", init=False, repr=False)
    """The prefix of the entry's element ids: empty in the session's thread, a subagent's in its thread."""

    @property
    def role(self) -> str:
        """The entry's ``data-role`` in the page."""
        return self.ROLE


@dataclass(eq=False)
class MessageEntry(Entry):
    """A user message, an agent message or a thought: streamed text plus any non-text blocks."""

    kind: MessageRole = "agent-message"
    message_id: str | None = None
    parts: list[str] = field(default_factory=list)
    attachments: list[ContentBlock] = field(default_factory=list)
    streaming: bool = True
    local: bool = False
    """True for a prompt this client sent (as opposed to one an agent replayed)."""
    echoed: int = 0
    """How many characters of a local prompt the agent has echoed back (they are not shown twice)."""
    by: By | None = None
    """Who sent this prompt, in a session more than one person uses."""
    revision: int = 0
    """Counts the changes that were not appends at its end (v2 upserts replacing the content, a chunk for it after
    it closed): a rendering that followed its growth starts over."""

    @property
    def role(self) -> str:
        return self.kind

    _measured: tuple[list[str], int, int, str | None] | None = field(default=None, init=False, repr=False)
    """(``parts``, how many of its chunks are counted, their length, the last of them) as `length` last counted."""

    @property
    def text(self) -> str:
        """The text so far; chunks are joined lazily and the join is kept. A frame of a streaming message needs only
        its end (`text_since`): joining the whole of it every frame made a long message quadratic."""
        if len(self.parts) > 1:
            self.parts[:] = ["".join(self.parts)]
        return self.parts[0] if self.parts else ""

    @property
    def length(self) -> int:
        """``len(text)``, counting only the chunks that came since the last count."""
        parts = self.parts
        known, counted, length, last = self._measured or (parts, 0, 0, None)
        if known is not parts or counted > len(parts) or (counted and parts[counted - 1] is not last):
            counted, length = 0, 0  # the content replaced, or its chunks joined: count again
        length += sum(map(len, parts[counted:]))
        self._measured = (parts, len(parts), length, parts[-1] if parts else None)
        return length

    def text_since(self, start: int) -> str:
        """``text[start:]``, joining only the chunks it spans."""
        taken: list[str] = []
        left = self.length - start
        for part in reversed(self.parts):
            if left <= 0:
                break
            taken.append(part if len(part) <= left else part[len(part) - left :])
            left -= len(part)
        return "".join(reversed(taken))


@dataclass(frozen=True)
class RuleNote:
    """The rule that answered a question instead of the person: its id (for the link), decision and what it is
    about (``edit src/**``); ``everyone``: an admin's rule, not the person's own."""

    rule_id: int
    decision: str
    what: str
    everyone: bool = False


@dataclass(eq=False)
class PermissionPrompt:
    """A question the agent asked about a tool call; answered at most once."""

    request_id: str
    options: list[PermissionOption]
    state: Literal["pending", "selected", "cancelled", "interrupted", "withdrawn"] = "pending"
    """``interrupted``: the server stopped while it was open, so it was never answered; ``withdrawn``: the agent
    took it back."""
    chosen: str | None = None
    rule: RuleNote | None = None
    """Set when a rule answered it (`webclient.session.rules`), not a person."""
    title: str | None = None
    """The v2 draft's question, its ``description`` (Markdown) and a ``command`` subject's command and cwd: agent
    text, shown escaped."""
    description: str | None = None
    command: str | None = None
    cwd: str | None = None
    by: By | None = None
    """Who answered it, in a session more than one person uses."""

    @property
    def chosen_option(self) -> PermissionOption | None:
        return next((o for o in self.options if o.option_id == self.chosen), None)


@dataclass(eq=False)
class ToolCall(Entry):
    """A tool call; ``None`` in a field means unset (never reported, or cleared with ``null``)."""

    ROLE: ClassVar[str] = "tool-call"
    tool_call_id: str = ""
    name: str | None = None
    """The tool's programmatic name (v2 draft), shown beside the title."""
    title: str | None = None
    kind: str | None = None
    status: str | None = None
    content: list[ToolContent] = field(default_factory=list)
    locations: list[Location] = field(default_factory=list)
    raw_input: Any = None
    raw_output: Any = None
    raw: dict[str, Any] = field(default_factory=dict)
    """The tool call as the agent described it, every field merged in, understood or not."""
    permission: PermissionPrompt | None = None
    stop_asked_in: str | None = None
    """The status it had when the user asked the agent to stop it (``tool_call/cancel``): "Stopping…" is shown
    until the status changes."""

    @property
    def effective_status(self) -> str:
        """The status to show: the client default is ``pending``."""
        return self.status or "pending"

    @property
    def can_cancel(self) -> bool:
        """Whether the agent advertises ``capabilities.cancel`` on it now (an object; anything else is no control),
        and it is not final: the only time ``tool_call/cancel`` may be sent."""
        capabilities = self.raw.get("capabilities")
        return isinstance(capabilities, dict) and isinstance(capabilities.get("cancel"), dict) and not self.finished

    @property
    def stopping(self) -> bool:
        """The user asked to stop it and its status has not changed since (the agent's answer means "accepted")."""
        return self.stop_asked_in is not None and self.stop_asked_in == self.effective_status and not self.finished

    @property
    def finished(self) -> bool:
        return self.effective_status in FINISHED_STATUSES


@dataclass(eq=False)
class Plan(Entry):
    """The agent's plan; every update replaces all items."""

    ROLE: ClassVar[str] = "plan"
    items: list[PlanItem] = field(default_factory=list)
    stopped: bool = False
    """The turn that worked on it was stopped: it is history, not a live plan."""
    plan_id: str | None = None
    """The v2 draft's id: a session may have several plans, each updated (and removed) by its id."""
    form: str = "items"
    """``items``, ``markdown`` (``markdown`` holds it), ``file`` (``uri`` names it), or another kind the agent sent
    (shown as its JSON, ``raw``)."""
    markdown: str = ""
    uri: str = ""
    raw: dict[str, Any] = field(default_factory=dict)
    removed: bool = False
    """The agent removed it (``plan_removed``): it stays in the thread as history, marked."""

    @property
    def done(self) -> int:
        return sum(1 for item in self.items if item.status == "completed")

    @property
    def finished(self) -> bool:
        return self.removed or all(item.status in ("completed", "cancelled") for item in self.items)

    @property
    def current(self) -> PlanItem | None:
        """The entry being worked on: the first in progress."""
        return next((item for item in self.items if item.status == "in_progress"), None)


@dataclass(eq=False)
class FileChange(Entry):
    """A file the agent wrote through the client: ``old_text`` None means it created it."""

    ROLE: ClassVar[str] = "file-change"
    display_path: str = ""
    old_text: str | None = None
    new_text: str = ""


@dataclass(eq=False)
class Notice(Entry):
    """Something the client says about the session: a turn's end, an error, a crash."""

    ROLE: ClassVar[str] = "notice"
    level: Literal["info", "warning", "error"] = "info"
    title: str = ""
    detail: str = ""
    by_agent: bool = False
    """The agent's own advisory (ACP ``notice``): its title and ``detail`` are agent text, shown as plain text."""
    severity: str = ""
    """The severity the agent gave when it is not one this client knows (shown as info, named)."""


@dataclass(eq=False)
class Compaction(Entry):
    """The agent compacting its context (ACP ``compaction_update``/``compaction_summary_chunk``), updated in place."""

    ROLE: ClassVar[str] = "compaction"
    compaction_id: str = ""
    status: str | None = "in_progress"
    """As the agent said it (unknown statuses are kept); None once cleared."""
    summary_parts: list[str] = field(default_factory=list)
    error: str | None = None

    @property
    def summary(self) -> str:
        if len(self.summary_parts) > 1:
            self.summary_parts[:] = ["".join(self.summary_parts)]
        return self.summary_parts[0] if self.summary_parts else ""


@dataclass(eq=False)
class TurnUsage(Entry):
    """The tokens one turn used, as the agent reported them in its answer to ``session/prompt``."""

    ROLE: ClassVar[str] = "turn-usage"
    total: int = 0
    input: int = 0
    output: int = 0
    thought: int | None = None
    cached_read: int | None = None
    cached_write: int | None = None


class Asked(NamedTuple):
    """A question the agent asked: the card it is shown on, and its prompt."""

    call: ToolCall
    prompt: PermissionPrompt
