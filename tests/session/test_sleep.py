"""Agents that sleep: an agent with no turn, no open question and no page watching for ``WEBCLIENT_AGENT_IDLE_MINUTES``
is stopped and the session shows "Sleeping"; the next prompt, Resume or a page opened wakes it as Resume does
(``session/resume``, else ``session/load``), and a prompt typed meanwhile waits in the queue until the agent is up.
An agent that can take up no session sleeps only if the operator names it (``WEBCLIENT_SLEEP_WITHOUT_RESUME``).

In process: the real app, a real agent subprocess (``tests/agents/resumable_agent.py``, whose ``RESUME_MODE`` says
what it offers), its page's socket and the no-script prompt form. The idle time is a fraction of a second (the
setting takes fractions of minutes); what must not happen is looked for after several idle times have passed.
"""

from __future__ import annotations

import html
import re
import sys
import time
from pathlib import Path

from tests.support.live import AppFactory, InProcess, LiveSocket
from tests.support.servers import AGENTS, SCRIPTED_AGENT
from tests.support.urls import URLS
from webclient.session.core import Session

RESUMABLE = f"{sys.executable} {AGENTS / 'resumable_agent.py'}"
IDLE_MINUTES = "0.005"
"""0.3 s: the idle time of these tests."""
IDLE_SECONDS = float(IDLE_MINUTES) * 60


def start(start_app: AppFactory, tmp_path: Path, mode: str = "resume", agent: str = RESUMABLE, **env: str) -> InProcess:
    return start_app(
        agent=agent,
        RESUME_MODE=mode,
        SESSIONS_FILE=str(tmp_path / "agent-sessions.json"),
        WEBCLIENT_AGENT_IDLE_MINUTES=IDLE_MINUTES,
        **env,
    )


def session_of(app: InProcess, path: str) -> Session:
    session = app.client.app.state.sessions.get(path.rsplit("/", 1)[1])  # type: ignore[attr-defined]
    assert session is not None
    return session


def eventually(app: InProcess, path: str, state: str, seconds: float = 30) -> str:
    """The session's page once its header shows ``state`` (the turn state's word, or Sleeping)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        page = app.client.get(path).text
        pill = re.search(r'data-role="turn-state">(.*?)</span>', page, re.S)
        if pill is not None and pill.group(1).strip().startswith(state):
            return page
        time.sleep(0.05)
    raise AssertionError(f"the session never showed {state!r}")


def prompted(app: InProcess, path: str, text: str) -> None:
    """A prompt sent with the page's socket, answered, and the socket closed: nobody watches from now on."""
    with app.live(path) as live:
        live.prompt(text)
        answered(live, f"You said: {text}")


def answered(live: LiveSocket, mark: str, state: str = "idle") -> None:
    """Frames read until ``mark`` has come and the turn is in ``state`` (the two may come in one frame)."""
    seen = ""
    while not (mark in seen and re.findall(r'data-turn-state="([^"]*)"', seen)[-1:] == [state]):
        seen += live.frame()


def after_idle_times(times: int = 4) -> None:
    """Wait several idle times: long enough for an agent that may sleep to have slept."""
    time.sleep(times * IDLE_SECONDS)


def methods(app: InProcess) -> list[str]:
    return [str(message.get("method")) for message in app.received()]


def test_an_idle_agent_nobody_watches_sleeps_and_a_prompt_wakes_it_with_session_resume(
    start_app: AppFactory, tmp_path: Path
) -> None:
    app = start(start_app, tmp_path)
    path = app.new_session()
    prompted(app, path, "first prompt")
    page = eventually(app, path, "Sleeping")
    assert 'data-agent-state="stopped"' in page and "The agent sleeps" in page
    session = session_of(app, path)
    assert session.shown_state == "sleeping"
    index = app.client.get("/").text
    assert "Sleeping" in index  # the list of sessions says it too
    # A prompt (the form a page without script posts: no socket opens) wakes it, waits for it, and is answered.
    answered = app.client.post(
        URLS.for_("prompt", session_id=session.id), data={"prompt": "second prompt", "nonce": "n2"}
    )
    assert answered.status_code in (200, 303)
    page = eventually(app, path, "Ready")
    assert "I remember 1 earlier prompts. You said: second prompt" in page
    sent = methods(app)
    assert sent.count("initialize") == 2 and "session/resume" in sent and sent.count("session/new") == 1
    assert "The agent resumed its session" in page


def test_waking_takes_the_session_up_with_session_load_when_the_agent_only_loads(
    start_app: AppFactory, tmp_path: Path
) -> None:
    app = start(start_app, tmp_path, mode="load")
    path = app.new_session()
    prompted(app, path, "first prompt")
    eventually(app, path, "Sleeping")
    # Opening the page wakes it; a prompt typed while it starts waits in the queue and is sent once it is up.
    with app.live(path) as live:
        live.prompt("second prompt")
        live.until("I remember 1 earlier prompts. You said: second prompt")
    sent = methods(app)
    assert "session/load" in sent and sent.count("session/new") == 1
    page = app.client.get(path).text
    assert page.count("You said: first prompt") == 1  # what the agent replayed is not shown twice


def test_the_agent_does_not_sleep_while_a_page_watches(start_app: AppFactory, tmp_path: Path) -> None:
    app = start(start_app, tmp_path)
    path = app.new_session()
    with app.live(path) as live:
        live.prompt("first prompt")
        answered(live, "You said: first prompt")
        after_idle_times()
        assert session_of(app, path).lifecycle.ready
    eventually(app, path, "Sleeping")  # the page closed: now it sleeps


