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
import websockets

from tests.support.restarts import drive, session_page, thread_html
from tests.support.servers import Server, ServerFactory

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


def test_rename_end_and_delete_reach_an_agent_that_offers_them(start_server: ServerFactory, tmp_path: Path) -> None:
    sessions_file = tmp_path / "agent-sessions.json"
    server = start_server(agent=AGENT, RESUME_MODE="all", SESSIONS_FILE=str(sessions_file))
    kept = asyncio.run(drive(server, ["keep me"]))
    gone = asyncio.run(drive(server, ["delete me"]))
    asyncio.run(send_action(server, kept, {"action": "rename", "title": "  The   <kept> one  "}))
    titled = server.wait_received(lambda m: m.get("method") == "session/set_title")
    assert titled["params"] == {"sessionId": "agent-session-1", "title": "The <kept> one"}
    assert "The &lt;kept&gt; one" in session_page(server, kept)

    with server.http() as http:
        csrf = re.search(r'name="csrf" value="([^"]+)"', http.get("/").text).group(1)  # type: ignore[union-attr]
        assert http.post(f"/sessions/{kept}/end", data={"csrf": csrf}).status_code == 303
        assert http.post(f"/sessions/{gone}/delete", data={"csrf": csrf}).status_code == 303
        assert http.get(f"/sessions/{gone}").status_code == 404
        index = http.get("/").text
    assert f'data-session-id="{kept}"' in index and f'data-session-id="{gone}"' not in index
    methods = [(m.get("method"), (m.get("params") or {}).get("sessionId")) for m in server.received()]
    assert ("session/close", "agent-session-1") in methods
    assert ("session/delete", "agent-session-2") in methods
    assert list(json.loads(sessions_file.read_text())) == ["agent-session-1"]


async def send_action(server: Server, session_id: str, action: dict[str, str]) -> None:
    url = server.url.replace("http", "ws") + f"/sessions/{session_id}/ws"
    async with websockets.connect(url, additional_headers=server.headers) as socket:
        await socket.recv()
        await socket.send(json.dumps(action))
        await asyncio.sleep(0.2)
