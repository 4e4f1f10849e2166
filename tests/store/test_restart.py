"""After a restart, nothing shown is lost: a server stopped (TERM) or killed (kill -9) and started again on the same
store shows each session at the same URL exactly as it was, rebuilt from its journal, on both databases."""

from __future__ import annotations

import asyncio
import contextlib
import re
import signal
import sqlite3
import time
from pathlib import Path

import httpx
import pytest

from tests.support.restarts import drive, send_resume, session_page, stop, store_env, thread_html
from tests.support.servers import ServerFactory
from tests.support.urls import URLS, at


@pytest.mark.process
@pytest.mark.parametrize(
    ("database_url", "how"),
    # On PostgreSQL once: the store's own tests (tests/store) hold where the two databases differ.
    [("sqlite", signal.SIGTERM), ("sqlite", signal.SIGKILL), ("postgresql", signal.SIGKILL)],
    ids=["sqlite-term", "sqlite-kill", "postgresql-kill"],
    indirect=["database_url"],
)
def test_a_session_reopens_after_a_restart_exactly_as_it_was(
    start_server: ServerFactory, database_url: str, tmp_path: Path, how: signal.Signals
) -> None:
    env = store_env(database_url, tmp_path)
    first = start_server(agent=None, process=how is signal.SIGKILL, **env)
    session_id = asyncio.run(drive(first, ["markdown", "tour", "plan"]))
    before = session_page(first, session_id)
    with httpx.Client(base_url=first.url, headers=first.headers, timeout=30) as http:
        exported = http.get(URLS.for_("export", session_id=session_id)).text
    shown = thread_html(before)
    for part in ('class="entry tool-call', 'data-role="terminal"', 'data-role="plan"', "You chose:", "<table"):
        assert part in shown, part  # what the journal must bring back: cards, a terminal, a plan, an answer, Markdown
    if how is signal.SIGKILL:
        asyncio.run(asyncio.sleep(0.3))  # the journal's batches are written within 50 ms
    stop(first, how)

    second = start_server(agent=None, **env)
    after = session_page(second, session_id)
    assert thread_html(after) == thread_html(before)
    assert 'data-turn-state="ended"' in after
    assert 'data-action="resume"' in after
    with httpx.Client(base_url=second.url, headers=second.headers, timeout=30) as http:
        assert http.get(URLS.for_("session", session_id="not-a-session")).status_code == 404
        # The export and the protocol log come from the journal too.
        assert http.get(URLS.for_("export", session_id=session_id)).text == exported
        log = http.get(URLS.for_("protocol_log", session_id=session_id)).text
        assert "session/request_permission" in log and "session/prompt" in log


@pytest.mark.process
@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL], ids=["term", "kill"])
def test_a_turn_that_ran_when_the_server_stopped_shows_as_interrupted(
    start_server: ServerFactory, database_url: str, tmp_path: Path, how: signal.Signals
) -> None:
    env = store_env(database_url, tmp_path)
    first = start_server(agent=None, process=how is signal.SIGKILL, **env)
    session_id = asyncio.run(drive(first, ["markdown", "edit"], leave_asking=True))
    asyncio.run(asyncio.sleep(0.3))
    stop(first, how)

    second = start_server(agent=None, **env)
    page = session_page(second, session_id)
    assert "Not answered: the server restarted." in page
    assert 'data-state="interrupted"' in page
    assert "The server restarted during this turn" in page
    assert 'data-turn-state="ended"' in page and 'data-action="resume"' in page
    stop(second, signal.SIGTERM)

    # Marked once: the next restart shows the same page, not a second notice.
    third = start_server(agent=None, **env)
    again = session_page(third, session_id)
    assert thread_html(again) == thread_html(page)
    assert again.count("The server restarted during this turn") == 1


def test_an_ended_session_the_server_forgot_opens_again_from_the_store(
    start_server: ServerFactory, tmp_path: Path
) -> None:
    server = start_server(agent=None, WEBCLIENT_MAX_ENDED_SESSIONS="1", WEBCLIENT_DATA_DIR=str(tmp_path / "data"))
    first, second = asyncio.run(drive(server, ["markdown"])), asyncio.run(drive(server, ["plan"]))
    before = session_page(server, first)
    with httpx.Client(base_url=server.url, headers=server.headers, timeout=30) as http:
        assert http.post(URLS.for_("end_session", session_id=first)).status_code == 303
        ended = thread_html(http.get(URLS.for_("session", session_id=first)).text)
        assert http.post(URLS.for_("end_session", session_id=second)).status_code == 303  # the first is forgotten now
    assert thread_html(before) == ended
    rebuilt = session_page(server, first)
    assert thread_html(rebuilt) == ended
    assert "You ended this session." in rebuilt and 'data-action="resume"' in rebuilt


