"""The approval inbox on a real server (trusted-header mode) with real agents asking: a person sees the open questions
of their own sessions only (an admin all), answers one there and the agent gets it; the index links to it."""

from __future__ import annotations

import asyncio
import json
import re
import sys
import time
from pathlib import Path

import httpx

from tests.people.test_rules_server import answers, new_session, page_socket, prompt
from tests.support.people import TEAM, person_client
from tests.support.servers import Server, ServerFactory
from tests.support.urls import URLS

QUESTION_AGENT = f"{sys.executable} {Path(__file__).resolve().parents[1] / 'agents' / 'question_agent.py'}"


def leave_asking(server: Server, name: str, session_id: str, text: str) -> None:
    """Prompt ``text`` on ``name``'s page and leave once the question is shown (the agent keeps waiting)."""

    async def run() -> None:
        async with page_socket(server, name, session_id) as (socket, nonce):
            await prompt(socket, nonce, text, 'data-state="pending"')

    asyncio.run(run())


def inbox_items(client: httpx.Client) -> list[str]:
    return re.findall(
        r'<li class="inbox-item" data-key="([^"]+)"', client.get(URLS.for_("inbox"), params={"part": "list"}).text
    )


def test_the_inbox_shows_and_answers_a_persons_open_questions(start_server: ServerFactory) -> None:
    server = start_server(**TEAM)
    alice, bob, root = (
        person_client(server, "alice"),
        person_client(server, "bob"),
        person_client(server, "root", ["admins"]),
    )
    assert inbox_items(alice) == [] and "Nothing waits for you." in alice.get(URLS.for_("inbox")).text
    hers, his = new_session(alice), new_session(bob)
    leave_asking(server, "alice", hers, "ask edit src/a.py")
    leave_asking(server, "bob", his, "ask execute make")

    assert [key.split(":")[0] for key in inbox_items(alice)] == [hers]
    assert [key.split(":")[0] for key in inbox_items(bob)] == [his]
    assert sorted(key.split(":")[0] for key in inbox_items(root)) == sorted([hers, his])  # an admin sees all
    page = alice.get(URLS.for_("inbox")).text
    assert "edit src/a.py" in page and "make" not in re.sub(r"<script.*?</script>", "", page).split("inbox-list")[1]
    assert alice.get(URLS.for_("inbox"), params={"part": "count"}).text == "Inbox (1)"
    assert 'data-role="inbox-link"' in alice.get("/").text

    request_id = inbox_items(alice)[0].split(":")[1]
    # bob cannot answer alice's question from his inbox: nothing reaches her agent
    assert (
        bob.post(
            URLS.for_("inbox"), data={"session_id": hers, "request_id": request_id, "option_id": "allow-once"}
        ).status_code
        == 303
    )
    assert [key.split(":")[0] for key in inbox_items(alice)] == [hers]
    answered = alice.post(
        URLS.for_("inbox"), data={"session_id": hers, "request_id": request_id, "option_id": "reject-once"}
    )
    assert answered.status_code == 303 and answered.headers["location"] == URLS.for_("inbox")
    server.wait_received(lambda message: message.get("result", {}).get("outcome", {}).get("optionId") == "reject-once")
    assert answers(server) == [{"outcome": "selected", "optionId": "reject-once"}]
    assert inbox_items(alice) == [] and alice.get(URLS.for_("inbox"), params={"part": "count"}).text == "Inbox"
    deadline = time.monotonic() + 10  # the answer is on record as hers (the audit log is written with the journal)
    while '"action": "permission"' not in (
        audit := alice.get(URLS.for_("session_audit", session_id=hers), params={"format": "jsonl"}).text
    ):
        assert time.monotonic() < deadline, audit
        time.sleep(0.1)
    permission = next(json.loads(line) for line in audit.splitlines() if '"action": "permission"' in line)
    assert (permission["person"], permission["detail"].get("option_id")) == ("alice", "reject-once"), permission
    assert [key.split(":")[0] for key in inbox_items(bob)] == [his]


def test_the_inbox_declines_an_agents_question(start_server: ServerFactory) -> None:
    server = start_server(agent=QUESTION_AGENT, **TEAM)
    alice = person_client(server, "alice")
    session_id = new_session(alice)

    async def ask() -> None:
        async with page_socket(server, "alice", session_id) as (socket, nonce):
            await prompt(socket, nonce, "form", 'data-role="question"')

    asyncio.run(ask())
    page = alice.get(URLS.for_("inbox")).text
    assert 'data-kind="question"' in page and 'data-action="answer-on-page"' in page
    request_id = inbox_items(alice)[0].split(":")[1]
    alice.post(URLS.for_("inbox"), data={"session_id": session_id, "request_id": request_id, "answer": "decline"})
    server.wait_received(lambda message: message.get("result", {}).get("action") == "decline")
    assert inbox_items(alice) == []
