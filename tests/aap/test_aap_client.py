"""The AAP v3 client against the demo AAP server, a real HTTP server in its own process: meta, sessions, turns in
every stream mode, the parallel tool calls of the seed page resolved in one re-submission, and history."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
import pytest_asyncio

from tests.support.aap_servers import demo_aap_server
from webclient.aap.client import AapClient, AapHttpError
from webclient.aap.meta import AapError
from webclient.aap.turn import TurnEvent, TurnRecord, open_calls_in_history, tool_permission, tool_result

CLIENT_TOOLS = [
    {"name": "read_file", "description": "Read a file", "parameters": {"type": "object"}},
    {"name": "list_files", "description": "List a folder", "parameters": {"type": "object"}},
]
pytestmark = pytest.mark.asyncio

AGENT = {"name": "demo", "tools": [{"name": "web_search", "trust": True}, {"name": "deploy_preview"}]}


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    with demo_aap_server() as url:
        yield url


@pytest_asyncio.fixture
async def client(server_url: str) -> AsyncIterator[AapClient]:
    client = AapClient(server_url)
    yield client
    await client.close()


async def run(client: AapClient, session_id: str, body: dict[str, Any]) -> tuple[list[TurnEvent], TurnRecord]:
    events, record = [], TurnRecord()
    async for event in client.turn(session_id, body):
        events.append(event)
        record.take(event)
    return events, record


async def test_meta_describes_the_demo_agent(client: AapClient) -> None:
    meta = await client.meta()
    agent = meta.agent(None)
    assert agent.name == "demo"
    assert agent.stream_mode == "delta" and agent.history_type == "full" and agent.takes_client_tools
    assert [tool.name for tool in agent.tools] == ["web_search", "deploy_preview"]
    assert [(o.name, o.type) for o in agent.options] == [("tone", "select"), ("language", "text"), ("apiKey", "secret")]
    with pytest.raises(AapError, match="no agent named 'other'"):
        meta.agent("other")


@pytest.mark.parametrize("mode", ["delta", "message", "none"])
async def test_parallel_tool_calls_are_resolved_in_one_submission(client: AapClient, mode: str) -> None:
    session_id = await client.create_session(AGENT, CLIENT_TOOLS)
    events, record = await run(client, session_id, {"stream": mode, "messages": [{"role": "user", "content": "tools"}]})
    assert events[0].name == "turn_start" and record.stop_reason == "tool_use"
    open_calls = record.open_calls({"read_file", "list_files"})
    assert sorted((c.call.name, c.side) for c in open_calls) == [
        ("deploy_preview", "server"),
        ("list_files", "client"),
        ("read_file", "client"),
    ]  # web_search (trusted) and internal_notes (unexposed) were answered inline
    assert {"web_search", "internal_notes"} <= {record.calls[i].name for i in record.answered}
    answers = [
        tool_result(c.call.id, "# Sample\nA README.")
        if c.call.name == "read_file"
        else tool_result(c.call.id, "README.md src")
        if c.call.name == "list_files"
        else tool_permission(c.call.id, granted=False, reason="not on a Friday")
        for c in open_calls
    ]
    events, record = await run(client, session_id, {"stream": mode, "messages": answers})
    assert record.stop_reason == "end_turn"
    said = "".join(e.data.get("delta") or e.data.get("text") or "" for e in events if e.name in ("text_delta", "text"))
    assert "`read_file`: # Sample A README." in said
    assert "`deploy_preview`: Tool call denied: not on a Friday" in said
    assert "`web_search`: 1. Agent Application Protocol" in said


async def test_a_granted_server_tool_runs_and_its_result_streams(client: AapClient) -> None:
    session_id = await client.create_session({"name": "demo", "tools": [{"name": "deploy_preview"}]}, [])
    _, record = await run(client, session_id, {"stream": "delta", "messages": [{"role": "user", "content": "tools"}]})
    [deploy] = record.open_calls(())
    events, _ = await run(client, session_id, {"stream": "delta", "messages": [tool_permission(deploy.call.id, True)]})
    [result] = [e for e in events if e.name == "tool_result"]
    assert result.data == {"toolCallId": deploy.call.id, "content": "Deployed main to https://preview.example.com/main"}


async def test_open_calls_are_found_again_in_the_history(client: AapClient) -> None:
    session_id = await client.create_session(AGENT, CLIENT_TOOLS)
    _, record = await run(client, session_id, {"stream": "delta", "messages": [{"role": "user", "content": "tools"}]})
    history = await client.history(session_id, "full")
    again = open_calls_in_history(history, {"read_file", "list_files"})
    assert {(c.call.id, c.side) for c in again} == {
        (c.call.id, c.side) for c in record.open_calls({"read_file", "list_files"})
    }
    assert [m["role"] for m in history][:2] == ["user", "assistant"]
    assert any(b.get("type") == "thinking" for b in history[1]["content"])
    compacted = await client.history(session_id, "compacted")
    assert not any(b.get("type") == "thinking" for b in compacted[1]["content"])


async def test_sessions_are_listed_read_and_deleted(client: AapClient) -> None:
    session_id = await client.create_session({"name": "demo", "options": {"apiKey": "s3cret", "tone": "terse"}})
    info = await client.session(session_id)
    assert info["agent"]["options"]["apiKey"] == "***" and info["agent"]["options"]["tone"] == "terse"
    assert session_id in [s["sessionId"] for s in await client.sessions()]
    await client.delete_session(session_id)
    with pytest.raises(AapHttpError) as refused:
        await client.session(session_id)
    assert refused.value.status == 404 and "Session not found" in str(refused.value)


async def test_an_api_key_is_sent_as_a_bearer_token() -> None:
    with demo_aap_server(DEMO_AAP_KEY="k-123") as url:
        anonymous, keyed = AapClient(url), AapClient(url, api_key="k-123")
        try:
            with pytest.raises(AapHttpError) as refused:
                await anonymous.create_session({"name": "demo"})
            assert refused.value.status == 401 and "k-123" not in str(refused.value)
            assert (await keyed.create_session({"name": "demo"})).startswith("sess_")
        finally:
            await anonymous.close()
            await keyed.close()


async def test_a_streamed_event_keeps_its_data_as_the_server_sent_it(client: AapClient) -> None:
    # What the journal keeps: encoding the decoded data again cost as much as decoding it.
    session_id = await client.create_session(AGENT, CLIENT_TOOLS)
    events, _ = await run(client, session_id, {"stream": "delta", "messages": [{"role": "user", "content": "hello"}]})
    streamed = [event for event in events if event.name == "text_delta"]
    assert streamed
    for event in streamed:
        assert event.said is not None and json.loads(event.said) == event.data
    made, _ = await run(client, session_id, {"stream": "none", "messages": [{"role": "user", "content": "hello"}]})
    assert made and all(event.said is None for event in made)  # not streamed: the client made them
