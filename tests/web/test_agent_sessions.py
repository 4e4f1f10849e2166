"""The agent's own sessions (``session/list``): listed on a page of their own, and continued here with the agent's
context (``session/resume``) or its history shown (``session/load``)."""

from __future__ import annotations

import asyncio
import functools
import json
import re
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
import websockets

from tests.support.people import TEAM, person_client
from tests.support.probes import children
from tests.support.restarts import drive, session_page, thread_html
from tests.support.servers import Server, ServerFactory
from tests.support.urls import URLS, socket_at
from tests.web.test_access import signed_in_cookie

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
        listing = http.get(URLS.for_("agent_sessions", agent=name))
        assert listing.status_code == 200
        assert listing.text.count("data-agent-session-id=") == 2
        assert "Fix the &lt;parser&gt;" in listing.text  # what the agent says is escaped
        form = {"csrf": re.search(r'name="csrf" value="([^"]+)"', listing.text).group(1)}  # type: ignore[union-attr]
        refused = http.post(
            URLS.for_("new_session"),
            data={**form, "agent": name, "continue": "agent-session-2", "workspace": str(elsewhere)},
        )
        assert refused.status_code == 400 and "is outside what the agent" in refused.text
        created = http.post(
            URLS.for_("new_session"),
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
        page = http.get(URLS.for_("agent_sessions", agent=agent_name(http)))
        assert page.status_code == 200 and 'data-role="cannot-list"' in page.text
        assert http.get(URLS.for_("agent_sessions", agent="no-such-agent")).status_code == 404


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
        assert http.post(URLS.for_("end_session", session_id=kept), data={"csrf": csrf}).status_code == 303
        assert http.post(URLS.for_("delete_session", session_id=gone), data={"csrf": csrf}).status_code == 303
        assert http.get(URLS.for_("session", session_id=gone)).status_code == 404
        index = http.get("/").text
    assert f'data-session-id="{kept}"' in index and f'data-session-id="{gone}"' not in index
    methods = [(m.get("method"), (m.get("params") or {}).get("sessionId")) for m in server.received()]
    assert ("session/close", "agent-session-1") in methods
    assert ("session/delete", "agent-session-2") in methods
    assert list(json.loads(sessions_file.read_text())) == ["agent-session-1"]


async def send_action(server: Server, session_id: str, action: dict[str, str]) -> None:
    url = socket_at(server.url, session_id)
    async with websockets.connect(url, additional_headers=server.headers) as socket:
        await socket.recv()
        await socket.send(json.dumps(action))
        await asyncio.sleep(0.2)


HELPERS = 1
"""The server's own child process besides agents: its reaper (`webclient.workspace.reaper`)."""


def starts(server: Server) -> int:
    """How many times the agent was started (each start's ``initialize``, from the agent's own record)."""
    return sum(m.get("method") == "initialize" for m in server.received())


def listing_server(start_server: ServerFactory, tmp_path: Path, **env: str) -> tuple[Server, str, str]:
    """A server whose agent lists one session of its own; its name and a signed-in browser's cookie."""
    sessions_file = tmp_path / "agent-sessions.json"
    server = start_server(agent=AGENT, RESUME_MODE="list", SESSIONS_FILE=str(sessions_file), **env)
    sessions_file.write_text(json.dumps({"own-1": {"cwd": str(server.workspace), "title": "Mine", "turns": []}}))
    with server.http() as http:
        name = agent_name(http)
    return server, name, signed_in_cookie(server)


@pytest.mark.process
def test_cross_site_gets_of_the_listing_start_no_agent(start_server: ServerFactory, tmp_path: Path) -> None:
    """The issue's attack: 40 cross-site GETs left 42 agent processes. Another site's link, image or frame (or a
    browser that says nothing of where a request comes from) gets a button to press, and starts nothing."""
    server, name, cookie = listing_server(functools.partial(start_server, process=True), tmp_path)
    foreign = [{"Sec-Fetch-Site": "cross-site"}, {"Sec-Fetch-Site": "same-site"}, {}]
    with httpx.Client(base_url=server.url, timeout=30) as browser:
        for number in range(40):
            answer = browser.get(
                URLS.for_("agent_sessions", agent=name), headers={"Cookie": cookie, **foreign[number % 3]}
            )
            assert answer.status_code == 200 and 'data-action="list-agent-sessions"' in answer.text
            assert "data-agent-session-id" not in answer.text
        time.sleep(0.5)
        assert starts(server) == 0 and len(children(server.process.pid)) == HELPERS
        # The button on that page lists them (a POST with the page's token, as the guard asks of every POST).
        csrf = re.search(r'name="csrf" value="([^"]+)"', answer.text)
        assert csrf is not None
        listed = browser.post(
            URLS.for_("agent_sessions", agent=name), data={"csrf": csrf.group(1)}, headers={"Cookie": cookie}
        )
        assert listed.status_code == 200 and 'data-agent-session-id="own-1"' in listed.text
        cross = browser.post(
            URLS.for_("agent_sessions", agent=name), headers={"Cookie": cookie, "Origin": "http://evil.example"}
        )
        assert cross.status_code == 403
    assert starts(server) == 1


@pytest.mark.process
def test_many_listings_by_one_person_run_one_agent_at_a_time(start_server: ServerFactory, tmp_path: Path) -> None:
    server, name, cookie = listing_server(functools.partial(start_server, process=True), tmp_path)
    seen: list[int] = []
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            seen.append(len(children(server.process.pid)))
            time.sleep(0.01)

    async def list_many() -> list[httpx.Response]:
        headers = {"Cookie": cookie, "Sec-Fetch-Site": "same-origin"}
        async with httpx.AsyncClient(base_url=server.url, headers=headers, timeout=60) as browser:
            return await asyncio.gather(*(browser.get(URLS.for_("agent_sessions", agent=name)) for _ in range(12)))

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        answers = asyncio.run(list_many())
    finally:
        done.set()
        watcher.join()
    assert all(a.status_code == 200 and 'data-agent-session-id="own-1"' in a.text for a in answers)
    assert max(seen) - HELPERS <= 1, f"agents running at once while listing: {max(seen) - HELPERS}"
    assert starts(server) < 12
    time.sleep(0.5)
    assert len(children(server.process.pid)) == HELPERS  # each listing's agent is stopped after it


@pytest.mark.process
def test_listing_past_the_agent_limit_is_refused_with_the_limit_named(
    start_server: ServerFactory, tmp_path: Path
) -> None:
    """A running session of one agent fills the limit of 1: listing another agent's sessions would start a second
    agent, and is refused; listing the running one's is asked of its agent."""
    sessions_file = tmp_path / "agent-sessions.json"
    sessions_file.write_text(json.dumps({"own-1": {"cwd": str(tmp_path), "title": "Mine", "turns": []}}))
    lister = json.dumps([str(Path(__file__).resolve().parents[1] / "agents" / "resumable_agent.py")])
    config = tmp_path / "agents.toml"
    config.write_text(
        "\n".join(
            f"""
            [agents.{agent}]
            command = {json.dumps(sys.executable)}
            args = {lister}
            env = {{ RESUME_MODE = "list", SESSIONS_FILE = {json.dumps(str(sessions_file))} }}
            workspace = {json.dumps(str(tmp_path))}
            """
            for agent in ("first", "second")
        )
    )
    server = start_server(process=True, WEBCLIENT_CONFIG=str(config), WEBCLIENT_MAX_AGENTS_PER_PERSON="1")
    agents_before = len(children(server.process.pid))
    with server.http() as http:
        assert http.post(URLS.for_("new_session"), data={"agent": "first"}).status_code == 303
        time.sleep(1)
        assert len(children(server.process.pid)) == agents_before + 1
        refused = http.get(URLS.for_("agent_sessions", agent="second"))
        assert refused.status_code == 429 and "WEBCLIENT_MAX_AGENTS_PER_PERSON=1" in refused.text
        assert len(children(server.process.pid)) == agents_before + 1
        # The running session's agent lists its own: no agent more, so within the limit.
        assert 'data-agent-session-id="own-1"' in http.get(URLS.for_("agent_sessions", agent="first")).text
        assert len(children(server.process.pid)) == agents_before + 1


def test_an_agent_lists_a_persons_sessions_from_their_own_folder(start_server: ServerFactory, tmp_path: Path) -> None:
    """With ``{person}`` in its workspace, the agent started to list works in the person's folder, as their sessions'
    agents do (on main it was started in ``…/{person}`` itself, which is no one's folder and does not exist)."""
    root = tmp_path / "projects"
    config = tmp_path / "agents.toml"
    config.write_text(
        f'[agents.resumable]\ncommand = "{sys.executable}"\nargs = ["{AGENT.split()[1]}"]\n'
        f'workspace = "{root}/{{person}}"\n'
        'env = { RESUME_MODE = "list", SESSIONS_FILE = "listed.json" }\n'  # relative: read in its folder
    )
    for name in ("alice", "bob"):
        (root / name).mkdir(parents=True)
        listed = {f"{name}-session": {"cwd": str(root / name), "title": f"{name}'s work", "turns": []}}
        (root / name / "listed.json").write_text(json.dumps(listed))
    server = start_server(agent=None, WEBCLIENT_CONFIG=str(config), **TEAM)
    for name, other in (("alice", "bob"), ("bob", "alice")):
        listing = person_client(server, name).get(
            URLS.for_("agent_sessions", agent="resumable"), headers={"Sec-Fetch-Site": "same-origin"}
        )
        assert listing.status_code == 200, listing.text
        assert f"{name}&#39;s work" in listing.text and f"{other}&#39;s work" not in listing.text


@pytest.mark.parametrize(("mode", "offered"), [("none", False), ("list", True)])
def test_its_own_sessions_are_offered_only_for_an_agent_that_said_it_lists_them(
    start_server: ServerFactory, tmp_path: Path, mode: str, offered: bool
) -> None:
    """Before the agent started here nothing is known and the link shows; once it answered ``initialize``, the
    index offers it only if it said ``sessionCapabilities.list``."""
    server = start_server(agent=AGENT, RESUME_MODE=mode, SESSIONS_FILE=str(tmp_path / "agent-sessions.json"))
    link = 'data-action="agent-sessions"'
    with server.http() as http:
        assert link in http.get("/").text
        assert http.post(URLS.for_("new_session")).status_code == 303
        server.wait_received(lambda m: m.get("method") == "session/new")
        assert (link in http.get("/").text) is offered


@pytest.mark.process
def test_what_an_agent_said_of_listing_is_remembered_across_a_restart(
    start_server: ServerFactory, tmp_path: Path
) -> None:
    """After a restart no session of the agent has started yet: the index still knows it lists none."""
    env = {"RESUME_MODE": "none", "SESSIONS_FILE": str(tmp_path / "agent-sessions.json")}
    data = {"WEBCLIENT_DATA_DIR": str(tmp_path / "data")}
    first = start_server(process=True, agent=AGENT, workspace=tmp_path / "project", **env, **data)
    with first.http() as http:
        assert http.post(URLS.for_("new_session")).status_code == 303
        first.wait_received(lambda m: m.get("method") == "session/new")
        assert 'data-action="agent-sessions"' not in http.get("/").text
    first.process.terminate()
    first.process.wait(timeout=15)
    again = start_server(process=True, agent=AGENT, workspace=tmp_path / "project", **env, **data)
    with again.http() as http:
        assert 'data-action="agent-sessions"' not in http.get("/").text
