"""Subagents end to end: a real server and a raw-JSON agent (tests/agents/subagent_agent.py) that runs child
sessions. The client advertises ``subagents``; a child's messages and tool calls show inside the tool call card that
launched it (in ACP's form and in claude's ``parentToolUseId`` form), escaped; a session nobody announced shows
nothing; a Stop on the child sends ``session/cancel`` with the child's id; and all of it comes back after a restart."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from pathlib import Path

import httpx
import pytest

from tests.support.acp_schema import validate
from tests.support.restarts import ready_page, session_page, stop, thread_html, until
from tests.support.servers import Server, ServerFactory
from tests.support.urls import URLS

AGENT = f"{sys.executable} {Path(__file__).resolve().parents[1] / 'agents' / 'subagent_agent.py'}"


async def run(server: Server, prompt: str) -> str:
    """A new session that runs ``prompt`` to its end; its id."""
    async with ready_page(server) as (socket, nonce, session_id):
        await until(socket, 'data-agent-state="ready"')
        await socket.send(json.dumps({"action": "prompt", "prompt": prompt, "nonce": nonce}))
        await until(socket, 'data-turn-state="idle"')
    return session_id


def between(html: str, first: str, *marks: str) -> bool:
    """Whether the marks come in this order after ``first`` (each after the one before)."""
    at = html.index(first)
    for mark in marks:
        found = html.find(mark, at + 1)
        if found < 0:
            return False
        at = found
    return True


@pytest.mark.process
def test_a_child_shows_inside_the_task_that_launched_it_and_comes_back_after_a_restart(
    start_server: ServerFactory, tmp_path: Path
) -> None:
    env = {"WEBCLIENT_DATA_DIR": str(tmp_path / "data")}
    first = start_server(process=True, agent=AGENT, workspace=tmp_path / "project", **env)
    session_id = asyncio.run(run(first, "rfd"))
    [hello] = [m for m in first.received() if m.get("method") == "initialize"]
    assert hello["params"]["clientCapabilities"]["subagents"] == {}
    validate(hello["params"], "InitializeRequest")
    before = thread_html(session_page(first, session_id))
    # In the Task's card: the child (escaped), its message, its tool call, its own child; then the placeholder of its
    # entry, the prompt sent to it, its reply, and the parent's last words.
    assert between(
        before,
        'data-tool-call-id="task-1"',
        'data-role="subagent"',
        "Explorer &lt;b&gt;",
        "Done",
        "Reads &lt;i&gt;the&lt;/i&gt; code",
        "Find the bug",
        "Child reading &lt;notes&gt;",
        "Read notes.txt",
        "Helper",
        "Grandchild words",
        'data-role="subagent-moved"',
        "sent to Explorer &lt;b&gt;",
        "reply from Explorer &lt;b&gt;",
        "The bug is in line 7",
        "Parent done",
    )
    assert "<b>" not in before and "<i>" not in before
    assert 'id="sub1-entry-' in before and 'id="sub2-entry-' in before  # the children's ids never clash
    asyncio.run(asyncio.sleep(0.3))
    stop(first, signal.SIGKILL)

    second = start_server(process=True, agent=AGENT, workspace=tmp_path / "project", **env)
    assert thread_html(session_page(second, session_id)) == before


def test_claudes_parent_tool_use_id_form_nests_the_childs_updates_in_its_task(start_server: ServerFactory) -> None:
    server = start_server(agent=AGENT)
    thread = thread_html(session_page(server, asyncio.run(run(server, "classic"))))
    assert between(
        thread,
        'data-tool-call-id="toolu_1"',
        'data-role="subagent"',
        "Classic child words",
        'data-tool-call-id="toolu_2"',
        'data-role="subagent-moved"',
        "Classic parent words",
    )


def test_an_unannounced_session_shows_nothing_but_stays_in_the_protocol_log(start_server: ServerFactory) -> None:
    server = start_server(agent=AGENT)
    session_id = asyncio.run(run(server, "stranger"))
    thread = thread_html(session_page(server, session_id))
    assert "visible words" in thread and "ghost words" not in thread
    with httpx.Client(base_url=server.url, headers=server.headers) as http:
        log = http.get(URLS.for_("protocol_log", session_id=session_id), params={"query": "words"}).text
    ghost, visible = log.split('data-role="unknown-session"', 1)  # one line is marked: the ghost's
    assert "nobody-announced-this" in visible.split("</li>", 1)[0] and "unknown-session" not in visible


def test_stop_on_a_child_sends_session_cancel_with_its_id(start_server: ServerFactory) -> None:
    server = start_server(agent=AGENT)

    async def scenario() -> None:
        async with ready_page(server) as (socket, nonce, _):
            await until(socket, 'data-agent-state="ready"')
            await socket.send(json.dumps({"action": "prompt", "prompt": "wait", "nonce": nonce}))
            await until(socket, 'data-action="stop-subagent"')
            await socket.send(json.dumps({"action": "cancel_subagent", "session_id": "child-1"}))
            await socket.send(json.dumps({"action": "cancel_subagent", "session_id": "grand-1"}))  # not cancellable
            frame = await until(socket, "The child was stopped")
            assert 'data-turn-state="idle"' in frame or 'data-turn-state="idle"' in await until(
                socket, 'data-turn-state="idle"'
            )

    asyncio.run(scenario())
    cancels = [m for m in server.received() if m.get("method") == "session/cancel"]
    assert [c["params"] for c in cancels] == [{"sessionId": "child-1"}]
    validate(cancels[0]["params"], "CancelNotification")


@pytest.mark.process
def test_a_childs_questions_are_asked_in_it_answered_once_and_shown_answered_after_a_restart(
    start_server: ServerFactory, tmp_path: Path
) -> None:
    env = {"WEBCLIENT_DATA_DIR": str(tmp_path / "data")}
    first = start_server(process=True, agent=AGENT, workspace=tmp_path / "project", **env)

    async def scenario() -> str:
        async with ready_page(first) as (socket, nonce, session_id):
            await until(socket, 'data-agent-state="ready"')
            await socket.send(json.dumps({"action": "prompt", "prompt": "ask", "nonce": nonce}))
            frame = await until(socket, 'data-option-id="allow"')  # the session waits for the user, as for its own
            if 'data-turn-state="awaiting-permission"' not in frame:
                await until(socket, 'data-turn-state="awaiting-permission"', seconds=5)
            await socket.send(json.dumps({"action": "permission", "request_id": "q1", "option_id": "allow"}))
            await socket.send(json.dumps({"action": "permission", "request_id": "q1", "option_id": "reject"}))
            await until(socket, 'data-role="question-asker"')
            await socket.send(json.dumps({"action": "question", "request_id": "e1", "answer": "accept",
                                          "field:name": "Ada"}))  # fmt: skip
            await until(socket, 'data-turn-state="idle"')
        return session_id

    session_id = asyncio.run(scenario())
    answers = [m["result"] for m in first.received() if "result" in m and "outcome" in (m.get("result") or {})]
    assert answers == [{"outcome": {"outcome": "selected", "optionId": "allow"}}]
    before = thread_html(session_page(first, session_id))
    # The permission is on the child's card, inside the Task's card; the question says which child asks.
    marks = ('data-session-id="child-1"', 'data-tool-call-id="child-edit"', "You chose: <strong>Allow</strong>")
    assert between(before, 'data-tool-call-id="task-1"', *marks, 'permission: {"outcome"', 'data-role="subagent-moved"')
    assert "Asked by the subagent Explorer &lt;b&gt;" in before
    asyncio.run(asyncio.sleep(0.3))
    stop(first, signal.SIGKILL)
    second = start_server(process=True, agent=AGENT, workspace=tmp_path / "project", **env)
    assert thread_html(session_page(second, session_id)) == before


@pytest.mark.process
def test_a_child_at_work_when_the_server_died_shows_its_state_unknown_after_a_restart(
    start_server: ServerFactory, tmp_path: Path
) -> None:
    env = {"WEBCLIENT_DATA_DIR": str(tmp_path / "data")}
    first = start_server(process=True, agent=AGENT, workspace=tmp_path / "project", **env)

    async def scenario() -> str:
        async with ready_page(first) as (socket, nonce, session_id):
            await until(socket, 'data-agent-state="ready"')
            await socket.send(json.dumps({"action": "prompt", "prompt": "wait", "nonce": nonce}))
            await until(socket, "Grandchild words")
        return session_id

    session_id = asyncio.run(scenario())
    asyncio.run(asyncio.sleep(0.5))
    stop(first, signal.SIGKILL)
    second = start_server(process=True, agent=AGENT, workspace=tmp_path / "project", **env)
    thread = thread_html(session_page(second, session_id))
    assert between(thread, 'data-session-id="child-1"', 'data-role="subagent-state">Unknown<', "Grandchild words")
    assert 'data-role="subagent-state">Working' not in thread and 'data-action="stop-subagent"' not in thread
    stop(second, signal.SIGTERM)
    third = start_server(process=True, agent=AGENT, workspace=tmp_path / "project", **env)
    assert thread_html(session_page(third, session_id)) == thread  # and so at every later rebuild
