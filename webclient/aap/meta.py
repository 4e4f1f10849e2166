"""``GET /meta`` of an AAP server (https://github.com/agentapplicationprotocol, v3): its agents, their exposed
server tools, options and capabilities. Parsed leniently (unknown fields ignored, malformed entries dropped), but a
server that does not say ``version: 3`` is refused: v4 changed every endpoint."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

SUPPORTED_VERSION = 3
STREAM_MODES = ("delta", "message", "none")
"""Richest first: the client asks for the first one the agent advertises."""


class AapError(Exception):
    """Something the AAP server said or did that the session cannot go on from; its text is shown to the user."""


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool as AAP declares it: the server's exposed tools in ``/meta``, the client's own in ``POST /sessions``."""

    name: str
    description: str
    parameters: dict[str, Any]
    title: str | None = None

    def wire(self) -> dict[str, Any]:
        spec: dict[str, Any] = {"name": self.name, "description": self.description, "parameters": self.parameters}
        if self.title:
            spec["title"] = self.title
        return spec


@dataclass(frozen=True, slots=True)
class AgentOption:
    """One of an agent's options: ``text``, ``select`` (with ``choices``) or ``secret`` (masked, kept server-side)."""

    name: str
    type: str
    default: str
    title: str | None = None
    description: str | None = None
    choices: tuple[str, ...] = ()

    @property
    def secret(self) -> bool:
        return self.type == "secret"


@dataclass(frozen=True, slots=True)
class RemoteAgent:
    """One agent of the server, as ``/meta`` describes it."""

    name: str
    title: str | None
    version: str | None
    description: str | None
    tools: tuple[ToolSpec, ...]
    options: tuple[AgentOption, ...]
    capabilities: dict[str, Any] = field(default_factory=dict)

    @property
    def stream_mode(self) -> str:
        """The richest stream mode it offers (``none`` when it says nothing, as the spec has it)."""
        offered = self.capabilities.get("stream")
        offered = offered if isinstance(offered, dict) else {}
        return next((mode for mode in STREAM_MODES if isinstance(offered.get(mode), dict)), "none")

    @property
    def history_type(self) -> str | None:
        """``full`` if it keeps the exact history, else ``compacted``, else None (no way to recover a turn)."""
        history = self.capabilities.get("history")
        history = history if isinstance(history, dict) else {}
        return next((kind for kind in ("full", "compacted") if isinstance(history.get(kind), dict)), None)

    @property
    def takes_client_tools(self) -> bool:
        application = self.capabilities.get("application")
        return isinstance(application, dict) and isinstance(application.get("tools"), dict)

    @property
    def display_name(self) -> str:
        return self.title or self.name


@dataclass(frozen=True, slots=True)
class ServerMeta:
    version: int
    agents: tuple[RemoteAgent, ...]

    def agent(self, name: str | None) -> RemoteAgent:
        """The agent named ``name``, or the only one when no name is given."""
        if name is None and len(self.agents) == 1:
            return self.agents[0]
        for agent in self.agents:
            if agent.name == name:
                return agent
        names = ", ".join(agent.name for agent in self.agents) or "none"
        wanted = f"no agent named {name!r}" if name else "several agents and none was chosen"
        raise AapError(f"The AAP server has {wanted} (its agents: {names}); set WEBCLIENT_AAP_AGENT.")


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _tool(raw: Any) -> ToolSpec | None:
    if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
        return None
    parameters = raw.get("parameters")
    return ToolSpec(
        name=raw["name"],
        description=_str(raw.get("description")) or "",
        parameters=parameters if isinstance(parameters, dict) else {},
        title=_str(raw.get("title")),
    )


def _option(raw: Any) -> AgentOption | None:
    if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
        return None
    choices = raw.get("options")
    return AgentOption(
        name=raw["name"],
        type=str(raw["type"]) if raw.get("type") in ("text", "select", "secret") else "text",
        default=str(raw.get("default", "")),
        title=_str(raw.get("title")),
        description=_str(raw.get("description")),
        choices=tuple(str(c) for c in choices) if isinstance(choices, list) else (),
    )


def _agent(raw: Any) -> RemoteAgent | None:
    if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
        return None
    tools, options = _list(raw.get("tools")), _list(raw.get("options"))
    capabilities = raw.get("capabilities")
    return RemoteAgent(
        name=raw["name"],
        title=_str(raw.get("title")),
        version=_str(raw.get("version")),
        description=_str(raw.get("description")),
        tools=tuple(t for t in map(_tool, tools) if t is not None),
        options=tuple(o for o in map(_option, options) if o is not None),
        capabilities=capabilities if isinstance(capabilities, dict) else {},
    )


def parse_meta(raw: Any) -> ServerMeta:
    """``GET /meta``'s answer; `AapError` unless it is a v3 server."""
    version = raw.get("version") if isinstance(raw, dict) else None
    if version != SUPPORTED_VERSION:
        raise AapError(
            f"The server speaks AAP version {version!r}; this client speaks version {SUPPORTED_VERSION} only."
        )
    agents = _list(raw.get("agents"))
    return ServerMeta(version=version, agents=tuple(a for a in map(_agent, agents) if a is not None))
