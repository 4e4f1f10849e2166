"""A turn's events and what they leave to do: the tool calls the client must answer after ``tool_use``.

AAP v3's resolving rule (the seed page "Tool Call"): gather every ``tool_call`` of the turn, drop those a
``tool_result`` answered (trusted server tools, run inline), and sort the rest by name against the tools the client
declared: the client's own are run here, everything else is a server tool that needs the person's permission.
Then all results and permissions go back in one ``POST /sessions/:id/turns``. The same rule finds the calls left
open in a history (after a restart), from its last assistant message.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal


@dataclass(frozen=True, slots=True)
class TurnEvent:
    """One event of a turn's stream: its name (``text_delta``, ``tool_call``, ...) and its data."""

    name: str
    data: dict[str, Any]
    said: str | None = field(default=None, compare=False)
    """The data as the server sent it (a JSON object's text), which the journal keeps rather than encoding it again;
    None for an event the client made."""


@dataclass(frozen=True, slots=True)
class ToolCallSeen:
    id: str
    name: str
    input: dict[str, Any]


@dataclass(frozen=True, slots=True)
class OpenCall:
    """A tool call waiting for the client: ``client`` ones are run here, ``server`` ones need a permission."""

    call: ToolCallSeen
    side: Literal["client", "server"]


def tool_call_of(data: dict[str, Any]) -> ToolCallSeen | None:
    call_id, name, arguments = data.get("toolCallId"), data.get("name"), data.get("input")
    if not isinstance(call_id, str) or not isinstance(name, str):
        return None
    return ToolCallSeen(call_id, name, arguments if isinstance(arguments, dict) else {})


@dataclass
class TurnRecord:
    """What one turn's stream said so far: its tool calls, which a result answered, and how it stopped."""

    calls: dict[str, ToolCallSeen] = field(default_factory=dict)
    answered: set[str] = field(default_factory=set)
    stop_reason: str | None = None
    stops: int = 0
    """How many ``turn_stop``s came: real servers send a second one with ``error``."""

    def take(self, event: TurnEvent) -> None:
        if event.name == "tool_call" and (call := tool_call_of(event.data)) is not None:
            self.calls[call.id] = call
        elif event.name == "tool_result" and isinstance(event.data.get("toolCallId"), str):
            self.answered.add(event.data["toolCallId"])
        elif event.name == "turn_stop":
            self.stops += 1
            reason = event.data.get("stopReason")
            if self.stop_reason is None or reason == "error":
                self.stop_reason = reason if isinstance(reason, str) else "unknown"

    def open_calls(self, client_tools: Iterable[str]) -> list[OpenCall]:
        """The calls no result answered, each sorted to the side that must act on it."""
        return classify((c for c in self.calls.values() if c.id not in self.answered), client_tools)


def classify(calls: Iterable[ToolCallSeen], client_tools: Iterable[str]) -> list[OpenCall]:
    mine = set(client_tools)
    return [OpenCall(call, "client" if call.name in mine else "server") for call in calls]


def open_calls_in_history(history: list[dict[str, Any]], client_tools: Iterable[str]) -> list[OpenCall]:
    """The ``tool_use`` blocks of the history's last assistant message that no ``tool`` message answers."""
    answered = {m.get("toolCallId") for m in history if m.get("role") == "tool"}
    for message in reversed(history):
        content = message.get("content")
        if message.get("role") == "assistant" and isinstance(content, list):
            calls = (
                tool_call_of(block) for block in content if isinstance(block, dict) and block.get("type") == "tool_use"
            )
            return classify((c for c in calls if c is not None and c.id not in answered), client_tools)
    return []


def messages_as_events(messages: Iterable[Any]) -> Iterator[TurnEvent]:
    """History or ``stream: "none"`` messages as the events a stream would have sent (``message`` mode), so a
    turn, a restart and a history read all fold the same way."""
    for message in messages:
        if not isinstance(message, dict):
            continue
        role, content = message.get("role"), message.get("content")
        if role == "tool":
            yield TurnEvent("tool_result", {"toolCallId": message.get("toolCallId"), "content": content})
        elif role == "user":
            yield TurnEvent("user", {"content": content})
        elif role == "assistant" and isinstance(content, str):
            yield TurnEvent("text", {"text": content})
        elif role == "assistant" and isinstance(content, list):
            for block in content:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "text":
                    yield TurnEvent("text", {"text": block.get("text", "")})
                elif block.get("type") == "thinking":
                    yield TurnEvent("thinking", {"thinking": block.get("thinking", "")})
                elif block.get("type") == "tool_use":
                    yield TurnEvent("tool_call", {k: block.get(k) for k in ("toolCallId", "name", "input")})
                else:
                    yield TurnEvent("content", {"block": block})


def tool_result(call_id: str, content: str | list[dict[str, Any]]) -> dict[str, Any]:
    """The message that answers a client tool's call."""
    return {"role": "tool", "toolCallId": call_id, "content": content}


def tool_permission(call_id: str, granted: bool, reason: str | None = None) -> dict[str, Any]:
    """The message that grants or denies a server tool's call (a denial's reason reaches the agent)."""
    message: dict[str, Any] = {"role": "tool_permission", "toolCallId": call_id, "granted": granted}
    if reason:
        message["reason"] = reason
    return message
