"""The demo server's sessions, in memory: their agent configuration, the client's tools, and their history."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from .agents import AGENT, OPTIONS, defaults

_ids = itertools.count(1)


@dataclass
class Session:
    id: str
    enabled: dict[str, bool]
    """Exposed server tools the client enabled, by name, to whether it trusts them."""
    options: dict[str, str]
    tools: list[dict[str, Any]]
    """The client's own tools, as it declared them (``ToolSpec``)."""
    history: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def create(cls, body: dict[str, Any]) -> Session:
        agent = body.get("agent") if isinstance(body.get("agent"), dict) else {}
        session = cls(id=f"sess_{next(_ids):04d}", enabled={}, options=defaults(), tools=[])
        session.configure(agent, body.get("tools"))
        seed = body.get("messages")
        session.history.extend(m for m in seed if isinstance(m, dict)) if isinstance(seed, list) else None
        return session

    def configure(self, agent: Any, tools: Any) -> None:
        """A turn's or the creation's overrides: persisted for the rest of the session, as AAP v3 says."""
        if isinstance(agent, dict) and isinstance(agent.get("tools"), list):
            exposed = {tool["name"] for tool in AGENT["tools"]}
            self.enabled = {
                ref["name"]: ref.get("trust") is True
                for ref in agent["tools"]
                if isinstance(ref, dict) and ref.get("name") in exposed
            }
        if isinstance(agent, dict) and isinstance(agent.get("options"), dict):
            known = {option["name"] for option in OPTIONS}
            self.options.update({k: str(v) for k, v in agent["options"].items() if k in known})
        if isinstance(tools, list):
            self.tools = [tool for tool in tools if isinstance(tool, dict) and isinstance(tool.get("name"), str)]

    @property
    def client_tools(self) -> set[str]:
        return {tool["name"] for tool in self.tools}

    def info(self) -> dict[str, Any]:
        """``SessionInfo``: secrets come back as ``***``."""
        secret = {option["name"] for option in OPTIONS if option["type"] == "secret"}
        options = {k: ("***" if k in secret and v else v) for k, v in self.options.items()}
        tools = [{"name": name, "trust": trust} for name, trust in self.enabled.items()]
        return {
            "sessionId": self.id,
            "agent": {"name": AGENT["name"], "tools": tools, "options": options},
            "tools": self.tools,
        }

    def compacted(self) -> list[dict[str, Any]]:
        """What the model would see: the history without its thinking."""
        kept = []
        for message in self.history:
            content = message.get("content")
            if message.get("role") == "assistant" and isinstance(content, list):
                message = {**message, "content": [block for block in content if block.get("type") != "thinking"]}
            kept.append(message)
        return kept

    def last_tool_calls(self) -> list[dict[str, Any]]:
        """The ``tool_use`` blocks of the last assistant message that has any."""
        for message in reversed(self.history):
            content = message.get("content")
            if message.get("role") == "assistant" and isinstance(content, list):
                calls = [block for block in content if block.get("type") == "tool_use"]
                if calls:
                    return calls
        return []

    def unresolved(self) -> list[dict[str, Any]]:
        """The ``tool_use`` blocks of the last assistant message that no ``tool`` message answers (the spec looks
        at the last assistant message only)."""
        answered = {m.get("toolCallId") for m in self.history if m.get("role") == "tool"}
        for message in reversed(self.history):
            content = message.get("content")
            if message.get("role") == "assistant" and isinstance(content, list):
                return [b for b in content if b.get("type") == "tool_use" and b.get("toolCallId") not in answered]
        return []
