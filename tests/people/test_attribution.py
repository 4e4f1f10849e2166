"""Who did what: a prompt, a permission answer, a question's answer, a mode change and a Stop carry the person who
did them, on the card and after a restart; token mode names no one."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import signal
import sqlite3
import sys
from pathlib import Path

import httpx
import websockets

from tests.support.people import TEAM, as_person
from tests.support.restarts import stop, thread_html, until
from tests.support.servers import AGENTS, Server, ServerFactory, migrated_store
from tests.support.team import asked, new_session, page_socket, prompt, ready
from tests.support.urls import URLS, at, socket_at
from webclient.people.person import LOCAL

ADMINS = ["admins"]
CONTROLS_AGENT = f"{sys.executable} {AGENTS / 'controls_agent.py'}"
QUESTION_AGENT = f"{sys.executable} {AGENTS / 'question_agent.py'}"


def page_of(server: Server, session_id: str, name: str) -> str:
    with httpx.Client(base_url=server.url, headers=as_person(name, ADMINS), timeout=30) as http:
        response = http.get(URLS.for_("session", session_id=session_id))
    assert response.status_code == 200, response.text[:300]
    return response.text


def audit_rows(data: Path) -> list[tuple[str, str, str]]:
    with contextlib.closing(sqlite3.connect(data / "webclient.sqlite3")) as db:
        return db.execute("SELECT person_id, action, detail FROM audit ORDER BY id").fetchall()


def share_with(server: Server, session_id: str, name: str) -> None:
    headers = {**as_person("alice"), "Origin": server.url}
    data = {"kind": "person", "grantee": name, "role": "drive"}
    assert httpx.post(at(server.url, "add_share", session_id=session_id), headers=headers, data=data).status_code == 303


async def alice_prompts_and_bob_allows(server: Server, session_id: str) -> None:
    async with page_socket(server, session_id, "alice") as (alice, nonce):
        await ready(alice)
        async with page_socket(server, session_id, "bob") as (bob, _):
            await prompt(alice, "permission", nonce)
            option, request = await asked(bob)
            await bob.send(json.dumps({"action": "permission", "request_id": request, "option_id": option}))
            frame = await until(alice, 'data-role="by-name">bob<')
            assert "Allow once</strong>" in frame
            if "answer: allow-once" not in frame:
                await until(alice, "answer: allow-once")


def test_the_permission_card_names_who_answered_and_the_prompt_who_sent_it_after_a_restart_too(
    start_server: ServerFactory, tmp_path: Path
) -> None:
    data = migrated_store(tmp_path / "data")  # a store already migrated: these tests are not of migrating
    first = start_server(**TEAM, WEBCLIENT_DATA_DIR=str(data))
    session_id = new_session(first, "alice")
    share_with(first, session_id, "bob")  # two people: the cards name them
    asyncio.run(alice_prompts_and_bob_allows(first, session_id))
    before = thread_html(page_of(first, session_id, "alice"))
    assert 'data-role="sent-by">alice <time' in before
    assert 'data-role="by-name">bob</span>' in before
    assert "You chose" not in before
    stop(first, signal.SIGTERM)

    second = start_server(**TEAM, WEBCLIENT_DATA_DIR=str(data))
    assert thread_html(page_of(second, session_id, "bob")) == before
    rows = audit_rows(data)
    expected = [("alice", "share"), ("alice", "prompt"), ("bob", "permission")]
    assert [(who, action) for who, action, _ in rows] == expected
    assert json.loads(rows[1][2])["text"] == "permission"


async def mode_and_stop(server: Server, session_id: str) -> None:
    async with page_socket(server, session_id, "carol", ADMINS) as (carol, nonce):
        await ready(carol)
        await carol.send(json.dumps({"action": "set_mode", "mode_id": "nothing-of-the-agents"}))
        await carol.send(json.dumps({"action": "set_mode", "mode_id": "code"}))
        await until(carol, "carol set the mode to Code")
        await prompt(carol, "wait 20", nonce)
        await until(carol, 'data-turn-state="running"')
        await carol.send(json.dumps({"action": "cancel"}))
        await until(carol, "carol pressed Stop")


def test_a_mode_change_and_a_stop_say_who_did_them(start_server: ServerFactory, tmp_path: Path) -> None:
    data = migrated_store(tmp_path / "data")  # a store already migrated: these tests are not of migrating
    server = start_server(CONTROLS_AGENT, **TEAM, WEBCLIENT_DATA_DIR=str(data))
    session_id = new_session(server, "carol", ADMINS)
    asyncio.run(mode_and_stop(server, session_id))
    asyncio.run(asyncio.sleep(0.3))
    assert [action for _, action, _ in audit_rows(data)] == ["mode", "mode", "prompt", "stop"]
    assert "nothing-of-the-agents" not in page_of(server, session_id, "carol")


async def token_mode_prompt(server: Server) -> str:
    async with httpx.AsyncClient(base_url=server.url, headers=server.headers) as http:
        session_id = str((await http.post(URLS.for_("new_session"))).headers["location"]).rsplit("/", 1)[1]
    url = socket_at(server.url, session_id)
    async with websockets.connect(url, additional_headers=server.headers) as socket:
        await ready(socket)
        await prompt(socket, "permission", "n1")
        option, request = await asked(socket)
        await socket.send(json.dumps({"action": "permission", "request_id": request, "option_id": option}))
        await until(socket, "answer: allow-once")
    return session_id


def test_token_mode_names_no_one_but_keeps_the_record(start_server: ServerFactory, tmp_path: Path) -> None:
    data = migrated_store(tmp_path / "data")  # a store already migrated: these tests are not of migrating
    server = start_server(WEBCLIENT_DATA_DIR=str(data))
    session_id = asyncio.run(token_mode_prompt(server))
    with httpx.Client(base_url=server.url, headers=server.headers) as http:
        page = http.get(URLS.for_("session", session_id=session_id)).text
    assert 'data-role="by' not in page and 'data-role="sent-by"' not in page and "You chose:" in page
    assert [(who, action) for who, action, _ in audit_rows(data)] == [
        (LOCAL.id, "prompt"),
        (LOCAL.id, "permission"),
    ]


async def bob_declines_alices_question(server: Server, session_id: str) -> None:
    async with page_socket(server, session_id, "alice", ADMINS) as (alice, nonce):
        await ready(alice)
        async with page_socket(server, session_id, "bob", ADMINS) as (bob, _):
            await prompt(alice, "form", nonce)
            frame = await until(bob, 'data-role="question-form"')
            request = re.search(r'name="request_id" value="([^"]+)"', frame)
            assert request is not None
            await bob.send(json.dumps({"action": "question", "request_id": request.group(1), "answer": "decline"}))
            await until(alice, 'Declined<span class="by" data-role="by"> by <span data-role="by-name">bob<')


def test_a_questions_answer_names_who_gave_it_after_a_restart_too(start_server: ServerFactory, tmp_path: Path) -> None:
    data = migrated_store(tmp_path / "data")  # a store already migrated: these tests are not of migrating
    first = start_server(QUESTION_AGENT, **TEAM, WEBCLIENT_DATA_DIR=str(data))
    session_id = new_session(first, "alice", ADMINS)
    asyncio.run(bob_declines_alices_question(first, session_id))
    asyncio.run(asyncio.sleep(0.3))
    before = thread_html(page_of(first, session_id, "alice"))
    assert 'data-role="by-name">bob</span>' in before
    stop(first, signal.SIGTERM)

    second = start_server(QUESTION_AGENT, **TEAM, WEBCLIENT_DATA_DIR=str(data))
    assert thread_html(page_of(second, session_id, "alice")) == before
    assert [(who, action) for who, action, _ in audit_rows(data)] == [("alice", "prompt"), ("bob", "question")]


async def bob_queues_behind_alice(server: Server, session_id: str) -> str:
    async with page_socket(server, session_id, "alice", ADMINS) as (alice, nonce):
        await ready(alice)
        async with page_socket(server, session_id, "bob", ADMINS) as (bob, bob_nonce):
            await prompt(alice, "wait 1", nonce)
            await until(alice, 'data-turn-state="running"')
            await prompt(bob, "queued by bob", bob_nonce)
            return await until(alice, 'data-role="sent-by">bob <time')


def test_a_queued_prompt_names_who_queued_it_when_its_turn_comes(start_server: ServerFactory) -> None:
    server = start_server(CONTROLS_AGENT, **TEAM)
    session_id = new_session(server, "alice", ADMINS)
    frame = asyncio.run(bob_queues_behind_alice(server, session_id))
    assert "queued by bob" in frame


SUBAGENT_AGENT = f"{sys.executable} {AGENTS / 'subagent_agent.py'}"


async def bob_allows_the_childs_edit(server: Server, session_id: str) -> None:
    async with page_socket(server, session_id, "alice") as (alice, nonce):
        await ready(alice)
        async with page_socket(server, session_id, "bob") as (bob, _):
            await prompt(alice, "ask", nonce)
            await until(bob, 'data-option-id="allow"')
            inbox = httpx.get(at(server.url, "inbox"), params={"part": "list"}, headers=as_person("bob"))
            assert f'data-key="{session_id}:q1"' in inbox.text  # the subagent's question waits in bob's inbox
            await bob.send(json.dumps({"action": "permission", "request_id": "q1", "option_id": "allow"}))
            await until(alice, 'data-role="by-name">bob<')


def test_a_subagents_permission_card_names_who_answered_it_and_the_inbox_lists_it(
    start_server: ServerFactory, tmp_path: Path
) -> None:
    data = migrated_store(tmp_path / "data")  # a store already migrated: these tests are not of migrating
    first = start_server(agent=SUBAGENT_AGENT, **TEAM, WEBCLIENT_DATA_DIR=str(data))
    session_id = new_session(first, "alice")
    share_with(first, session_id, "bob")
    asyncio.run(bob_allows_the_childs_edit(first, session_id))
    on_the_childs_card = r'data-session-id="child-1".*data-tool-call-id="child-edit".*data-role="by-name">bob</span>'
    named = re.compile(on_the_childs_card, re.S)
    assert named.search(thread_html(page_of(first, session_id, "alice")))
    stop(first, signal.SIGTERM)  # the turn still waits for the child's form: it shows interrupted, the answer stays
    second = start_server(agent=SUBAGENT_AGENT, **TEAM, WEBCLIENT_DATA_DIR=str(data))
    assert named.search(thread_html(page_of(second, session_id, "alice")))
