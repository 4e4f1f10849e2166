"""Limits per person: live sessions and running agents; a new session or a Resume past one is refused, saying why."""

from __future__ import annotations

import html
import json
import sys
import time
from pathlib import Path

from websockets.sync.client import connect

from tests.support.agent_env import new_session
from tests.support.people import TEAM, as_person, person_client
from tests.support.servers import AGENTS, Server, ServerFactory
from tests.support.urls import URLS, socket_at


def test_a_person_at_the_session_limit_is_told_why_and_others_are_not_limited(start_server: ServerFactory) -> None:
    server = start_server(WEBCLIENT_MAX_SESSIONS_PER_PERSON="2", **TEAM)
    alice, bob = person_client(server, "alice"), person_client(server, "bob")
    first = new_session(alice)
    new_session(alice)
    refused = alice.post(URLS.for_("new_session"), data={"workspace": ""})
    assert refused.status_code == 429
    said = html.unescape(refused.text)
    assert "You have 2 live sessions" in said and "WEBCLIENT_MAX_SESSIONS_PER_PERSON=2" in said
    assert 'data-role="refused"' in refused.text  # on the index, where the new session was asked for
    new_session(bob)  # his own count
    assert alice.post(URLS.for_("end_session", session_id=first)).status_code == 303
    new_session(alice)  # an ended session does not count


def test_a_person_at_the_agent_limit_is_told_why(start_server: ServerFactory) -> None:
    server = start_server(WEBCLIENT_MAX_AGENTS_PER_PERSON="1", **TEAM)
    alice = person_client(server, "alice")
    first = new_session(alice)
    refused = alice.post(URLS.for_("new_session"))
    assert refused.status_code == 429 and "WEBCLIENT_MAX_AGENTS_PER_PERSON=1" in html.unescape(refused.text)
    alice.post(URLS.for_("end_session", session_id=first))
    new_session(alice)


def frames_until(server: Server, session_id: str, mark: str, send: dict[str, str] | None = None) -> str:
    """Open the session's socket as alice, send ``send``, and read until a frame holds ``mark``."""
    url = socket_at(server.url, session_id)
    with connect(url, additional_headers={**as_person("alice"), "Origin": server.url}) as socket:
        socket.recv(timeout=10)
        if send is not None:
            socket.send(json.dumps(send))
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            frame = str(socket.recv(timeout=15))
            if mark in frame:
                return html.unescape(frame)
    raise AssertionError(f"no frame held {mark}")


def test_a_resume_past_the_limit_is_refused_the_same_way(start_server: ServerFactory) -> None:
    server = start_server(WEBCLIENT_MAX_SESSIONS_PER_PERSON="1", **TEAM)
    alice = person_client(server, "alice")
    ended = new_session(alice)
    alice.post(URLS.for_("end_session", session_id=ended))
    running = new_session(alice)
    frame = frames_until(server, ended, 'data-role="resume-limited"', {"action": "resume"})
    assert "You have 1 live session," in frame and "WEBCLIENT_MAX_SESSIONS_PER_PERSON=1" in frame
    assert alice.post(URLS.for_("end_session", session_id=running)).status_code == 303
    frames_until(server, ended, 'data-agent-state="ready"', {"action": "resume"})  # let through now


def test_a_retry_past_the_agent_limit_is_refused_the_same_way(start_server: ServerFactory, tmp_path: Path) -> None:
    faulty = f"{sys.executable} {AGENTS / 'faulty_agent.py'}"
    env = {"FAULT": "no-initialize", "FAULT_ONCE_FILE": str(tmp_path / "once"), "WEBCLIENT_START_TIMEOUT": "1"}
    server = start_server(agent=faulty, WEBCLIENT_MAX_AGENTS_PER_PERSON="1", **env, **TEAM)
    alice = person_client(server, "alice")
    failed = new_session(alice)
    frames_until(server, failed, 'data-role="agent-failure"')  # its agent never answered: not running
    running = new_session(alice)  # the fault was for the first agent only
    frame = frames_until(server, failed, 'data-role="retry-limited"', {"action": "retry"})
    assert "You have 1 agent running" in frame and "WEBCLIENT_MAX_AGENTS_PER_PERSON=1" in frame
    assert alice.post(URLS.for_("end_session", session_id=running)).status_code == 303
    frames_until(server, failed, 'data-agent-state="ready"', {"action": "retry"})  # let through now


def test_a_sleeping_session_counts_as_live_but_its_agent_not_as_running(start_server: ServerFactory) -> None:
    """A session whose idle agent sleeps (`webclient.session.sleep`) is not ended: it counts against the session limit;
    its agent does not run, so it does not count against the agent limit."""
    sleepy = {"WEBCLIENT_AGENT_IDLE_MINUTES": "0.005", "WEBCLIENT_SLEEP_WITHOUT_RESUME": "*"}
    server = start_server(WEBCLIENT_MAX_SESSIONS_PER_PERSON="2", WEBCLIENT_MAX_AGENTS_PER_PERSON="1", **sleepy, **TEAM)
    alice = person_client(server, "alice")
    first = new_session(alice)
    deadline = time.monotonic() + 30
    while 'data-role="turn-state">Sleeping' not in alice.get(URLS.for_("session", session_id=first)).text:
        assert time.monotonic() < deadline, "the idle session never slept"
        time.sleep(0.1)
    new_session(alice)  # its agent sleeps: one more agent may run
    refused = alice.post(URLS.for_("new_session"), data={"workspace": ""})
    assert refused.status_code == 429 and "You have 2 live sessions" in html.unescape(refused.text)
