"""After a restart, nothing shown is lost: a server stopped (TERM) or killed (kill -9) and started again on the same
store shows each session at the same URL exactly as it was, rebuilt from its journal, on both databases."""

from __future__ import annotations

import asyncio
import functools
import html
import json
import re
import signal
from pathlib import Path

import httpx
import pytest
import websockets

from tests.support.servers import Server, ServerFactory, stop_server

PERMISSION_ASKED = "data-option-id"


def store_env(database_url: str, tmp_path: Path) -> dict[str, str]:
    """The same store for every server of a test: a data folder that outlives them, or the PostgreSQL database."""
    if database_url.startswith("sqlite"):
        return {"WEBCLIENT_DATA_DIR": str(tmp_path / "data")}
    return {"WEBCLIENT_DATABASE_URL": database_url}


def thread_html(page: str) -> str:
    """The session page's thread: the ``<section id="thread">`` element, whole."""
    start = page.index('<section id="thread"')
    depth, at = 0, start
    for tag in re.finditer(r"<(/?)section\b", page[start:]):
        depth += -1 if tag.group(1) else 1
        if depth == 0:
            at = start + tag.end()
            break
    return page[start : page.index(">", at) + 1]


def session_page(server: Server, session_id: str) -> str:
    with httpx.Client(base_url=server.url, headers=server.headers, timeout=30) as http:
        response = http.get(f"/sessions/{session_id}")
    assert response.status_code == 200, response.text[:500]
    return response.text


async def drive(server: Server, prompts: list[str], *, leave_asking: bool = False) -> str:
    """A new demo session that runs ``prompts`` one after the other over its page's socket, allowing every
    question; ``leave_asking``: the last prompt's question is left open. Returns the session's id."""
    async with httpx.AsyncClient(base_url=server.url, headers=server.headers) as http:
        location = (await http.post("/sessions")).headers["location"]
    connect = functools.partial(websockets.connect, additional_headers=server.headers, max_size=None)
    async with connect(server.url.replace("http", "ws") + location + "/ws") as socket:
        frame = str(await socket.recv())
        nonce = re.search(r'id="prompt-nonce" value="([^"]+)"', frame)
        assert nonce is not None
        while 'data-agent-state="ready"' not in frame:
            frame = str(await socket.recv())
        for number, text in enumerate(prompts):
            await socket.send(json.dumps({"action": "prompt", "prompt": text, "nonce": f"{nonce.group(1)}-{number}"}))
            last = number == len(prompts) - 1
            async with asyncio.timeout(60):
                while True:
                    frame = html.unescape(str(await socket.recv()))
                    if PERMISSION_ASKED in frame and 'data-state="pending"' in frame:
                        if last and leave_asking:
                            return location.rsplit("/", 1)[1]
                        asked = re.search(r'"option_id": "([^"]+)", "request_id": "([^"]+)"', frame)
                        assert asked is not None
                        answer = {"action": "permission", "request_id": asked.group(2), "option_id": asked.group(1)}
                        await socket.send(json.dumps(answer))
                    if 'data-turn-state="idle"' in frame:
                        break
    return location.rsplit("/", 1)[1]


def stop(server: Server, how: signal.Signals) -> None:
    """Stop the server: TERM (a clean stop) or KILL (as if it died); then let go of what the test holds of it."""
    server.process.send_signal(how)
    server.process.wait(timeout=30)
    stop_server(server)


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL], ids=["term", "kill"])
def test_a_session_reopens_after_a_restart_exactly_as_it_was(
    start_server: ServerFactory, database_url: str, tmp_path: Path, how: signal.Signals
) -> None:
    env = store_env(database_url, tmp_path)
    first = start_server(agent=None, **env)
    session_id = asyncio.run(drive(first, ["markdown", "tour", "plan"]))
    before = session_page(first, session_id)
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
    with httpx.Client(base_url=second.url, headers=second.headers) as http:
        assert http.get("/sessions/not-a-session").status_code == 404


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL], ids=["term", "kill"])
def test_a_turn_that_ran_when_the_server_stopped_shows_as_interrupted(
    start_server: ServerFactory, database_url: str, tmp_path: Path, how: signal.Signals
) -> None:
    env = store_env(database_url, tmp_path)
    first = start_server(agent=None, **env)
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
    with httpx.Client(base_url=server.url, headers=server.headers) as http:
        assert http.post(f"/sessions/{first}/end").status_code == 303
        ended = thread_html(http.get(f"/sessions/{first}").text)
        assert http.post(f"/sessions/{second}/end").status_code == 303  # the first is forgotten now
    assert thread_html(before) == ended
    rebuilt = session_page(server, first)
    assert thread_html(rebuilt) == ended
    assert "You ended this session." in rebuilt and 'data-action="resume"' in rebuilt
