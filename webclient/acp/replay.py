"""An ACP session's recorded protocol, shown again: the lines of its journal, in order, through the code that
handled them live (the session's updates, its questions, the answers to the client's requests) while no agent
runs. Nothing is sent, run or recorded: what the agent did in the workspace comes back from the journal's own
records of it (`webclient.session.replay`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol, cast

from webclient.acp import wire
from webclient.acp.controls import settings
from webclient.acp.elicitation import Elicitations
from webclient.acp.jsonrpc import decode
from webclient.acp.protocol_log import ProtocolLog
from webclient.acp.subagents import SubagentRouter
from webclient.acp.v2_turn import TurnLifecycle
from webclient.acp.versions import Dialect
from webclient.acp.wire_values import integer, mapping, string
from webclient.session.agent import AgentHello, AgentHost
from webclient.viewmodel.permission_questions import PermissionQuestions


class Replayed(Protocol):
    """What a replay shows the journal's lines on: the adapter's handlers of the agent's messages and of the answers
    to its own requests, and the state they keep (`webclient.acp.agent.AcpAgent`)."""

    host: AgentHost
    dialect: Dialect
    turns: TurnLifecycle
    protocol_log: ProtocolLog
    subagents: SubagentRouter
    questions: PermissionQuestions
    elicitations: Elicitations
    cancelling: bool
    loading_history: bool

    def greeted(self, result: dict[str, Any], asked: int = 1) -> AgentHello: ...

    def opened(self, params: dict[str, Any], result: dict[str, Any]) -> None: ...

    def reloading(self, method: str, params: dict[str, Any]) -> bool: ...

    def turn_ended(self, result: Mapping[str, object] | None = None) -> None: ...

    def steered(self, params: dict[str, Any]) -> None: ...

    def auth_status_said(self, said: Any) -> None: ...

    def on_session_update(self, params: dict[str, Any]) -> None: ...

    def on_request_permission(self, params: dict[str, Any]) -> Awaitable[wire.RequestPermissionResponse]: ...

    def on_client_request(self, method: str, params: dict[str, Any]) -> Awaitable[Any] | None: ...

    def on_notification(self, method: str, params: Any) -> None: ...


Answered = Callable[[Replayed, dict[str, Any], dict[str, Any]], None]
"""What the answer to one of the client's requests changed: given the adapter, the request's params, its result."""


def _initialized(agent: Replayed, params: dict[str, Any], result: dict[str, Any]) -> None:
    asked = integer(params.get("protocolVersion"))
    agent.greeted(result, asked if asked is not None else 1)


def _opened(agent: Replayed, params: dict[str, Any], result: dict[str, Any]) -> None:
    agent.opened(params, result)


def _mode(agent: Replayed, params: dict[str, Any], result: dict[str, Any]) -> None:
    mode_id = string(params.get("modeId"))
    if mode_id is not None:
        agent.host.controls.set_current_mode(mode_id)


def _model(agent: Replayed, params: dict[str, Any], result: dict[str, Any]) -> None:
    model_id = string(params.get("modelId"))
    if model_id is not None:
        agent.host.controls.set_current_model(model_id)


def _setting(agent: Replayed, params: dict[str, Any], result: dict[str, Any]) -> None:
    options = result.get("configOptions")
    if isinstance(options, list):
        agent.host.controls.set_settings(settings(options))


def _turn_ended(agent: Replayed, params: dict[str, Any], result: dict[str, Any]) -> None:
    if agent.dialect.prompt_ends_turn:
        agent.turn_ended(result)
    else:  # v2: the prompt was taken in; its idle state_update ends the turn
        agent.turns.prompt_answered(result)


def _steered(agent: Replayed, params: dict[str, Any], result: dict[str, Any]) -> None:
    agent.steered(params)


ANSWERS: dict[str, Answered] = {
    "initialize": _initialized,
    "auth/status": lambda agent, params, result: agent.auth_status_said(result),
    "session/new": _opened,
    "session/load": _opened,
    "session/resume": _opened,
    "session/fork": _opened,
    "session/set_mode": _mode,
    "session/set_model": _model,
    "session/set_config_option": _setting,
    "session/prompt": _turn_ended,
    "_session/steering": _steered,
}
"""The client's requests whose answers change what the session shows, and how (the adapter does the same live)."""


