"""Sessions against real agent processes: what the agent receives, checked against the ACP schema."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import websockets

from tests.support.acp_schema import validate
from tests.support.servers import ServerFactory
from tests.support.sessions import agent_session, started
from tests.support.urls import URLS, socket_at
from tests.support.waiting import received, until
from webclient.acp.agent import AcpAgent
from webclient.render.message_docs import MessageDocs
from webclient.render.rendering import Renderer
from webclient.render.urls import Urls
from webclient.session.agent_entry import AgentEntry
from webclient.session.agent_spec import AgentSpec
from webclient.session.core import Session
from webclient.viewmodel.entries import MessageEntry
from webclient.web.live.live_view import LiveView


def scripted_session(tmp_path: Path, **env: str) -> tuple[Session, Path]:
    return agent_session(tmp_path, "scripted_agent.py", **env)


@contextlib.asynccontextmanager
async def running_session(tmp_path: Path, **env: str) -> AsyncIterator[tuple[Session, Path]]:
    """A session on the scripted agent, ready for prompts; closed afterwards."""
    session, record = scripted_session(tmp_path, **env)
    async with started(session):
        await until(lambda: session.lifecycle.ready)
        yield session, record


@pytest.mark.asyncio
async def test_session_sends_schema_valid_messages_through_a_whole_turn(tmp_path: Path) -> None:
    async with running_session(tmp_path) as (session, record):
        assert session.submit_prompt("permission", "n1")
        await until(lambda: session.turns.turn_state == "awaiting-permission")
        request_id = session.thread.pending_permissions[0].request_id
        session.answers.permission(request_id, "allow-always")
        await until(lambda: session.turns.turn_state == "idle")
        messages = received(record)
        by_method = {m.get("method"): m for m in messages if "method" in m}
        validate(by_method["initialize"]["params"], "InitializeRequest")
        validate(by_method["session/new"]["params"], "NewSessionRequest")
        validate(by_method["session/prompt"]["params"], "PromptRequest")
        assert by_method["initialize"]["params"]["protocolVersion"] == 1
        answer = next(m for m in messages if "result" in m)
        validate(answer["result"], "RequestPermissionResponse")
        assert answer["result"] == {"outcome": {"outcome": "selected", "optionId": "allow-always"}}


@pytest.mark.asyncio
async def test_cancel_sends_cancel_and_answers_pending_permission_cancelled(tmp_path: Path) -> None:
    async with running_session(tmp_path) as (session, record):
        session.submit_prompt("permission", "n1")
        await until(lambda: session.turns.turn_state == "awaiting-permission")
        session.cancel()
        await until(lambda: session.turns.turn_state == "idle")
        messages = received(record)
        cancel = next(m for m in messages if m.get("method") == "session/cancel")
        validate(cancel["params"], "CancelNotification")
        answers = [m["result"] for m in messages if "result" in m]
        assert answers == [{"outcome": {"outcome": "cancelled"}}]
        call = session.thread.tool_call("edit-1")
        assert call is not None and call.status == "cancelled"


@pytest.mark.asyncio
async def test_rejection_is_sent_as_selected_never_as_cancelled(tmp_path: Path) -> None:
    async with running_session(tmp_path) as (session, record):
        session.submit_prompt("permission", "n1")
        await until(lambda: session.turns.turn_state == "awaiting-permission")
        request_id = session.thread.pending_permissions[0].request_id
        session.answers.permission(request_id, "reject-always")
        session.answers.permission(request_id, "allow-once")  # a late second click changes nothing
        await until(lambda: session.turns.turn_state == "idle")
        answers = [m["result"] for m in received(record) if "result" in m]
        assert answers == [{"outcome": {"outcome": "selected", "optionId": "reject-always"}}]


@pytest.mark.asyncio
async def test_crash_mid_turn_ends_the_session_with_its_stderr(tmp_path: Path) -> None:
    async with running_session(tmp_path) as (session, _):
        session.submit_prompt("crash", "n1")
        await until(lambda: session.turns.turn_state == "ended")
        notice = session.thread.entries[-1]
        assert notice.role == "notice"
        assert "exit code 3" in notice.title  # type: ignore[attr-defined]
        assert "crashed on purpose" in notice.detail  # type: ignore[attr-defined]
        assert not session.turns.turn_running


@pytest.mark.asyncio
async def test_missing_agent_executable_is_reported(tmp_path: Path) -> None:
    session = Session(AgentSpec(AgentEntry("agent", ["/nonexistent/agent-binary"]), tmp_path), AcpAgent)
    session.start()
    await until(lambda: session.lifecycle.agent_state == "failed")
    assert session.lifecycle.error is not None and "/nonexistent/agent-binary" in session.lifecycle.error
    await session.close()


@pytest.mark.asyncio
async def test_a_page_that_reads_slowly_never_makes_the_server_buffer(tmp_path: Path) -> None:
    """The connection holds a set of changed parts, not a queue: 20,000 chunks to a stuck page cost nothing."""
    session, _ = scripted_session(tmp_path)
    session.start()
    stuck = asyncio.Event()
    frames: list[str] = []

    async def send(frame: str) -> None:
        frames.append(frame)
        await stuck.wait()  # the browser stops reading

    live = LiveView(session, Renderer(), MessageDocs(), send, {"urls": Urls(), "static": str})
    sender = asyncio.create_task(live.run())
    try:
        await until(lambda: session.lifecycle.ready)
        session.submit_prompt("stream 20000", "n1")
        await until(lambda: session.turns.turn_state == "idle")
        # Its entries, and the parts a turn's end redraws: the header, the changes count, the plan, the queue.
        assert len(live.dirty) <= len(session.thread) + 4
        stuck.set()  # the browser catches up: one frame brings it up to date
        await until(lambda: not live.dirty)
        await asyncio.sleep(0.2)
        assert len(frames) <= 4
        message = session.thread.entries[1]
        assert isinstance(message, MessageEntry)
        assert "w19999" in frames[-1] or "w19999" in "".join(frames[1:])
    finally:
        sender.cancel()
        await asyncio.gather(sender, return_exceptions=True)
        await session.close()


def test_replayed_clicks_and_prompts_reach_the_agent_once(start_server: ServerFactory) -> None:
    """htmx replays queued sends after a reconnect; a second socket may click too: one answer only."""
    server = start_server()

    async def scenario() -> None:
        import httpx

        async with httpx.AsyncClient(base_url=server.url, headers=server.headers) as http:
            response = await http.post(URLS.for_("new_session"))
        ws_url = socket_at(server.url, response.headers["location"])
        connect = functools.partial(websockets.connect, additional_headers=server.headers)
        async with connect(ws_url) as first, connect(ws_url) as second:
            frame = str(await first.recv())
            nonce = re.search(r'id="prompt-nonce" value="([^"]+)"', frame)
            while 'data-agent-state="ready"' not in frame:
                frame = str(await first.recv())
            assert nonce is not None
            prompt = json.dumps({"action": "prompt", "prompt": "permission", "nonce": nonce.group(1)})
            await first.send(prompt)
            await first.send(prompt)  # replayed after a reconnect
            text = ""
            while "data-option-id" not in text:
                text = str(await first.recv())
            request_id = re.search(r'"request_id": "([^"]+)"', text.replace("&#34;", '"'))
            assert request_id is not None
            click = {"action": "permission", "request_id": request_id.group(1)}
            await first.send(json.dumps({**click, "option_id": "allow-once"}))
            await first.send(json.dumps({**click, "option_id": "allow-once"}))
            await second.send(json.dumps({**click, "option_id": "reject-once"}))
            server.wait_received(lambda m: m.get("result", {}).get("outcome") is not None)
            await asyncio.sleep(0.5)

    asyncio.run(scenario())
    messages = server.received()
    assert len([m for m in messages if m.get("method") == "session/prompt"]) == 1
    answers = [m["result"] for m in messages if "outcome" in m.get("result", {})]
    assert answers == [{"outcome": {"outcome": "selected", "optionId": "allow-once"}}]
