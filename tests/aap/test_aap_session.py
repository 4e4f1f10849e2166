"""A session driven in-process through the AAP adapter, against the demo AAP server in its own process: the
thread a person would see, the tools run in the workspace, and what the server received (its history)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.aap_servers import demo_aap_server
from tests.support.sessions import started
from tests.support.waiting import until
from webclient.aap.agent import AapAgent
from webclient.people.rules import Rule, RuleBook
from webclient.session.agent_entry import AgentEntry
from webclient.session.agent_spec import AgentSpec
from webclient.session.core import Session
from webclient.viewmodel.entries import MessageEntry, RuleNote, ToolCall

pytestmark = pytest.mark.asyncio


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    with demo_aap_server() as url:
        yield url


@contextlib.asynccontextmanager
async def aap_session(url: str, workspace: Path) -> AsyncIterator[Session]:
    (workspace / "README.md").write_text("# Sample project\nIt adds numbers.\n")
    session = Session(AgentSpec(AgentEntry("agent", [], url=url), workspace), AapAgent)
    async with started(session):
        await until(lambda: session.lifecycle.ready)
        yield session


def cards(session: Session) -> dict[str, ToolCall]:
    return {entry.raw.get("name") or "": entry for entry in session.thread if isinstance(entry, ToolCall)}


def said(session: Session) -> str:
    return "".join(e.text for e in session.thread if isinstance(e, MessageEntry) and e.kind == "agent-message")


async def test_a_greeting_streams_text_and_thinking(server_url: str, tmp_path: Path) -> None:
    async with aap_session(server_url, tmp_path) as session:
        assert session.lifecycle.agent_info["title"] == "AAP demo agent"
        assert session.submit_prompt("hello", "n1")
        await until(lambda: session.turns.turn_state == "idle" and "remote" in said(session))
        kinds = [e.kind for e in session.thread if isinstance(e, MessageEntry)]
        assert kinds == ["user-message", "thought", "agent-message"]


async def test_parallel_calls_are_answered_together_and_the_turn_goes_on(server_url: str, tmp_path: Path) -> None:
    async with aap_session(server_url, tmp_path) as session:
        for setting_id in ("enable:web_search", "trust:web_search", "enable:deploy_preview"):
            await until(lambda: session.controls.setting(setting_id) is not None)  # trust is offered once enabled
            session.set_setting(setting_id, "true")
            await until(lambda: getattr(session.controls.setting(setting_id), "current", False) is True)
        assert session.submit_prompt("tools", "n1")
        await until(lambda: session.turns.turn_state == "awaiting-permission")
        # Reading asks nobody: it runs while the question waits.
        await until(lambda: cards(session)["read_file"].status == "completed")
        shown = cards(session)
        assert "Sample project" in shown["read_file"].content[0].text  # type: ignore[union-attr]
        assert shown["web_search"].status == "completed"  # trusted: run inline by the server
        assert shown["internal_notes"].status == "completed"  # unexposed, shown all the same
        [question] = session.thread.pending_permissions
        assert shown["deploy_preview"].permission is question
        session.answers.permission(question.request_id, "deny")
        await until(lambda: session.turns.turn_state == "idle" and "came back" in said(session))
        assert "`read_file`: # Sample project It adds numbers." in said(session)
        assert "`deploy_preview`: Tool call denied" in said(session)
        assert cards(session)["deploy_preview"].status == "failed"
        async with httpx.AsyncClient() as http:
            session_id = session.agent.known_session_id
            history = (await http.get(f"{server_url}/sessions/{session_id}/history?type=full")).json()["history"][
                "full"
            ]
        # One re-submission answered every open call: the client's tool result is in the server's history.
        assert [m["role"] for m in history].count("user") == 1
        assert any(m.get("role") == "tool" and "Sample project" in str(m.get("content")) for m in history)


async def test_stop_ends_the_stream_and_the_session_goes_on(tmp_path: Path) -> None:
    with demo_aap_server(DEMO_AAP_DELAY="0.3") as slow_url:
        async with aap_session(slow_url, tmp_path) as session:
            assert session.submit_prompt("hello", "n1")
            await until(lambda: any(e.kind == "thought" for e in session.thread if isinstance(e, MessageEntry)))
            session.cancel()
            await until(lambda: session.turns.turn_state == "idle")
            assert "remote" not in said(session)  # the stream was cut before the answer
            assert session.submit_prompt("hello again", "n2")
            await until(lambda: "remote" in said(session), timeout=30)  # answered (the rest streams slowly)


async def test_tools_that_change_things_ask_first_and_a_command_runs_in_a_terminal(
    server_url: str, tmp_path: Path
) -> None:
    async with aap_session(server_url, tmp_path) as session:
        assert session.submit_prompt("change", "n1")
        await until(lambda: len(session.thread.pending_permissions) == 2, timeout=30)  # asked together, on their cards
        write, run = session.thread.pending_permissions
        assert [o.option_id for o in write.options] == ["allow", "allow-always", "deny"]
        # The command is allowed first, the write later: still the command runs after the write, in the agent's
        # order, and lists the file.
        session.answers.permission(run.request_id, "allow-always")
        await asyncio.sleep(0.5)
        session.answers.permission(write.request_id, "allow")
        await until(lambda: session.turns.turn_state == "idle" and "came back" in said(session), timeout=30)
        assert (tmp_path / "NOTES.md").read_text() == "# Notes\n\nLeft by the remote demo agent.\n"
        ran = cards(session)["run_command"]
        assert ran.status == "completed" and any(getattr(c, "terminal_id", None) for c in ran.content)
        assert "`run_command`: exit code 0 NOTES.md README.md" in said(session)
        # "Allow for this session": the next command runs without asking; the write asks again.
        assert session.submit_prompt("change", "n2")
        await until(lambda: len(session.thread.pending_permissions) == 1, timeout=30)
        [again] = session.thread.pending_permissions
        assert cards(session)["write_file"].permission is again
        session.answers.permission(again.request_id, "deny")
        await until(lambda: session.turns.turn_state == "idle" and said(session).count("came back") == 2, timeout=30)
        assert "`write_file`: The person did not let this tool run." in said(session)


async def test_rules_answer_a_remote_agents_questions(server_url: str, tmp_path: Path) -> None:
    async with aap_session(server_url, tmp_path) as session:
        session.owner = "alice"
        session.rules.book = RuleBook(
            [
                Rule(1, "alice", "allow", "edit", path_pattern="NOTES.md"),
                Rule(2, None, "deny", "execute", command_pattern="*"),
            ]
        )
        assert session.submit_prompt("change", "n1")
        await until(lambda: session.turns.turn_state == "idle" and "came back" in said(session), timeout=30)
        assert session.thread.pending_permissions == []  # never asked the person
        assert (tmp_path / "NOTES.md").read_text() == "# Notes\n\nLeft by the remote demo agent.\n"
        write, run = cards(session)["write_file"].permission, cards(session)["run_command"].permission
        assert write is not None and write.chosen == "allow" and write.rule == RuleNote(1, "allow", "edit NOTES.md")
        assert (
            run is not None and run.chosen == "deny" and run.rule == RuleNote(2, "deny", "execute `*`", everyone=True)
        )
        assert "`run_command`: The person did not let this tool run." in said(session)