@pytest.mark.process
def test_an_answer_the_agent_got_is_shown_given_after_the_server_died(
    start_server: ServerFactory, tmp_path: Path
) -> None:
    """The answer is stored before it is sent: killed the moment the agent has it, the server shows it given."""
    env = {"WEBCLIENT_DATA_DIR": str(tmp_path / "data")}
    first = start_server(process=True, **env)
    session_id = asyncio.run(drive(first, ["permission"], leave_asking=True, answer_last=True))
    deadline = time.monotonic() + 10
    while not any(m.get("result", {}).get("outcome") for m in first.received()):
        assert time.monotonic() < deadline, "the agent never got the answer"
        time.sleep(0.001)
    stop(first, signal.SIGKILL)

    second = start_server(process=True, **env)
    page = session_page(second, session_id)
    assert "You chose:" in page and "Not answered" not in page


@pytest.mark.process
def test_prompts_queued_when_the_server_died_wait_after_the_restart(
    start_server: ServerFactory, tmp_path: Path
) -> None:
    env = {"WEBCLIENT_DATA_DIR": str(tmp_path / "data")}
    first = start_server(process=True, agent=None, **env)
    session_id = asyncio.run(drive(first, ["edit"], leave_asking=True, then_queue=["first later", "second later"]))
    asyncio.run(asyncio.sleep(0.3))
    stop(first, signal.SIGKILL)

    second = start_server(agent=None, **env)
    page = session_page(second, session_id)
    assert page.count('data-role="queued"') == 2
    assert ">first later</textarea>" in page and ">second later</textarea>" in page
    assert "Queued before the server restarted" in page


def test_a_session_whose_agent_left_the_catalogue_is_shown_but_not_resumed(
    start_server: ServerFactory, tmp_path: Path
) -> None:
    env = {"WEBCLIENT_DATA_DIR": str(tmp_path / "data")}
    first = start_server(**env)  # the scripted agent, by --agent
    session_id = asyncio.run(drive(first, ["hello"]))
    before = thread_html(session_page(first, session_id))
    stop(first, signal.SIGTERM)

    second = start_server(agent=None, **env)  # the demo only
    page = session_page(second, session_id)
    assert thread_html(page) == before
    assert "no longer offers the agent" in page and 'data-action="resume"' not in page
    asyncio.run(send_resume(second, session_id))
    assert second.received() == []  # nothing was started


def test_a_session_whose_folder_the_agent_may_no_longer_use_is_not_resumed(
    start_server: ServerFactory, tmp_path: Path
) -> None:
    env = {"WEBCLIENT_DATA_DIR": str(tmp_path / "data")}
    first = start_server(workspace=tmp_path / "before", **env)
    session_id = asyncio.run(drive(first, ["hello"]))
    stop(first, signal.SIGTERM)

    second = start_server(workspace=tmp_path / "after", **env)  # the same agent, allowed another folder only
    page = session_page(second, session_id)
    assert "may no longer work in" in page and 'data-action="resume"' not in page
    asyncio.run(send_resume(second, session_id))
    assert second.received() == []


def test_a_new_data_folder_is_the_servers_alone(start_server: ServerFactory, tmp_path: Path) -> None:
    folder = tmp_path / "fresh" / "data"
    start_server(agent=None, WEBCLIENT_DATA_DIR=str(folder))
    assert folder.stat().st_mode & 0o077 == 0  # what every session said is in there


@pytest.mark.process
def test_files_the_agent_changed_on_disk_are_listed_in_changes_after_a_restart(
    start_server: ServerFactory, tmp_path: Path
) -> None:
    # Files read-only through the client: the demo agent writes the file itself, so only the Changes view sees it.
    env = {"WEBCLIENT_DATA_DIR": str(tmp_path / "data"), "WEBCLIENT_FILE_ACCESS": "read-only"}
    first = start_server(process=True, agent=None, **env)
    session_id = asyncio.run(drive(first, ["edit"]))
    deadline = time.monotonic() + 20
    while 'data-count="1"' not in session_page(first, session_id):
        assert time.monotonic() < deadline, "the first server never listed the change"
        time.sleep(0.1)
    with contextlib.closing(sqlite3.connect(tmp_path / "data" / "webclient.sqlite3")) as db:
        deadline = time.monotonic() + 20
        while not db.execute("SELECT count(*) FROM journal WHERE kind = 'original'").fetchone()[0]:
            assert time.monotonic() < deadline, "the file's original was never journalled"
            time.sleep(0.05)
    stop(first, signal.SIGKILL)

    second = start_server(agent=None, **env)
    deadline = time.monotonic() + 20
    while 'id="changes-count" class="count" data-count="1"' not in (page := session_page(second, session_id)):
        assert time.monotonic() < deadline, re.findall(r'<span id="changes-count"[^>]*>', page)
        time.sleep(0.1)
    changes = httpx.get(at(second.url, "changes", session_id=session_id), headers=second.headers, timeout=30)
    assert "calculator.py" in changes.text