class ProtocolReplay:
    """Shows one session's recorded lines again, in order, on its adapter (`AcpAgent.replay`)."""

    def __init__(self, agent: Replayed) -> None:
        self.agent = agent
        self._ours: dict[Any, tuple[str, dict[str, Any]]] = {}
        """The client's requests not answered yet, by JSON-RPC id (ids start again with each agent process)."""
        self._questions: dict[Any, tuple[str, Awaitable[Any]]] = {}
        """The agent's questions (permission, elicitation) not answered yet: JSON-RPC id to the question's request id
        and the answer it waits for (which a ``$/cancel_request`` cancels)."""

    def line(self, direction: str, line: str) -> None:
        if direction == "garbage":
            self.agent.protocol_log.replayed(direction, line, None)
            return
        try:
            message = decode(line)
        except (ValueError, RecursionError):
            message = None
        self.agent.protocol_log.replayed(direction, line, message)
        for one in message if isinstance(message, list) else [message]:
            if isinstance(one, dict):
                (self._sent if direction == "out" else self._received)(one)

    def _sent(self, message: dict[str, Any]) -> None:
        method, params = message.get("method"), message.get("params")
        if isinstance(method, str):
            if method == "initialize":  # a new agent process: its ids start again
                self._ours.clear()
                self._questions.clear()
            if method == "session/cancel":
                self.agent.cancelling = self.agent.cancelling or not self.agent.subagents.cancel_sent(params)
            elif "id" in message:
                sent = mapping(params)
                self._ours[message["id"]] = (method, sent)
                if self.agent.reloading(method, sent):  # the agent replays its history: already shown
                    self.agent.loading_history = True
                if method == "session/prompt" and not self.agent.dialect.prompt_ends_turn:
                    self.agent.turns.prompt_sent()
            return
        asked = self._questions.pop(message.get("id"), None)
        result = message.get("result")
        if asked is None or not isinstance(result, dict):
            return
        request_id = asked[0]
        if request_id.startswith("e"):  # an elicitation's answer
            elicited = cast(wire.CreateElicitationResponse, result)
            action, content = string(elicited.get("action")), elicited.get("content")
            values = content if isinstance(content, dict) else None
            self.agent.elicitations.answer(request_id, action if action is not None else "cancel", values)
        else:
            said = cast(wire.RequestPermissionResponse, result)
            chosen = string(mapping(said.get("outcome")).get("optionId"))
            self.agent.questions.answered_again(request_id, chosen)

    def _received(self, message: dict[str, Any]) -> None:
        method, params = message.get("method"), message.get("params")
        if isinstance(method, str):
            if not isinstance(params, dict):
                return
            if method == "session/update":
                self.agent.on_session_update(params)
            elif method == "session/request_permission" and "id" in message:
                answer = self.agent.on_request_permission(params)
                self._questions[message["id"]] = (f"q{self.agent.questions.asked}", answer)
            elif method == "elicitation/create" and "id" in message:
                elicited = self.agent.on_client_request(method, params)
                if elicited is not None:
                    self._questions[message["id"]] = (f"e{self.agent.elicitations.asked}", elicited)
            elif method == "$/cancel_request":
                withdrawn = self._questions.pop(params.get("requestId"), None)
                if withdrawn is not None and isinstance(withdrawn[1], asyncio.Future):
                    withdrawn[1].cancel()
            elif "id" not in message:
                self.agent.on_notification(method, params)
            return  # fs/* and terminal/*: their effects are in the journal's own records
        request = self._ours.pop(message.get("id"), None)
        if request is None:
            return
        method, params = request
        if self.agent.dialect.replays(method, params):
            self.agent.loading_history = False
        answered = ANSWERS.get(method)
        # A turn ends with its answer, an error too; other requests changed nothing if refused.
        if method == "session/prompt" and "error" in message and not self.agent.dialect.prompt_ends_turn:
            self.agent.turns.prompt_answered(None)  # v2: a refused prompt ends the turn at once
            self.agent.turn_ended()
        elif answered is not None and ("error" not in message or method == "session/prompt"):
            answered(self.agent, params, mapping(message.get("result")))
