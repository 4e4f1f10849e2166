"""The agent's questions (elicitation) come back after a restart as they were: answered (the secret still not
shown), or, if open when the server died, "Not answered: the server restarted"."""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import sqlite3
import sys
from pathlib import Path

import httpx
import pytest

from tests.support.acp_schema import validate
from tests.support.restarts import ready_page, session_page, stop, thread_html, until
from tests.support.servers import Server, ServerFactory
from tests.support.urls import URLS

AGENT = f"{sys.executable} {Path(__file__).resolve().parents[1] / 'agents' / 'question_agent.py'}"
FIELDS = {"field:name": "calc", "field:token": "s3cret", "field:retries": "4", "field:style": "tabs"}


async def ask_and_answer(server: Server, answer: bool) -> str:
    """A session that prompts ``form`` and answers the question (or leaves it open); returns its id."""
    async with ready_page(server) as (socket, nonce, session_id):
        await until(socket, 'data-agent-state="ready"')
        await socket.send(json.dumps({"action": "prompt", "prompt": "form", "nonce": nonce}))
        await until(socket, 'data-role="question"')
        if answer:
            await socket.send(json.dumps({"action": "question", "request_id": "e1", "answer": "accept", **FIELDS}))
            await until(socket, 'data-turn-state="idle"')
    return session_id


@pytest.mark.process
def test_answered_and_open_questions_after_a_restart(start_server: ServerFactory, tmp_path: Path) -> None:
    env = {"WEBCLIENT_DATA_DIR": str(tmp_path / "data")}
    first = start_server(process=True, agent=AGENT, workspace=tmp_path / "project", **env)
    answered = asyncio.run(ask_and_answer(first, answer=True))
    left_open = asyncio.run(ask_and_answer(first, answer=False))
    before = thread_html(session_page(first, answered))
    card = before.split('data-role="question"', 1)[1].split("</article>", 1)[0]
    assert 'data-state="accepted"' in card and "calc" in card and "s3cret" not in card  # the agent says it; we don't
    with httpx.Client(base_url=first.url, headers=first.headers) as http:
        exported = http.get(URLS.for_("export", session_id=answered)).text
    asked = exported.split("**The agent asked:**", 1)[1].split("answer: ", 1)[0]  # up to the agent's own reply
    assert "Set up the \\<project\\>" in asked and "*Answer: accepted — Project \\<name\\>: calc; Retries: 4" in asked
    assert "s3cret" not in asked  # the secret stays out of the export's answer
    with contextlib.closing(sqlite3.connect(tmp_path / "data" / "webclient.sqlite3")) as db:
        sent = [
            body for (body,) in db.execute("SELECT body FROM journal WHERE kind = 'protocol' AND direction = 'out'")
        ]
    assert any('"token":"***"' in body.replace(" ", "") for body in sent)  # the agent got it; the record did not
    assert not any("s3cret" in body for body in sent)
    asyncio.run(asyncio.sleep(0.3))
    stop(first, signal.SIGKILL)

    second = start_server(process=True, agent=AGENT, workspace=tmp_path / "project", **env)
    assert thread_html(session_page(second, answered)) == before
    page = session_page(second, left_open)
    assert 'data-state="interrupted"' in page and "Not answered: the server restarted." in page


def test_a_form_answer_that_cannot_be_taken_says_why_and_a_question_is_answered_once(
    start_server: ServerFactory,
) -> None:
    server = start_server(agent=AGENT)

    async def scenario() -> None:
        async with ready_page(server) as (socket, nonce, _):
            await until(socket, 'data-agent-state="ready"')
            await socket.send(json.dumps({"action": "prompt", "prompt": "form", "nonce": nonce}))
            await until(socket, 'data-role="question"')
            wrong = {**FIELDS, "field:retries": "11"}
            await socket.send(json.dumps({"action": "question", "request_id": "e1", "answer": "accept", **wrong}))
            assert "“Retries” is out of range." in await until(socket, 'data-role="question-problem"')
            right = {"action": "question", "request_id": "e1", "answer": "accept", **FIELDS}
            await socket.send(json.dumps(right))
            await socket.send(json.dumps({**right, "answer": "decline"}))  # a second click, too late
            await until(socket, 'data-turn-state="idle"')

    asyncio.run(scenario())
    answers = [m for m in server.received() if "result" in m and "action" in (m.get("result") or {})]
    assert [a["result"]["action"] for a in answers] == ["accept"]
    assert answers[0]["result"]["content"]["retries"] == 4
    validate(answers[0]["result"], "CreateElicitationResponse")  # what the agent got is what ACP says
    [hello] = [m for m in server.received() if m.get("method") == "initialize"]
    validate(hello["params"], "InitializeRequest")
