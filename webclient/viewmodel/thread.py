"""One class: Thread, the ordered entries of one session's conversation, and the rules that fold updates into them.

Pure Python: no sockets, no HTML, no protocol. The ACP adapter (and later others) call the operations
below; every change is reported to ``listener`` as a :data:`~webclient.viewmodel.events.Change` (the entry, the
terminal, or another part such as the plan or the latest location), so the web layer can re-render exactly that
part. The listener is called synchronously and must be cheap: it runs once per streamed chunk.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from itertools import islice, takewhile
from typing import Any, TypeVar

from webclient.viewmodel.content import (
    ContentBlock,
    Location,
    PermissionOption,
    PlanItem,
    TerminalRef,
    TextBlock,
    ToolContent,
)
from webclient.viewmodel.entries import (
    Asked,
    Entry,
    FileChange,
    MessageEntry,
    MessageRole,
    Notice,
    PermissionPrompt,
    Plan,
    ToolCall,
)
from webclient.viewmodel.events import Change, EntryChanged, Region
from webclient.viewmodel.terminals import TerminalSet

Listener = Callable[[Change], None]
E = TypeVar("E", bound=Entry)

SEARCHED = 500
"""How many of the newest entries are searched for a message id (a chunk for an older message starts a new one)."""

# Tool-call fields a patch may carry, in our names. A value of None clears the field.
TOOL_CALL_FIELDS = frozenset({"name", "title", "kind", "status", "content", "locations", "raw_input", "raw_output"})


def _ignore(change: Change) -> None:
    pass


class Thread:
    """The entries of a session, in order, plus lookups by protocol id."""

    def __init__(self, listener: Listener = _ignore, max_entries: int | None = None) -> None:
        self.listener = listener
        self._entries: dict[int, Entry] = {}
        """By seq, in order. Beyond ``max_entries`` the oldest are dropped (in batches: see ``_drop_oldest``)."""
        self._last_seq = 0
        self.max_entries = max_entries
        self.dropped = 0
        """How many entries were dropped to keep memory bounded."""
        self.turn = 0
        self._turn_start = 0  # the seq of the last entry before the current turn's prompt
        self._tool_calls: dict[str, ToolCall] = {}
        """The newest card of each tool-call id (agents reuse ids in later turns: ``call_1`` every turn)."""
        self._permissions: dict[str, Asked] = {}
        """Every question asked, by request id. The one record of which are open: their prompt's ``state``."""
        self.terminals = TerminalSet(listener)
        self.latest_location: Location | None = None
        """Where the agent last said it was working (the last location of the last tool call that had any)."""

    # -- lookups ---------------------------------------------------------------------------------

    def __iter__(self) -> Iterator[Entry]:
        return iter(self._entries.values())

    def __len__(self) -> int:
        return len(self._entries)

    def entry(self, seq: int) -> Entry:
        """The entry numbered ``seq`` (entries are numbered from 1 in order; KeyError once it was dropped)."""
        return self._entries[seq]

    def get(self, seq: int) -> Entry | None:
        """The entry numbered ``seq``, or None when there is none (never made, or dropped)."""
        return self._entries.get(seq)

    @property
    def entries(self) -> list[Entry]:
        """The entries kept, in order, as a new list (O(thread): the page uses :meth:`latest` windows)."""
        return list(self._entries.values())

    @property
    def last(self) -> Entry | None:
        return next(reversed(self._entries.values()), None)

    def latest(self, count: int, before: int | None = None) -> list[Entry]:
        """Up to ``count`` of the newest entries numbered below ``before`` (or of all), oldest first.

        Newest first, so the cost is the window plus the entries after it (at most the cap), and gaps left by
        dropped entries cost nothing.
        """
        newest_first = reversed(self._entries.values())
        if before is not None:
            newest_first = (entry for entry in newest_first if entry.seq < before)
        return list(islice(newest_first, count))[::-1]

    def following(self, count: int, after: int) -> list[Entry]:
        """Up to ``count`` of the entries numbered above ``after``, oldest first (entries are numbered in order and
        dropped only from the front, so this costs ``count`` lookups)."""
        seq = max(after + 1, self.first_seq)
        return [entry for entry in map(self._entries.get, range(seq, seq + count)) if entry is not None]

    @property
    def first_seq(self) -> int:
        """The seq of the oldest entry kept (one past the last when there is none)."""
        return next(iter(self._entries), self._last_seq + 1)

    def tool_call(self, tool_call_id: str) -> ToolCall | None:
        return self._tool_calls.get(tool_call_id)

    def tool_call_for_permission(self, request_id: str) -> ToolCall | None:
        asked = self._permissions.get(request_id)
        return asked.call if asked is not None else None

    @property
    def pending_permissions(self) -> list[PermissionPrompt]:
        """The open questions shown on their cards (not one that a newer question on the same card replaced)."""
        return [
            asked.prompt
            for asked in self._permissions.values()
            if asked.prompt.state == "pending" and asked.call.permission is asked.prompt
        ]

    # -- turns -----------------------------------------------------------------------------------

    def start_turn(self, prompt: Iterable[ContentBlock]) -> MessageEntry:
        """Begin a turn with the user's prompt, shown at once (the agent's echo of it is not shown again)."""
        self.turn += 1
        self._turn_start = self._last_seq
        entry = self._append(MessageEntry(seq=0, turn=self.turn, kind="user-message", local=True, streaming=False))
        for block in prompt:
            self._add_to_message(entry, block)
        return entry

    def end_turn(self) -> None:
        """The turn is over: close whatever still streams, so its final rendering can be made."""
        self._close_streaming()

    def _close_streaming(self) -> None:
        last = self.last
        if isinstance(last, MessageEntry) and last.streaming:
            last.streaming = False
            self.listener(last.change)

    def current_turn(self) -> list[Entry]:
        """The current turn's entries kept, from its prompt on, newest first."""
        # Down to the turn's prompt (seq _turn_start + 1): entries are dropped from the front, so positions in the
        # thread move but seqs do not.
        return list(takewhile(lambda entry: entry.seq > self._turn_start, reversed(self._entries.values())))

    @property
    def turn_replied(self) -> bool:
        """Whether the agent has shown anything in the current turn (a message, thought, tool call, plan, file)."""
        return any(entry.role not in ("user-message", "notice", "turn-usage") for entry in self.current_turn())

    def cancel_unfinished(self) -> list[ToolCall]:
        """Mark every tool call that has not finished as cancelled, and an unfinished plan as stopped (the user
        stopped the turn): neither is live any more."""
        cancelled = [call for call in self._tool_calls.values() if not call.finished]
        for call in cancelled:
            call.status = "cancelled"
            self.listener(call.change)
        self.stop_plan()
        return cancelled

    def stop_plan(self) -> None:
        """The current plan, if unfinished, will not be worked on: it stays in the thread, marked stopped."""
        plan = self.current_plan
        if plan is not None and not plan.finished and not plan.stopped:
            plan.stopped = True
            self.listener(plan.change)
            self.listener(Region.PLAN)

    # -- messages --------------------------------------------------------------------------------

    def append_message(self, kind: MessageRole, block: ContentBlock, message_id: str | None = None) -> None:
        """Add a streamed chunk to the current message of this kind, or start a new message.

        A chunk continues the last entry when that entry is a still-streaming message of the same kind
        and the ids do not disagree; a new ``message_id`` starts a new message.
        """
        last = self.last
        if kind == "user-message" and self._is_echo(last, block):
            return
        if (
            isinstance(last, MessageEntry)
            and last.kind == kind
            and last.streaming
            and (message_id is None or last.message_id is None or last.message_id == message_id)
        ):
            if message_id is not None:
                last.message_id = message_id
            self._add_to_message(last, block)
            self.listener(last.change)
            return
        entry = self._append(MessageEntry(seq=0, turn=self.turn, kind=kind, message_id=message_id))
        self._add_to_message(entry, block)

    def _is_echo(self, last: Entry | None, block: ContentBlock) -> bool:
        """Whether ``block`` repeats the prompt this client just showed (some agents echo prompts)."""
        if not (isinstance(last, MessageEntry) and last.local and isinstance(block, TextBlock)):
            return False
        text = last.text
        if text.startswith(block.text, last.echoed):
            last.echoed += len(block.text)
            return True
        return False

    @staticmethod
    def _add_to_message(entry: MessageEntry, block: ContentBlock) -> None:
        if isinstance(block, TextBlock):
            entry.parts.append(block.text)
        else:
            entry.attachments.append(block)

    # Messages by id (the v2 draft): upserts that set a message's whole content, and chunks that go to the message
    # their ``messageId`` names, even when another message came in between. `append_message` stays the hot path.

    def find_message(self, message_id: str) -> MessageEntry | None:
        """The message ``message_id`` names among the newest entries of the current turn, the last one first (the
        usual case). Not beyond the turn: some agents number their messages afresh every turn."""
        last = self.last
        if isinstance(last, MessageEntry) and last.message_id == message_id:
            return last
        for entry in reversed(self.latest(SEARCHED)):
            if entry.turn < self.turn:
                break
            if isinstance(entry, MessageEntry) and entry.message_id == message_id:
                return entry
        return None

    def append_chunk(self, kind: MessageRole, block: ContentBlock, message_id: str | None) -> None:
        """A message chunk: appended to the message its id names, wherever it is; else as the thread streams them."""
        entry = self.find_message(message_id) if message_id is not None else None
        if entry is None or (entry is self.last and entry.streaming and entry.kind == kind):
            self.append_message(kind, block, message_id)
            return
        self._add_to_message(entry, block)
        entry.revision += 1  # not a stream's append: its rendering starts over
        self.listener(entry.change)

    def upsert_message(
        self, kind: MessageRole, message_id: str, content: Iterable[ContentBlock] | None, replace: bool
    ) -> MessageEntry:
        """``user_message``/``agent_message``/``agent_thought``: create the message ``message_id`` on first sight,
        and when ``replace``, set its whole content (``content`` None or empty clears it, chunks included).

        The turn's prompt, shown by this client before the agent inserted it, takes the id of a ``user_message`` that
        comes right after it (the agent's version of the prompt then replaces the local one when it has content)."""
        entry = self.find_message(message_id)
        if entry is None and kind == "user-message":
            entry = self._unclaimed_prompt()
            if entry is not None:
                entry.message_id = message_id
        if entry is None:
            entry = self._append(MessageEntry(seq=0, turn=self.turn, kind=kind, message_id=message_id))
            replace = True
        if replace:
            entry.parts, entry.attachments = [], []
            for block in content or ():
                self._add_to_message(entry, block)
            entry.revision += 1
        self.listener(entry.change)
        return entry

    def _unclaimed_prompt(self) -> MessageEntry | None:
        """The prompt this client just showed, when no ``user_message`` named it yet and nothing came after it: the
        agent's first report of it (on v2 the adapter drops that echo before it gets here: `acp.v2_turn`)."""
        last = self.last
        if isinstance(last, MessageEntry) and last.local and last.message_id is None and last.turn == self.turn:
            return last
        return None

    # -- tool calls ------------------------------------------------------------------------------

    def upsert_tool_call(
        self, tool_call_id: str, patch: dict[str, Any], raw: dict[str, Any], *, create: bool = False
    ) -> ToolCall:
        """Create or patch a tool call.

        ``patch`` holds only the fields the agent sent (see ``TOOL_CALL_FIELDS``): an omitted field is
        unchanged, ``None`` clears it, a value replaces it (``content`` and ``locations`` as whole lists).
        ``raw`` is the wire object; it is merged into the kept raw payload by the same rule. ``create``
        says the agent announced a new tool call (``tool_call``) rather than updating one.
        """
        unknown = patch.keys() - TOOL_CALL_FIELDS
        if unknown:
            raise ValueError(f"unknown tool call fields: {sorted(unknown)}")
        call = self._current_card(tool_call_id, create)
        created = call is None
        if call is None:
            call = ToolCall(seq=0, turn=self.turn, tool_call_id=tool_call_id)
            self._tool_calls[tool_call_id] = call
        for name, value in patch.items():
            if name in ("content", "locations"):
                value = list(value) if value else []
            setattr(call, name, value)
        for key, value in raw.items():
            if value is None:
                call.raw.pop(key, None)
            else:
                call.raw[key] = value
        if created:
            self._append(call)
        else:
            self.listener(call.change)
        self._note_terminals(call)
        if patch.get("locations"):
            self.latest_location = call.locations[-1]
            self.listener(Region.LOCATION)
        return call

    def append_tool_content(self, tool_call_id: str, item: ToolContent, raw_item: dict[str, Any]) -> ToolCall:
        """Append one content item to a tool call (creating the call if it is unknown or of an earlier turn)."""
        call = self._current_card(tool_call_id, create=False) or self.upsert_tool_call(tool_call_id, {}, {})
        call.content.append(item)
        call.raw["content"] = [*call.raw.get("content", ()), raw_item]
        self.listener(call.change)
        self._note_terminals(call)
        return call

    def _current_card(self, tool_call_id: str, create: bool) -> ToolCall | None:
        """The card ``tool_call_id`` names now, or None when a new card must start.

        Agents reuse ids in later turns (the TypeScript SDK's example says ``call_1`` every turn). A card of an
        earlier turn is history once it finished or its question was answered: a new ``tool_call``, an update
        or a permission request for its id then starts a card in the current turn. A card of an earlier turn
        still running takes late updates (a ``tool_call`` always starts afresh).
        """
        call = self._tool_calls.get(tool_call_id)
        if call is not None and call.turn < self.turn and (create or call.finished or call.permission is not None):
            return None
        return call

    def _note_terminals(self, call: ToolCall) -> None:
        for item in call.content:
            if isinstance(item, TerminalRef):
                self.terminals.embed(item.terminal_id, call.seq)

    # -- permissions -----------------------------------------------------------------------------

    def ask_permission(self, call: ToolCall, request_id: str, options: list[PermissionOption]) -> PermissionPrompt:
        """Put a tool call into "waiting for you" with the agent's options (whoever waits for the answer is told it by
        the caller of `answer_permission`: `webclient.viewmodel.permission_questions`)."""
        call.permission = PermissionPrompt(request_id=request_id, options=options)
        self._permissions[request_id] = Asked(call, call.permission)
        self.listener(call.change)
        return call.permission

    def answer_permission(self, request_id: str, option_id: str | None) -> PermissionPrompt | None:
        """Record the answer to a pending question: an option id, or None for cancelled.

        Returns the prompt if this call settled it, or None when it was unknown, already answered, or
        the option is not one of those offered: the first answer wins and later ones change nothing.
        """
        asked = self._permissions.get(request_id)
        if asked is None or asked.call.permission is not asked.prompt or asked.prompt.state != "pending":
            return None  # unknown, superseded by a newer question on the same call, or already settled
        call, prompt = asked.call, asked.prompt
        if option_id is None:
            prompt.state = "cancelled"
        elif any(option.option_id == option_id for option in prompt.options):
            prompt.state, prompt.chosen = "selected", option_id
        else:
            return None
        self.listener(call.change)
        return prompt

    def settle_permissions(self, *, interrupted: bool = False) -> None:
        """Answer every open question cancelled (the turn was stopped, or it is over), also one that a newer
        question on the same card replaced: the agent still waits for its answer. ``interrupted``: no one can answer
        them any more (the server stopped during the turn); they say so."""
        for request_id, asked in list(self._permissions.items()):
            if asked.prompt.state != "pending":
                continue
            if asked.call.permission is asked.prompt and not interrupted:
                self.answer_permission(request_id, None)
                continue
            asked.prompt.state = "interrupted" if interrupted else "cancelled"
            self.listener(asked.call.change)

    # -- plans and notices -----------------------------------------------------------------------

    def set_plan(self, items: list[PlanItem]) -> Plan:
        """Replace the plan of the current turn (a plan from an earlier turn stays as it was)."""
        plan = self.current_plan
        if plan is None or plan.turn != self.turn:
            plan = self._append(Plan(seq=0, turn=self.turn, items=items))
        else:
            plan.items = items
            self.listener(plan.change)
        self.listener(Region.PLAN)
        return plan

    @property
    def current_plan(self) -> Plan | None:
        """The latest plan the agent made (the page keeps it in view while the agent works on it)."""
        return next((e for e in reversed(self._entries.values()) if isinstance(e, Plan) and not e.removed), None)

    def add_file_change(self, display_path: str, old_text: str | None, new_text: str) -> FileChange:
        """Record a file the agent wrote through the client, so the user can open it as a diff."""
        change = FileChange(seq=0, turn=self.turn, display_path=display_path, old_text=old_text, new_text=new_text)
        return self._append(change)

    def add_entry(self, entry: E) -> E:
        """Add an entry made elsewhere in the view model (`webclient.viewmodel.questions`, `.advisories`)."""
        return self._append(entry)

    def add_notice(self, level: str, title: str, detail: str = "") -> Notice:
        assert level in ("info", "warning", "error"), level
        return self._append(Notice(seq=0, turn=self.turn, level=level, title=title, detail=detail))  # type: ignore[arg-type]

    # -- internals -------------------------------------------------------------------------------

    def _append(self, entry: E) -> E:
        """Add an entry at the end; the message that was streaming before it is complete now."""
        self._close_streaming()
        self._last_seq += 1
        entry.seq = self._last_seq
        entry.change = EntryChanged(entry.seq)
        self._entries[entry.seq] = entry
        self.listener(entry.change)
        if self.max_entries is not None and len(self._entries) > self.max_entries + self.max_entries // 10:
            self._drop_oldest()
        return entry

    def _drop_oldest(self) -> None:
        """Forget the oldest entries down to ``max_entries``, in one pass (a tenth of the cap at a time, so the
        cost per new entry stays constant). A tool call still waiting for the user's answer is kept."""
        assert self.max_entries is not None
        excess = len(self._entries) - self.max_entries
        doomed: list[Entry] = []
        for entry in self._entries.values():
            if len(doomed) >= excess:
                break
            if isinstance(entry, ToolCall) and entry.permission is not None and entry.permission.state == "pending":
                continue
            doomed.append(entry)
        for entry in doomed:
            del self._entries[entry.seq]
            if isinstance(entry, ToolCall):
                if self._tool_calls.get(entry.tool_call_id) is entry:
                    del self._tool_calls[entry.tool_call_id]
                asked = self._permissions.get(entry.permission.request_id) if entry.permission is not None else None
                if asked is not None and asked.call is entry:
                    del self._permissions[asked.prompt.request_id]
        self.dropped += len(doomed)
        self.listener(Region.DROPPED)
