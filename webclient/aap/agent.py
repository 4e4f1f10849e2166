"""One class: AapAgent, the AAP adapter: a session's agent behind an AAP v3 server (`session.agent.AgentDriver`).

A turn is one ``POST /sessions/:id/turns`` and its stream, folded into the thread (`webclient.aap.fold`). When the
agent stops for ``tool_use``, every call still open is answered — the client's own tools run here (asking first
when they change things), untrusted server tools become permission questions — and all answers go back in one
``POST``, whose stream continues the turn. A stream that ends without ``turn_stop`` is read as the spec's silence:
the calls left open are answered the same way. Every request and event is journalled (secrets hidden, the API key
never), so the page is rebuilt from the journal like an ACP session's.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Sequence
from typing import Any, TypeVar

from webclient.aap.answering import Answering
from webclient.aap.cards import CARD, card_record
from webclient.aap.client import AapClient, AapHttpError
from webclient.aap.fold import CALL_OUTCOME, EventFold
from webclient.aap.hands import SPECS, Hands
from webclient.aap.meta import AapError, RemoteAgent
from webclient.aap.reading import read_turn
from webclient.aap.screen import EventScreen
from webclient.aap.settings import RemoteSettings
from webclient.aap.turn import OpenCall, TurnEvent, TurnRecord, open_calls_in_history, tool_call_of
from webclient.session.agent import (
    STARTING,
    AgentFailed,
    AgentGone,
    AgentHello,
    AgentHost,
    AgentRefused,
    AgentSession,
    Diagnosis,
    StopReason,
)
from webclient.session.agent_auth import AuthStatus
from webclient.session.prompt_content import PromptBlock
from webclient.session.recorder import PROTOCOL
from webclient.viewmodel.content import EmbeddedResource, ImageBlock, ResourceLink, TextBlock
from webclient.viewmodel.permission_questions import PermissionQuestions

T = TypeVar("T")

MAX_ROUNDS = 50
"""Tool rounds one prompt may take before the client stops answering (an agent that loops forever)."""


class AapAgent:
    """One session's remote agent. ``host.spec.entry.url`` is the server, ``remote_agent`` which of its agents."""

    def __init__(self, host: AgentHost) -> None:
        self.host = host
        self.fold = EventFold(host.thread)
        self.questions = PermissionQuestions(host.thread, host.changed, host.asked)
        self.answer_permission = self.questions.answer  # the person's answer goes straight to the question it settles
        self.hands = Hands(host.workspace, host.terminals, host.events)
        self.answering = Answering(self.questions, self.hands, self, self.fold.asked)
        self.screen = EventScreen(host.notice)
        self.hello: AgentHello | None = None
        self.can_sign_out = self.can_steer = False
        self.can_fork = False  # AAP v3 has no fork: an edited prompt goes to a new session
        self.auth_status: AuthStatus | None = None  # an AAP server is signed in to with its API key
        self.known_session_id: str | None = None
        self.remote: RemoteAgent | None = None
        self.settings: RemoteSettings | None = None
        self._client: AapClient | None = None
        self._stream: asyncio.Task[TurnRecord] | None = None
        self._cancelling = False
        self._last_error = ""
        self._open_again: list[OpenCall] = []
        """Calls the server's session had left open when it was taken up again, until they are answered."""
        self._taking_up: asyncio.Task[None] | None = None
        """Answering them, from Resume on: the next prompt waits for it."""

    # -- start and session ---------------------------------------------------------------------------

    async def start(self) -> AgentHello:
        spec = self.host.spec
        if not spec.entry.url:
            raise AgentFailed("No AAP server URL was given.")
        self.host.step(STARTING)
        self._client = AapClient(spec.entry.url, spec.entry.api_key, limits=spec.remote_limits)
        self.host.step("GET /meta")
        try:
            meta = await self._client.meta()
            remote = meta.agent(spec.entry.remote_agent)
        except AapError as error:
            raise AgentFailed(str(error)) from None
        self.remote = remote
        if self.settings is None or self.settings.agent != remote:
            self.settings = RemoteSettings(remote, spec.entry.remote_options)
        self.host.controls.set_settings(self.settings.controls())
        info = {"name": remote.name, "title": remote.display_name, "version": remote.version or ""}
        info["description"] = remote.description or ""  # what to ask it: the empty session page shows it
        image = isinstance(remote.capabilities.get("image"), dict)
        self.record("in", {"answer": "GET /meta", "agent": remote.name, "info": info, "image": image})
        return self._greeted(info, image)

    def _greeted(self, info: dict[str, Any], image: bool) -> AgentHello:
        """What the agent is, as ``/meta`` said (live, or in the journal: the rebuilt page's header says it)."""
        self.hello = AgentHello(
            info=info, prompt_capabilities=frozenset({"image"} if image else ()), auth_methods=[], reattaches=True
        )
        return self.hello

    async def open_session(self, resume: bool = False) -> None:
        client, remote, settings = self._ready()
        if resume and self.known_session_id is not None and await self._reattach(client, remote):
            if self._open_again:
                self._taking_up = asyncio.create_task(self._answer_open_again())
            return
        self.host.step("POST /sessions")
        config = settings.agent_config()
        tools = [spec.wire() for spec in self.hands.specs()] if remote.takes_client_tools else None
        self.record("out", {"request": "POST /sessions", "agent": settings.redacted(config), "tools": tools})
        session_id = await _answer(client.create_session(config, tools))
        settings.changed = False
        self.known_session_id = session_id
        self.record("in", {"answer": "POST /sessions", "sessionId": session_id})

    async def _reattach(self, client: AapClient, remote: RemoteAgent) -> bool:
        """Take up the server's session again; calls it left open (a turn that stopped for ``tool_use``, or a
        restart mid-turn) are shown again, to be answered at once (`_answer_open_again`)."""
        assert self.known_session_id is not None
        self.host.step("GET /sessions/:id")
        try:
            info = await client.session(self.known_session_id)
        except AapError as error:
            self.host.notice("warning", "The agent starts a new session", f"The server no longer has it: {error}")
            return False
        if self.settings is not None:
            self.settings.adopt(info.get("agent"))
            self.host.controls.set_settings(self.settings.controls())
        if remote.history_type is not None:
            history = await _answer(client.history(self.known_session_id, remote.history_type))
            self._open_again = open_calls_in_history(history, self._client_tools())
            for open_call in self._open_again:
                if self.host.thread.tool_call(open_call.call.id) is None:
                    call = open_call.call
                    self.show(TurnEvent("tool_call", {"toolCallId": call.id, "name": call.name, "input": call.input}))
        self.host.notice("info", "The remote agent's session was taken up again", "")
        return True

    # -- turns -----------------------------------------------------------------------------------------

    async def _answer_open_again(self) -> None:
        """The calls the server's session waits for, answered on Resume as AAP v3's tool-call page has it: the
        untrusted ones asked again on their cards, the client's own run (or their journalled results reused), and
        everything re-submitted in one ``POST`` as soon as the last question is answered; its stream goes on with
        the turn the restart cut."""
        self._cancelling = False
        try:
            messages = await self.answering.answer(self._open_again)
            if self._cancelling:
                return
            self._open_again = []
            await self._rounds(messages)
        except (AgentRefused, AgentGone) as error:
            self.host.notice("error", "The open tool calls could not be sent to the remote agent", str(error))

    async def prompt(self, prompt: Sequence[PromptBlock]) -> StopReason | None:
        client, remote, settings = self._ready()
        if self.known_session_id is None:
            raise AgentGone
        if self._taking_up is not None:
            await asyncio.wait([self._taking_up])  # the server's session waits for those answers first
            self._taking_up = None
            if self._cancelling:
                return "cancelled"  # stopped while it waited: the prompt goes no further
        self._cancelling = False
        user_message = {"role": "user", "content": self._user_content(prompt, remote)}
        # Calls left open that Resume could not send come first (the server waits for them); the prompt follows.
        waiting, self._open_again = self._open_again, []
        for open_call in waiting:  # shown again as cards of this turn, where they are answered
            call = open_call.call
            self.show(TurnEvent("tool_call", {"toolCallId": call.id, "name": call.name, "input": call.input}))
        if waiting:
            return await self._rounds(await self.answering.answer(waiting), then=user_message)
        return await self._rounds([user_message])

    @staticmethod
    def _user_content(prompt: Sequence[PromptBlock], remote: RemoteAgent) -> str | list[dict[str, Any]]:
        """A prompt as an AAP user message's content: its text, or text and images (as ``data:`` URLs) when the agent
        takes them. AAP has no block for other attachments: they are named in the text."""
        image = remote.capabilities.get("image")
        takes_data = isinstance(image, dict) and isinstance(image.get("data"), dict)
        blocks: list[dict[str, Any]] = []
        for block in prompt:
            if isinstance(block, TextBlock):
                blocks.append({"type": "text", "text": block.text})
            elif isinstance(block, ImageBlock) and block.data and takes_data:
                blocks.append({"type": "image", "url": f"data:{block.mime_type};base64,{block.data}"})
            elif isinstance(block, ResourceLink | EmbeddedResource):
                blocks.append({"type": "text", "text": f"(attached: {block.uri})"})
        if all(b["type"] == "text" for b in blocks):
            return "\n\n".join(b["text"] for b in blocks)
        return blocks

    async def _rounds(self, messages: list[dict[str, Any]], then: dict[str, Any] | None = None) -> StopReason | None:
        """``messages`` sent, and every round of tool calls the agent makes after them answered; ``then`` (a prompt
        behind calls answered first) is sent once the agent stops asking."""
        client, remote, settings = self._ready()
        session_id = self.known_session_id
        if session_id is None:
            raise AgentGone
        stop: str | None = None
        for _ in range(MAX_ROUNDS):
            body: dict[str, Any] = {"stream": remote.stream_mode, "messages": messages}
            if settings.changed:
                body["agent"] = {k: v for k, v in settings.agent_config().items() if k != "name"}
            try:
                record = await self._turn(client, session_id, body)
            except asyncio.CancelledError:
                if not self._cancelling:
                    raise
                return "cancelled"
            settings.changed = False
            await self._results_not_streamed(messages, record)
            stop = record.stop_reason
            open_calls = record.open_calls(self._client_tools())
            if self._cancelling:
                return "cancelled"
            if stop in (None, "tool_use") and open_calls:
                messages = await self.answering.answer(open_calls)
            elif then is not None:
                messages, then = [then], None
            else:
                break
            if self._cancelling:
                return "cancelled"
        if stop == "error":
            self.host.notice("error", "The remote agent stopped with an error", "AAP gives no detail for it.")
        elif stop is None:
            self.host.notice("warning", "The remote agent's stream ended without saying why", "")
        return stop

    async def _results_not_streamed(self, sent: list[dict[str, Any]], record: TurnRecord) -> None:
        """Server tools granted in ``sent`` whose ``tool_result`` never came (real servers do that): their result is
        taken from the history when the agent keeps one, else the card says none came."""
        missing = [
            m["toolCallId"]
            for m in sent
            if m.get("role") == "tool_permission" and m.get("granted") and m["toolCallId"] not in record.answered
        ]
        if not missing:
            return
        client, remote, _ = self._ready()
        results: dict[Any, Any] = {}
        if remote.history_type is not None and self.known_session_id is not None:
            history = await _answer(client.history(self.known_session_id, remote.history_type))
            results = {m.get("toolCallId"): m.get("content") for m in history if m.get("role") == "tool"}
        for call_id in missing:
            result = results.get(call_id, "The server sent no result for this call.")
            self.show(TurnEvent("tool_result", {"toolCallId": call_id, "content": result}))

    async def _turn(self, client: AapClient, session_id: str, body: dict[str, Any]) -> TurnRecord:
        """One ``POST /sessions/:id/turns`` and its stream, in a task that Stop cancels."""
        self.record("out", {"request": "POST /sessions/:id/turns", "body": self._redacted_body(body)})
        self._stream = asyncio.create_task(self._read(client, session_id, body))
        try:
            return await self._stream
        finally:
            self._stream = None

    async def _read(self, client: AapClient, session_id: str, body: dict[str, Any]) -> TurnRecord:
        try:
            return await read_turn(client, session_id, body, self.screen, self.show)
        except AapError as error:
            self._last_error = str(error)
            raise AgentRefused(str(error), getattr(error, "status", None)) from None

    def cancel(self) -> Awaitable[None]:
        """Stop ends the stream; the session stays usable (AAP v3 has no cancel request: the server may go on)."""
        self._cancelling = True
        self.questions.settle()
        if self._stream is not None:
            self._stream.cancel()
        return asyncio.sleep(0)

    def cancel_subagent(self, session_id: str) -> Awaitable[None]:
        return asyncio.sleep(0)  # AAP v3 has no child sessions

    def answer_question(self, request_id: str, action: str, values: dict[str, Any] | None) -> None:
        pass  # AAP agents ask nothing but permissions

    can_cancel_entities = False
    """AAP has no cancel of one tool call (ACP v2's ``tool_call/cancel``): no Stop is drawn on its cards."""

    async def cancel_entity(self, kind: str, entity_id: str) -> None:
        pass  # never offered

    # -- settings and the rest of the driver -----------------------------------------------------------

    async def set_setting(self, setting_id: str, value: str | bool) -> None:
        _, _, settings = self._ready()
        if not settings.set(setting_id, value):
            raise AgentRefused(f"The remote agent has no setting {setting_id!r}.")
        self.host.controls.set_settings(settings.controls())

    async def set_mode(self, mode_id: str) -> None:
        raise AgentRefused("Remote agents have no modes.")

    async def set_model(self, model_id: str) -> None:
        raise AgentRefused("Remote agents choose models through their options.")

    async def sign_in(self, method_id: str) -> None:
        raise AgentRefused("Remote agents are signed in with an API key.")

    async def sign_out(self) -> None:
        raise AgentRefused("Remote agents are signed in with an API key.")

    async def steer(self, prompt: Sequence[PromptBlock]) -> None:
        raise AgentRefused("Remote agents take prompts between turns only.")

    async def set_title(self, title: str) -> None:
        pass  # AAP sessions have no title

    async def fork(self) -> None:
        raise AgentRefused("An AAP server has no fork of a session.")

    async def forget(self) -> None:
        if self._client is not None and self.known_session_id is not None:
            await _answer(self._client.delete_session(self.known_session_id))

    async def list_sessions(self) -> list[AgentSession] | None:
        client, remote, _ = self._ready()
        found = await _answer(client.sessions())
        cwd = str(self.host.spec.cwd)
        return [
            AgentSession(id=s["sessionId"], cwd=cwd)
            for s in found
            if isinstance(s.get("sessionId"), str)
            and isinstance(s.get("agent"), dict)
            and s["agent"].get("name") == remote.name
        ]

    def diagnose(self) -> Diagnosis:
        return Diagnosis(detail=self._last_error or "The AAP server gave no more detail.")

    async def close(self) -> None:
        if self._taking_up is not None:
            self._taking_up.cancel()  # before the questions are settled: no denial is sent for them
        self.questions.settle()
        if self._stream is not None:
            self._stream.cancel()
        client, self._client = self._client, None
        if client is not None:
            await client.close()

    # -- the journal -----------------------------------------------------------------------------------

    def replay(self, direction: str, line: str) -> None:
        """Show again what a journalled request or event showed: events fold as they did live, and the answers
        the client sent (tool results, permissions) complete their cards."""
        try:
            record = json.loads(line)
        except ValueError:
            return
        if direction == "in" and isinstance(record, dict) and isinstance(record.get("event"), str):
            data = record.get("data")
            self.fold.take(TurnEvent(record["event"], data if isinstance(data, dict) else {}))
        elif direction == "in" and isinstance(record, dict) and isinstance(record.get("info"), dict):
            self._greeted(record["info"], record.get("image") is True)
        elif direction == "in" and isinstance(record, dict) and isinstance(record.get("sessionId"), str):
            self.known_session_id = record["sessionId"]
        elif direction == "out" and isinstance(record, dict) and self.answering.replay(record):
            pass
        elif direction == "out" and isinstance(record, dict) and isinstance(record.get("asked"), str):
            self.answering.show_again(record)

    def card(self, call_id: str, status: str, content: Any = None) -> None:
        """What the client did about a call, on its card (and in the journal): running, or its outcome."""
        self.show(TurnEvent(CALL_OUTCOME, {"toolCallId": call_id, "status": status, "content": content}))

    def show(self, event: TurnEvent) -> None:
        """An event on the thread, and in the journal (which shows it again after a restart); a call's card says
        what the call will do (`webclient.aap.cards`)."""
        # The data as it came: encoding a streamed 4 KiB delta again cost as much as decoding it.
        data = event.said if event.said is not None else json.dumps(event.data, ensure_ascii=False)
        self.host.recorder.record(PROTOCOL, "in", f'{{"event": {json.dumps(event.name)}, "data": {data}}}')
        self.fold.take(event)
        if event.name == "tool_call" and (call := tool_call_of(event.data)) is not None:
            declared = SPECS.values() if call.name in self._client_tools() else self.remote.tools if self.remote else ()
            self.show(TurnEvent(CARD, card_record(call, self.hands, declared)))

    def record(self, direction: str, record: dict[str, Any]) -> None:
        self.host.recorder.record(PROTOCOL, direction, json.dumps(record, ensure_ascii=False))

    def _redacted_body(self, body: dict[str, Any]) -> dict[str, Any]:
        if self.settings is None or not isinstance(body.get("agent"), dict):
            return body
        return {**body, "agent": self.settings.redacted(body["agent"])}

    # -- helpers ---------------------------------------------------------------------------------------

    def _ready(self) -> tuple[AapClient, RemoteAgent, RemoteSettings]:
        if self._client is None or self.remote is None or self.settings is None:
            raise AgentGone
        return self._client, self.remote, self.settings

    def _client_tools(self) -> set[str]:
        return {spec.name for spec in self.hands.specs()} if self.remote and self.remote.takes_client_tools else set()


async def _answer(request: Awaitable[T]) -> T:
    try:
        return await request
    except AapHttpError as error:
        raise AgentRefused(str(error), error.status) from None
    except AapError as error:
        raise AgentRefused(str(error)) from None