def test_the_agent_does_not_sleep_during_a_turn_or_with_a_question_open(start_app: AppFactory, tmp_path: Path) -> None:
    app = start(start_app, tmp_path, agent=SCRIPTED_AGENT, WEBCLIENT_SLEEP_WITHOUT_RESUME="*")
    path = app.new_session()
    session = session_of(app, path)
    with app.live(path) as live:
        live.prompt("slow")  # streams for up to 30 s, until it is stopped
        live.until("s1 ")
    after_idle_times()
    assert session.turns.turn_running and session.lifecycle.ready
    with app.live(path) as live:
        live.send("cancel")
        answered(live, "Stopped")
        live.prompt("permission")
        answered(live, "Allow once", "awaiting-permission")
    after_idle_times()
    assert session.turns.turn_state == "awaiting-permission" and session.lifecycle.ready
    # The question answered (the page's socket opens and closes), nothing keeps it awake.
    with app.live(path) as live:
        request_id = session.thread.pending_permissions[0].request_id
        live.send("permission", request_id=request_id, option_id="allow-once")
        answered(live, "answer: allow-once")
    page = eventually(app, path, "Sleeping")
    assert "answer: allow-once" in page


def test_an_agent_that_cannot_resume_does_not_sleep_unless_the_operator_says_so(
    start_app: AppFactory, tmp_path: Path
) -> None:
    app = start(start_app, tmp_path, mode="none")
    path = app.new_session()
    prompted(app, path, "first prompt")
    after_idle_times()
    session = session_of(app, path)
    assert session.lifecycle.ready and session.shown_state == "idle"


def test_an_agent_that_cannot_resume_sleeps_when_named_and_wakes_in_a_new_session_said(
    start_app: AppFactory, tmp_path: Path
) -> None:
    app = start(start_app, tmp_path, mode="none", WEBCLIENT_SLEEP_WITHOUT_RESUME="other, agent")
    path = app.new_session()
    prompted(app, path, "first prompt")
    eventually(app, path, "Sleeping")
    with app.live(path) as live:
        live.prompt("second prompt")
        live.until("I remember 0 earlier prompts. You said: second prompt")
    page = app.client.get(path).text
    assert "The agent starts a new session, without the earlier conversation" in page
    assert methods(app).count("session/new") == 2


def test_a_sleeping_session_is_on_record(start_app: AppFactory, tmp_path: Path) -> None:
    """The journal says it sleeps: the session rebuilt from the store (as after a restart) shows Sleeping again, and
    opening it wakes it."""
    app = start(start_app, tmp_path)
    path = app.new_session()
    prompted(app, path, "first prompt")
    eventually(app, path, "Sleeping")
    manager = app.client.app.state.sessions  # type: ignore[attr-defined]
    session = session_of(app, path)
    app.client.portal.call(session.recorder.flush)  # type: ignore[union-attr]
    del manager.sessions[session.id]  # forgotten, as one past the cap on ended sessions
    page = eventually(app, path, "Sleeping")
    assert "The agent sleeps" in page and "You said: first prompt" in page
    with app.live(path) as live:
        live.prompt("second prompt")
        live.until("I remember 1 earlier prompts. You said: second prompt")


def test_a_remote_agent_sleeps_and_wakes_taking_its_servers_session_up(start_app: AppFactory) -> None:
    """An AAP agent's server keeps its sessions: it may always sleep, and wakes with ``GET /sessions/:id``."""
    app = start_app(agent=None, WEBCLIENT_DEMO_REMOTE="on", WEBCLIENT_AGENT_IDLE_MINUTES=IDLE_MINUTES)
    created = app.client.post(URLS.for_("new_session"), data={"agent": "demo-remote"}, follow_redirects=False)
    assert created.status_code == 303
    path = str(created.headers["location"])
    with app.live(path) as live:
        live.prompt("hello")
        answered(live, "hello")
    eventually(app, path, "Sleeping")
    with app.live(path) as live:
        live.prompt("again")
        answered(live, "again")
    page = html.unescape(app.client.get(path).text)
    assert "The remote agent's session was taken up again" in page
    assert "The agent starts a new session" not in page


def test_a_prompt_sent_as_the_agent_falls_asleep_wakes_it_with_its_terminals(
    start_app: AppFactory, tmp_path: Path
) -> None:
    """Woken while its agent is still being stopped: the new agent starts once the old one is gone, and may run
    commands (the sleep's closing of the terminals does not outlast the wake)."""
    app = start_app(agent=SCRIPTED_AGENT, WEBCLIENT_AGENT_IDLE_MINUTES="0", WEBCLIENT_SLEEP_WITHOUT_RESUME="*")
    path = app.new_session()
    with app.live(path) as live:
        live.prompt("echo")
        answered(live, "echoed")
    session = session_of(app, path)

    def fall_asleep_and_prompt() -> None:  # in one step of the event loop: the sleep has not finished
        session.sleep.fall_asleep()
        assert session.sleeping
        session.submit_prompt("run 1", "n1")

    app.client.portal.call(fall_asleep_and_prompt)
    page = html.unescape(eventually(app, path, "Ready"))
    assert '"lines": 1' in page  # its command ran and said its line
    assert methods(app).count("initialize") == 2
