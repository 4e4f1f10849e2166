"""The ``subagent`` scenario: a Task tool call launches a child session that reads a file, searches, streams its
findings and replies; the user can stop the child alone (``session/cancel`` with its id).

With a client that advertises ``subagents`` (unstable ACP): ``subagent_update`` announces the child on the parent
session, the child's updates carry its own ``sessionId``, and the prompt and the reply are ``session_message``s
(the prompt's id is the Task call's, the reply's ``<that id>:reply``), as claude-agent-acp does. Otherwise the
child's updates come on the parent session marked ``_meta.claudeCode.parentToolUseId`` (claude's older form).
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

from .edit_flow import TARGET
from .turn import CHUNK_DELAY, STEP_DELAY, Turn, TurnCancelled, chunk_words

PROMPT = f"Find where `{TARGET}` handles a division by zero, and say how."

_RUNNING: dict[str, asyncio.Event] = {}
"""The children working now, by session id: a ``session/cancel`` with one's id sets its event."""
_NUMBERS = itertools.count(1)


def cancel_child(session_id: Any) -> bool:
    """A ``session/cancel`` named a child: it stops (True), the parent's turn goes on."""
    event = _RUNNING.get(session_id) if isinstance(session_id, str) else None
    if event is None:
        return False
    event.set()
    return True


class ChildStopped(Exception):
    """The user stopped the child."""


class Child:
    """One child session of the turn's session, speaking in the form the client understands."""

    def __init__(self, turn: Turn, task_id: str, number: int) -> None:
        self.turn = turn
        self.task_id = task_id
        self.session_id = f"{turn.session.session_id}:explorer-{number}"
        self.rfd = turn.caps.subagents
        self.stopped = asyncio.Event()
        self.tools = 0

    async def update(self, update: dict[str, Any]) -> None:
        if self.rfd:
            params = {"sessionId": self.session_id, "update": update}
        else:
            meta = {**update.get("_meta", {}), "claudeCode": {"parentToolUseId": self.task_id}}
            params = {"sessionId": self.turn.session.session_id, "update": {**update, "_meta": meta}}
        await self.turn.conn.send_notification("session/update", params)

    async def parent(self, update: dict[str, Any]) -> None:
        """An update of the parent's (only in the subagents form)."""
        if self.rfd:
            await self.turn.update(update)

    async def pause(self, seconds: float) -> None:
        """Wait like the turn does; the child's own Stop ends the wait too."""
        if self.stopped.is_set():
            raise ChildStopped
        try:
            await asyncio.wait_for(self.stopped.wait(), timeout=max(seconds * self.turn.speed, 0.001))
        except TimeoutError:
            self.turn.check()
            return
        raise ChildStopped

    async def state(self, state: dict[str, Any]) -> None:
        await self.parent({"sessionUpdate": "subagent_update", "sessionId": self.session_id, "state": state})

    async def say(self, text: str) -> str:
        message_id = f"{self.session_id}:m{self.tools}"
        for piece in chunk_words(text, 3):
            await self.pause(CHUNK_DELAY)
            content = {"type": "text", "text": piece}
            await self.update({"sessionUpdate": "agent_message_chunk", "messageId": message_id, "content": content})
        return text

    async def tool(self, title: str, kind: str, **fields: Any) -> str:
        self.tools += 1
        tool_id = f"{self.session_id}:tool-{self.tools}"
        await self.update(
            {"sessionUpdate": "tool_call", "toolCallId": tool_id, "title": title, "kind": kind, "status": "in_progress"}
            | fields
        )
        return tool_id

    async def done(self, tool_id: str, text: str) -> None:
        item = {"type": "content", "content": {"type": "text", "text": text}}
        update = {"sessionUpdate": "tool_call_update", "toolCallId": tool_id, "status": "completed", "content": [item]}
        await self.update(update)


async def _work(child: Child) -> str:
    """What the child does: read the file, search it, think aloud, report."""
    turn = child.turn
    await child.say(f"I will read `{TARGET}` first.")
    read = await child.tool(f"Read {TARGET}", "read", locations=[{"path": turn.abs(TARGET)}])
    await child.pause(STEP_DELAY)
    source = await turn.read_text(TARGET) or ""
    await child.done(read, f"{len(source.splitlines())} lines read.")
    search = await child.tool("Search for ZeroDivisionError", "search")
    await child.pause(STEP_DELAY * 3)
    lines = [f"{n}: {line.strip()}" for n, line in enumerate(source.splitlines(), 1) if "Zero" in line or "/ " in line]
    await child.done(search, "```\n" + "\n".join(lines[:5]) + "\n```" if lines else "No match.")
    await child.pause(STEP_DELAY * 3)
    return await child.say(
        f"`divide` in `{TARGET}` divides without a check, so Python raises `ZeroDivisionError` for a zero divisor; "
        "nothing catches it."
    )


async def run_subagent(turn: Turn) -> None:
    """A Task tool call whose child works in its own session, shown nested in that call."""
    await turn.say("I will ask a subagent to look into the calculator while I wait.")
    task_id = await turn.tool(
        "task", "Task: find how division by zero is handled", "think", status="in_progress", rawInput={"prompt": PROMPT}
    )
    child = Child(turn, task_id, next(_NUMBERS))
    parent_id = turn.session.session_id
    await child.parent({
        "sessionUpdate": "subagent_update", "sessionId": child.session_id, "title": "Explorer",
        "description": "Reads the code and reports back", "cwd": str(turn.workspace.path(".")),
        "capabilities": {"cancel": {}}, "state": {"state": "running"},
    })  # fmt: skip
    message = {"sessionUpdate": "session_message", "messageId": task_id, "senderSessionId": parent_id,
               "recipientSessionId": child.session_id, "content": [{"type": "text", "text": PROMPT}]}  # fmt: skip
    await child.parent({**message, "recipientMessageId": task_id})
    if child.rfd:
        await child.update({**message, "senderMessageId": task_id})
    _RUNNING[child.session_id] = child.stopped
    try:
        reply = await _work(child)
    except ChildStopped:
        for number in range(1, child.tools + 1):
            tool_id = f"{child.session_id}:tool-{number}"
            await child.update({"sessionUpdate": "tool_call_update", "toolCallId": tool_id, "status": "cancelled"})
        await child.state({"state": "idle", "stopReason": "cancelled"})
        await turn.tool_update(task_id, status="failed", rawOutput={"stopped": True})
        await turn.say("\n\nYou stopped the subagent, so I carry on without its report.")
        return
    except TurnCancelled:  # the whole turn was stopped: the child with it
        await child.state({"state": "idle", "stopReason": "cancelled"})
        raise
    finally:
        _RUNNING.pop(child.session_id, None)
    await child.state({"state": "idle", "stopReason": "end_turn"})
    await child.parent({"sessionUpdate": "session_message", "messageId": f"{task_id}:reply",
                        "senderSessionId": child.session_id, "recipientSessionId": parent_id,
                        "content": [{"type": "text", "text": reply}]})  # fmt: skip
    item = {"type": "content", "content": {"type": "text", "text": reply}}
    await turn.tool_update(task_id, status="completed", content=[item])
    await turn.say("\n\nThe subagent found it: a zero divisor is not handled. Try `/edit` to fix it.")
