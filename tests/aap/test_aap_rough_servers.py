"""The AAP adapter against a server that misbehaves as real ones do (``tests/agents/aap_misbehaving.py``, its own
process): what the person sees, and what the server got."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from tests.support.aap_servers import aap_server
from tests.support.servers import AGENTS
from tests.support.sessions import started
from tests.support.waiting import until
from webclient.aap.agent import AapAgent
from webclient.aap.client import AapClient
from webclient.aap.sse import TooBig
from webclient.session.agent_entry import AgentEntry
from webclient.session.agent_spec import AgentSpec, RemoteLimits
from webclient.session.core import Session
from webclient.viewmodel.entries import MessageEntry, Notice, ToolCall

pytestmark = pytest.mark.asyncio


@pytest.fixture
def rough(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    record = tmp_path / "received.jsonl"
    with aap_server([sys.executable, str(AGENTS / "aap_misbehaving.py")], RECORD_FILE=str(record)) as url:
        yield url, record


@contextlib.asynccontextmanager
async def session_on(url: str, workspace: Path) -> AsyncIterator[Session]:
    (workspace / "notes.txt").write_text("remember the milk\n")
    session = Session(AgentSpec(AgentEntry("agent", [], url=url), workspace), AapAgent)
    async with started(session):
        await until(lambda: session.lifecycle.ready)
        yield session


def said(session: Session) -> str:
    return "".join(e.text for e in session.thread if isinstance(e, MessageEntry) and e.kind == "agent-message")


def notices(session: Session) -> list[str]:
    return [f"{e.title} {e.detail}" for e in session.thread if isinstance(e, Notice)]


async def test_a_stream_that_ends_without_turn_stop_still_gets_its_calls_answered(
    rough: tuple[str, Path], tmp_path: Path
) -> None:
    url, record = rough
    async with session_on(url, tmp_path) as session:
        assert session.submit_prompt("no-stop", "n1")
        await until(lambda: session.turns.turn_state == "idle" and "c-read said" in said(session))
        assert '"remember the milk\\n"' in said(session)
        resubmission = [json.loads(line) for line in record.read_text().splitlines()][-1]
        assert resubmission["messages"] == [{"role": "tool", "toolCallId": "c-read", "content": "remember the milk\n"}]


async def test_a_doubled_error_stop_is_one_error(rough: tuple[str, Path], tmp_path: Path) -> None:
    async with session_on(rough[0], tmp_path) as session:
        assert session.submit_prompt("double-error", "n1")
        await until(lambda: session.turns.turn_state == "idle" and any("with an error" in n for n in notices(session)))
        assert sum("with an error" in n for n in notices(session)) == 1
        assert session.submit_prompt("again", "n2")  # the session stays usable
        await until(lambda: said(session).endswith("ok"))


async def test_a_granted_tool_without_a_streamed_result_takes_it_from_the_history(
    rough: tuple[str, Path], tmp_path: Path
) -> None:
    async with session_on(rough[0], tmp_path) as session:
        assert session.submit_prompt("granted-no-result", "n1")
        await until(lambda: session.turns.turn_state == "awaiting-permission")
        session.answers.permission(session.thread.pending_permissions[0].request_id, "allow")
        await until(lambda: session.turns.turn_state == "idle" and "c-deploy ran" in said(session))
        [card] = [e for e in session.thread if isinstance(e, ToolCall)]
        assert card.status == "completed"
        assert card.content[0].raw["text"] == '"deployed to preview"'  # type: ignore[union-attr]


async def test_an_http_error_shows_what_the_server_said(rough: tuple[str, Path], tmp_path: Path) -> None:
    async with session_on(rough[0], tmp_path) as session:
        assert session.submit_prompt("http-500", "n1")
        await until(lambda: session.turns.turn_state == "idle" and any("HTTP 500" in n for n in notices(session)))
        assert any("model exploded: upstream timeout" in n for n in notices(session))


async def test_a_listing_whose_pages_never_end_stops_at_the_turn_bound(tmp_path: Path) -> None:
    """``GET /sessions`` pages whose cursor never ends: all pages together are bounded as a turn's stream is (main
    read 1,000 pages, whatever their size, and held them all)."""
    pages = tmp_path / "pages"
    command = [sys.executable, str(AGENTS / "aap_misbehaving.py")]
    with aap_server(command, ROUGH_ANSWERS="endless-sessions", SENT_FILE=str(pages)) as url:
        client = AapClient(url, limits=RemoteLimits(turn_bytes=200_000))
        try:
            with pytest.raises(TooBig, match=r"GET /sessions: the AAP server's answer is over .*AAP_TURN_MB"):
                await client.sessions()
        finally:
            await client.close()
        assert int(pages.read_text()) < 60  # 200 KB of 5 KB pages, not 1,000 pages
