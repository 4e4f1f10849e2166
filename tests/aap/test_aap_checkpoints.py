"""Checkpoints with a remote agent (AAP): the snapshot before each prompt is the protocol's no more than the turn is,
and Edit and resend opens a new remote session (AAP has no fork), in process against the demo AAP server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.aap_servers import demo_aap_server
from tests.support.sessions import started
from tests.support.waiting import until
from webclient.aap.agent import AapAgent
from webclient.session.agent_entry import AgentEntry
from webclient.session.agent_spec import AgentSpec
from webclient.session.core import Session
from webclient.viewmodel.entries import MessageEntry
from webclient.workspace.checkpoints import CheckpointStore

pytestmark = pytest.mark.asyncio


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    with demo_aap_server() as url:
        yield url


def messages(session: Session, kind: str) -> list[MessageEntry]:
    return [e for e in session.thread if isinstance(e, MessageEntry) and e.kind == kind]


async def test_a_remote_session_restores_and_resends_in_a_new_remote_session(server_url: str, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "README.md").write_text("# Sample project\n")
    session = Session(AgentSpec(AgentEntry("agent", [], url=server_url), work), AapAgent)
    session.checkpoints.store = CheckpointStore(tmp_path / "data" / "s.git", work, 1024 * 1024)
    async with started(session):
        await until(lambda: session.lifecycle.ready)
        first_session = session.agent.known_session_id
        for number, text in enumerate(("hello", "hello again"), 1):
            (work / f"made-{number}.txt").write_text(text)  # what changed before each prompt
            assert session.submit_prompt(text, f"n{number}")
            await until(
                lambda n=number: session.turns.turn_state == "idle" and len(messages(session, "agent-message")) == n
            )
        first, second = (entry.seq for entry in messages(session, "user-message"))
        assert set(session.checkpoints.by_entry) == {first, second}
        (work / "made-1.txt").write_text("changed since")
        (work / "made-3.txt").write_text("made since")
        assert await session.checkpoints.resend(second, "hello there", "n3")
        await until(lambda: session.turns.turn_state == "idle" and len(messages(session, "agent-message")) == 3)
        assert sorted(p.name for p in work.iterdir()) == ["README.md", "made-1.txt", "made-2.txt"]
        assert (work / "made-1.txt").read_text() == "hello"
        assert session.agent.known_session_id not in (None, first_session)
        assert messages(session, "user-message")[-1].text == "hello there"
