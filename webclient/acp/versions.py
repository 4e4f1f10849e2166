"""ACP v1 and the v2 draft side by side: every request whose shape differs, and every capability the client reads,
per protocol version, in one place (the adapter asks its `Dialect`, never the version).

v1: https://agentclientprotocol.com/protocol/initialization; v2: ``docs/protocol/v2/migration.mdx`` and the schema
``schema/v2/schema.json`` (SDK 2.4.0). What differs for a client:

* ``initialize``: v2 sends ``info`` and ``capabilities`` (only ``auth`` and ``elicitation``: no ``fs``, no
  ``terminal``) and answers ``info``, ``capabilities {session, auth}`` and ``authMethods`` with ``methodId``.
* Support markers are objects in v2 (``{}`` is supported): ``capabilities.session`` present means the baseline
  ``session/new``, ``list``, ``resume``, ``close``; ``session.prompt.image`` and so on, ``session.delete``.
* No ``session/load`` in v2: ``session/resume`` with ``replayFrom: {type: "start"}`` replays the conversation.
* ``authenticate`` → ``auth/login``, ``logout`` → ``auth/logout`` (offered by any non-empty ``authMethods``).
* A v2 prompt is answered at once; the turn ends with an idle ``state_update`` (`webclient.acp.v2_turn`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from webclient import __version__
from webclient.acp import wire, wire_v2
from webclient.acp.jsonrpc import RpcError
from webclient.acp.wire_values import integer, items, mapping
from webclient.session.agent import AgentFailed

if TYPE_CHECKING:
    from webclient.acp.connection import AgentConnection

VERSIONS = (1, 2)
"""The protocol versions this client speaks (``WEBCLIENT_ACP_PROTOCOL``)."""

UNSUPPORTED_VERSION = -32022
"""The error of an agent that does not speak the version asked (``data: {requested, supported}``)."""

CLIENT_INFO: wire.Implementation = {"name": "acp-webclient", "title": "ACP web client", "version": __version__}


@dataclass(frozen=True, slots=True)
class Greeting:
    """What an ``initialize`` answer says of the agent, the same for both versions."""

    version: int
    info: dict[str, Any]
    prompt_capabilities: frozenset[str]
    """``image``, ``audio``, ``embeddedContext``: what a prompt may carry besides text and links."""
    session_methods: frozenset[str]
    """The optional ``session/*`` methods it offers: ``load``, ``resume``, ``list``, ``close``, ``delete``,
    ``title``."""
    auth_methods: list[Any]
    """``authMethods`` as v1 names them (``id``; a v2 ``methodId`` is copied there), for `sign_in_methods`."""
    can_sign_out: bool
    capabilities: dict[str, Any]
    """The agent's capabilities as it sent them (v1 ``agentCapabilities``, v2 ``capabilities``): for extensions."""


def _offered(raw: Any) -> bool:
    return raw is not None


def _names(markers: Any, accept: Any = _offered) -> frozenset[str]:
    return frozenset(name for name, on in mapping(markers).items() if accept(on))


class Dialect:
    """ACP v1: how the client asks, and where it reads what the agent offers."""

    version = 1

    def initialize_params(self, capabilities: dict[str, Any]) -> dict[str, Any]:
        """``capabilities``: the v1 ``clientCapabilities`` (files and terminals among them)."""
        return {"protocolVersion": self.version, "clientCapabilities": capabilities, "clientInfo": CLIENT_INFO}

    def greeting(self, result: dict[str, Any]) -> Greeting:
        said = cast(wire.InitializeResponse, result)
        capabilities = mapping(said.get("agentCapabilities"))
        session = set(_names(capabilities.get("sessionCapabilities")))
        if capabilities.get("loadSession") is True:
            session.add("load")
        return Greeting(
            version=1,
            info=mapping(said.get("agentInfo")),
            prompt_capabilities=_names(capabilities.get("promptCapabilities"), lambda on: on is True),
            session_methods=frozenset(session),
            auth_methods=items(said.get("authMethods")),
            can_sign_out=mapping(capabilities.get("auth")).get("logout") is not None,
            capabilities=capabilities,
        )

    def reattach(self, greeting: Greeting) -> tuple[str, dict[str, Any]] | None:
        """How to reopen one of the agent's sessions (method, params besides ``sessionId``/``cwd``/``mcpServers``):
        ``session/resume`` if offered, else ``session/load`` (which replays the conversation), else None."""
        if "resume" in greeting.session_methods:
            return "session/resume", {}
        if "load" in greeting.session_methods:
            return "session/load", {}
        return None

    @staticmethod
    def replays(method: str, params: dict[str, Any]) -> bool:
        """Whether the agent replays the conversation in answer to this request."""
        return method == "session/load" or (method == "session/resume" and "replayFrom" in params)

    @staticmethod
    def config_value(value: str | bool) -> dict[str, Any]:
        """A config option's value in ``session/set_config_option``: v1 types booleans only."""
        return {"type": "boolean", "value": value} if isinstance(value, bool) else {"value": value}

    sign_in_method = "authenticate"
    sign_out_method = "logout"
    prompt_ends_turn = True
    """v1: the answer to ``session/prompt`` ends the turn."""


class DialectV2(Dialect):
    """The ACP v2 draft."""

    version = 2

    def initialize_params(self, capabilities: dict[str, Any]) -> dict[str, Any]:
        """The v2 ``ClientCapabilities`` are ``auth`` and ``elicitation`` only (and ``_meta``): taken from the v1
        ones, files and terminals left out (v2 has no client file system nor terminals)."""
        v2: dict[str, Any] = {}
        auth = mapping(capabilities.get("auth"))
        if auth.get("terminal"):
            v2["auth"] = {"terminal": {}}
        if isinstance(capabilities.get("elicitation"), dict):
            v2["elicitation"] = capabilities["elicitation"]
        if isinstance(capabilities.get("_meta"), dict):
            v2["_meta"] = capabilities["_meta"]
        return {"protocolVersion": self.version, "info": CLIENT_INFO, "capabilities": v2}

    def greeting(self, result: dict[str, Any]) -> Greeting:
        said = cast(wire_v2.V2InitializeResponse, result)
        capabilities = mapping(said.get("capabilities"))
        session = capabilities.get("session")
        offered: set[str] = set()
        if isinstance(session, dict):
            offered = {"list", "resume", "close"} | set(_names(session) - {"prompt", "mcp", "_meta"})
        auth_methods = [
            {**method, "id": method["methodId"]} if isinstance(method, dict) and "id" not in method else method
            for method in items(said.get("authMethods"))
            if not isinstance(method, dict) or "methodId" in method or "id" in method
        ]
        return Greeting(
            version=2,
            info=mapping(said.get("info")),
            prompt_capabilities=_names(mapping(session).get("prompt")),
            session_methods=frozenset(offered),
            auth_methods=auth_methods,
            can_sign_out=bool(auth_methods),  # a non-empty authMethods offers auth/login and auth/logout
            capabilities=capabilities,
        )

    def reattach(self, greeting: Greeting) -> tuple[str, dict[str, Any]] | None:
        """``session/resume`` with ``replayFrom: {type: "start"}``: v2's ``session/load``, so that the page can show
        the conversation (an agent's session continued here) or compare it with what it shows (`LoadedHistory`)."""
        if "resume" not in greeting.session_methods:
            return None
        return "session/resume", {"replayFrom": {"type": "start"}}

    @staticmethod
    def config_value(value: str | bool) -> dict[str, Any]:
        """v2 types every value: ``boolean``, or ``id`` for a select's value."""
        return {"type": "boolean" if isinstance(value, bool) else "id", "value": value}

    sign_in_method = "auth/login"
    sign_out_method = "auth/logout"
    prompt_ends_turn = False
    """v2: ``session/prompt`` is answered when the prompt is taken in; an idle ``state_update`` ends the turn."""


DIALECTS: dict[int, Dialect] = {1: Dialect(), 2: DialectV2()}


def dialect(asked: int, answered: Any) -> Dialect:
    """The version both sides speak: the one the agent answered, if the client speaks it and asked at least that."""
    version = integer(answered)
    if version is not None and version in DIALECTS and version <= asked:
        return DIALECTS[version]
    return DIALECTS[min(asked, 1)]


def unsupported_version(data: Any, asked: int) -> str:
    """What a person reads when the agent refused the version asked (``-32022``): the versions it speaks, and what to
    set."""
    versions = [v for v in items(mapping(data).get("supported")) if isinstance(v, int)]
    speaks = f"ACP version {', '.join(map(str, versions))}" if versions else "another ACP version"
    setting = f"WEBCLIENT_ACP_PROTOCOL={max(versions)}" if versions else "WEBCLIENT_ACP_PROTOCOL"
    entry = f"acp_protocol = {max(versions)}" if versions else "acp_protocol"
    return (
        f"The agent speaks only {speaks}; this client asked for version {asked}. Set {setting} (or {entry} in the "
        "agent's entry of the config file) and start it again."
    )


async def initialize(connection: AgentConnection, version: int, capabilities: dict[str, Any]) -> dict[str, Any]:
    """``initialize`` in ``version`` (``capabilities``: the v1 ``clientCapabilities``, see `Dialect.initialize_params`).

    Raises:
        AgentFailed: the agent does not speak that version (``-32022``), saying what to set.
        RpcError, ConnectionClosed: as the connection raises them.
    """
    try:
        return await connection.initialize(DIALECTS[version].initialize_params(capabilities))
    except RpcError as error:
        if error.code == UNSUPPORTED_VERSION:
            raise AgentFailed(unsupported_version(error.data, version)) from None
        raise


def served_by_v1(capabilities: dict[str, Any]) -> bool:
    """Whether v1 ``clientCapabilities`` offer what a v2 ``initialize`` cannot: files or terminals."""
    files = capabilities.get("fs")
    return bool(capabilities.get("terminal")) or (isinstance(files, dict) and any(files.values()))
