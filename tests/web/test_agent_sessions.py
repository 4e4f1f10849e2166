"""The agent's own sessions (``session/list``): listed on a page of their own, and continued here with the agent's
context (``session/resume``) or its history shown (``session/load``)."""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path

import httpx
import pytest

from tests.support.restarts import drive, session_page, thread_html
from tests.support.servers import ServerFactory

AGENT = f"{sys.executable} {Path(__file__).resolve().parents[1] / 'agents' / 'resumable_agent.py'}"


def agent_name(http: httpx.Client) -> str:
    found = re.search(r'data-action="new-session" data-agent="([^"]+)"', http.get("/").text)
    assert found is not None
    return found.group(1)


@pytest.mark.parametrize("mode", ["list", "list-load"])
def test_one_of_the_agents_own_sessions_is_continued_here(
    start_server: ServerFactory, tmp_path: Path, mode: str
) -> None:
    sessions_file = tmp_path / "agent-sessions.json"
    server = start_server(agent=AGENT, RESUME_MODE=mode, SESSIONS_FILE=str(sessions_file))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    sessions_file.write_text(
        json.dumps(
            {
                "agent-session-1": {
                    "cwd": str(server.workspace),
                    "title": "Fix the <parser>",
                    "turns": [["old", "yes"]],
                },
                "agent-session-2": {"cwd": str(elsewhere), "title": None, "turns": []},
            }
        )
    )
    with server.http() as http:
        name = agent_name(http)
        listing = http.get(f"/agents/{name}/sessions")
        assert listing.status_code == 200
        assert listing.text.count("data-agent-session-id=") == 2
        assert "Fix the &lt;parser&gt;" in listing.text  # what the agent says is escaped
        form = {"csrf": re.search(r'name="csrf" value="([^"]+)"', listing.text).group(1)}  # type: ignore[union-attr]
        refused = http.post(
            "/sessions", data={**form, "agent": name, "continue": "agent-session-2", "workspace": str(elsewhere)}
        )
        assert refused.status_code == 400 and "is outside what the agent" in refused.text
        created = http.post(
            "/sessions",
            data={
                **form,
                "agent": name,
                "continue": "agent-session-1",
                "workspace": str(server.workspace),
                "title": "Fix the <parser>",
            },
        )
        assert created.status_code == 303
        session_id = created.headers["location"].rsplit("/", 1)[1]
    asyncio.run(drive(server, ["new prompt"], session_id=session_id, resume=False))
    thread = thread_html(session_page(server, session_id))
    method = "session/resume" if mode == "list" else "session/load"
    reattached = next(m for m in server.received() if m.get("method") == method)
    assert reattached["params"]["sessionId"] == "agent-session-1"
    assert "I remember 1 earlier prompts. You said: new prompt" in thread
    # session/load shows the agent's history, which this page had never shown; session/resume has none to show.
    assert thread.count("yes") == (1 if mode == "list-load" else 0)
    assert "Fix the &lt;parser&gt;" in session_page(server, session_id)


def test_an_agent_that_cannot_list_says_so(start_server: ServerFactory, tmp_path: Path) -> None:
    server = start_server(agent=AGENT, RESUME_MODE="resume", SESSIONS_FILE=str(tmp_path / "s.json"))
    with server.http() as http:
        page = http.get(f"/agents/{agent_name(http)}/sessions")
        assert page.status_code == 200 and 'data-role="cannot-list"' in page.text
        assert http.get("/agents/no-such-agent/sessions").status_code == 404
