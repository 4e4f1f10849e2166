"""Messages by id (the v2 draft): upserts that set a message's whole content, and chunks that go to the message
their ``messageId`` names, even when another message came in between.

The thread's `append_message` keeps the hot path (a chunk continuing the last message); this module handles what a
message id adds, without growing the thread: it finds the message among the newest entries.
"""

from __future__ import annotations

from collections.abc import Iterable

from webclient.viewmodel.content import ContentBlock, TextBlock
from webclient.viewmodel.entries import MessageEntry, MessageRole
from webclient.viewmodel.thread import Thread

SEARCHED = 500
"""How many of the newest entries are searched for a message id (a chunk for an older message starts a new one)."""


def find_message(thread: Thread, message_id: str) -> MessageEntry | None:
    """The message ``message_id`` names among the newest entries of the current turn, the last one first (the usual
    case). Not beyond the turn: some agents number their messages afresh every turn."""
    last = thread.last
    if isinstance(last, MessageEntry) and last.message_id == message_id:
        return last
    for entry in reversed(thread.latest(SEARCHED)):
        if entry.turn < thread.turn:
            break
        if isinstance(entry, MessageEntry) and entry.message_id == message_id:
            return entry
    return None


def append_chunk(thread: Thread, kind: MessageRole, block: ContentBlock, message_id: str | None) -> None:
    """A message chunk: appended to the message its id names, wherever it is; else as the thread streams them."""
    entry = find_message(thread, message_id) if message_id is not None else None
    if entry is None or (entry is thread.last and entry.streaming and entry.kind == kind):
        thread.append_message(kind, block, message_id)
        return
    _add(entry, block)
    entry.revision += 1  # not a stream's append: its rendering starts over
    thread.listener(entry.change)


def upsert_message(
    thread: Thread, kind: MessageRole, message_id: str, content: Iterable[ContentBlock] | None, replace: bool
) -> MessageEntry:
    """``user_message``/``agent_message``/``agent_thought``: create the message ``message_id`` on first sight, and
    when ``replace``, set its whole content (``content`` None or empty clears it, chunks included).

    The turn's prompt, shown by this client before the agent inserted it, takes the id of a ``user_message`` that
    comes right after it (the agent's version of the prompt then replaces the local one when it has content)."""
    entry = find_message(thread, message_id)
    if entry is None and kind == "user-message":
        entry = _unclaimed_prompt(thread)
        if entry is not None:
            entry.message_id = message_id
    if entry is None:
        entry = thread.add_entry(MessageEntry(seq=0, turn=thread.turn, kind=kind, message_id=message_id))
        replace = True
    if replace:
        entry.parts, entry.attachments = [], []
        for block in content or ():
            _add(entry, block)
        entry.revision += 1
    thread.listener(entry.change)
    return entry


def _unclaimed_prompt(thread: Thread) -> MessageEntry | None:
    """The prompt this client just showed, when no ``user_message`` named it yet and nothing came after it: the
    agent's first report of it (on v2 the adapter drops that echo before it gets here: `webclient.acp.lifecycle`)."""
    last = thread.last
    if isinstance(last, MessageEntry) and last.local and last.message_id is None and last.turn == thread.turn:
        return last
    return None


def _add(entry: MessageEntry, block: ContentBlock) -> None:
    if isinstance(block, TextBlock):
        entry.parts.append(block.text)
    else:
        entry.attachments.append(block)
