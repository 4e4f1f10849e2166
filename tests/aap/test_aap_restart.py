"""A remote agent's session survives the web server's restart: the page is rebuilt from the journal, and Resume
takes up the AAP server's session, whose open calls (an untrusted server tool, asked when the server died; a client
tool that ran) are asked again at once and re-submitted together as soon as the last one is answered, as AAP v3's
tool-call page has it."""

from __future__ import annotations

import asyncio
import json
import re
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.aap_servers import aap_server, demo_aap_server
from tests.support.restarts import journalled, ready_page, session_page, stop, thread_html, until
from tests.support.servers import AGENTS, ServerFactory

pytestmark = pytest.mark.process  # each test starts the server as a process: its subject


@pytest.fixture(scope="module")
def remote() -> Iterator[str]:
    with demo_aap_server() as url:  # outlives the web servers of a test: the agent's sessions live there
        yield url


async def leave_asking(server_url: str, server: object) -> str:
    async with ready_page(server) as (socket, nonce, session_id):  # type: ignore[arg-type]
        await until(socket, 'data-agent-state="ready"')
        await socket.send(json.dumps({"action": "set_setting", "setting_id": "enable:deploy_preview", "value": "true"}))
        await until(socket, "Run Deploy a preview without asking")
        await socket.send(json.dumps({"action": "prompt", "prompt": "tools", "nonce": nonce}))
        await until(socket, 'data-option-id="deny"')
    return session_id


def request_id_in(frame: str) -> str:
    return frame.split('"request_id": "', 1)[1].split('"', 1)[0]


async def resume_and_prompt(server: object, session_id: str) -> str:
    async with ready_page(server, session_id) as (socket, nonce, _):  # type: ignore[arg-type]
        await socket.send(json.dumps({"action": "resume"}))
        frame = await until(socket, 'data-option-id="allow"')  # asked again on Resume, before any prompt
        assert "deploy_preview" in frame
        await socket.send(
            json.dumps({"action": "permission", "request_id": request_id_in(frame), "option_id": "allow"})
        )
        await until(socket, "Deployed main")  # the re-submission's answer
        await socket.send(json.dumps({"action": "prompt", "prompt": "hello", "nonce": nonce + "-2"}))
        return await until(socket, "I run behind an AAP server")


def test_a_remote_session_is_rebuilt_and_its_open_call_answered_after_a_restart(
    remote: str, start_server: ServerFactory, tmp_path: Path
) -> None:
    env = {"WEBCLIENT_DATA_DIR": str(tmp_path / "data")}
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "README.md").write_text("# Restart me\n")
    first = start_server(process=True, agent=remote, workspace=tmp_path / "project", **env)
    session_id = asyncio.run(leave_asking(remote, first))
    before = thread_html(session_page(first, session_id))
    assert "Restart me" in before and 'data-state="pending"' in before
    journalled(tmp_path / "data", '"asked"')  # the question asked is in the journal
    journalled(tmp_path / "data", "Restart me")  # and the file read, whose result came after it
    stop(first, signal.SIGKILL)

    second = start_server(process=True, agent=remote, workspace=tmp_path / "project", **env)
    rebuilt = session_page(second, session_id)
    assert '<h1 data-role="title">Tools</h1>' in rebuilt  # titled by its first prompt
    assert "AAP demo agent 0.1.0" in rebuilt  # what /meta said
    after = thread_html(session_page(second, session_id))
    assert after.replace('data-state="interrupted"', 'data-state="pending"').count("Restart me") == before.count(
        "Restart me"
    )
    assert 'data-state="interrupted"' in after  # the question asked when the server died
    asyncio.run(resume_and_prompt(second, session_id))
    page = thread_html(session_page(second, session_id))
    assert "Deployed main to https://preview.example.com/main" in page
    titles = re.findall(r'<span class="tool-title"[^>]*>([^<]*)</span>', page)
    assert titles.count("Deploy a preview") == 1  # asked again on its own card
    assert "Tool call" not in titles


async def run_the_effect_and_leave_deploy_asking(server: object) -> str:
    async with ready_page(server) as (socket, nonce, session_id):  # type: ignore[arg-type]
        await until(socket, 'data-agent-state="ready"')
        await socket.send(json.dumps({"action": "prompt", "prompt": "effect-and-deploy", "nonce": nonce}))
        frame = ""
        while 'data-tool-call-id="c-effect"' not in frame:  # its card asks (the deploy's asks too)
            frame = await until(socket, 'data-option-id="allow"')
        run = frame[frame.index('data-tool-call-id="c-effect"') :]
        await socket.send(json.dumps({"action": "permission", "request_id": request_id_in(run), "option_id": "allow"}))
        await until(socket, "exit code 0")
    return session_id


async def resume_and_allow_deploy(server: object, session_id: str) -> tuple[str, int]:
    async with ready_page(server, session_id) as (socket, _, _):  # type: ignore[arg-type]
        await socket.send(json.dumps({"action": "resume"}))
        frame = await until(socket, 'data-state="pending"')  # asked again, with no prompt typed
        asked = frame.count('data-state="pending"')
        deploy = frame[frame.index('data-tool-call-id="c-deploy"') :]
        await socket.send(
            json.dumps({"action": "permission", "request_id": request_id_in(deploy), "option_id": "allow"})
        )
        return await until(socket, "c-deploy ran"), asked


def test_after_a_restart_resume_asks_again_and_resubmits_every_open_call_in_one_post(
    start_server: ServerFactory, tmp_path: Path
) -> None:
    """A turn stopped for ``tool_use`` with a client command (allowed, run) and an untrusted server tool (still
    asking) when the web server died: Resume asks again about the server tool, does not run the command a second
    time (its journalled result is sent), and one ``POST /sessions/:id/turns`` carries both answers."""
    received = tmp_path / "received.jsonl"
    (tmp_path / "project").mkdir()
    env = {"WEBCLIENT_DATA_DIR": str(tmp_path / "data")}
    with aap_server([sys.executable, str(AGENTS / "aap_misbehaving.py")], RECORD_FILE=str(received)) as url:
        first = start_server(process=True, agent=url, workspace=tmp_path / "project", **env)
        session_id = asyncio.run(run_the_effect_and_leave_deploy_asking(first))
        journalled(tmp_path / "data", "exit code 0")  # the command's outcome
        stop(first, signal.SIGKILL)
        posts_before = len(received.read_text().splitlines())

        second = start_server(process=True, agent=url, workspace=tmp_path / "project", **env)
        said, asked = asyncio.run(resume_and_allow_deploy(second, session_id))
        assert asked == 1  # only the server tool asks: the command was answered before the restart

    assert (tmp_path / "project" / "ran.log").read_text() == "ran\n"  # run once, not again after the restart
    posts_after = [json.loads(line) for line in received.read_text().splitlines()[posts_before:]]
    turns = [body for body in posts_after if "messages" in body]
    assert len(turns) == 1, turns  # one re-submission of everything, and nothing else
    messages = {m["toolCallId"]: m for m in turns[0]["messages"]}
    assert messages["c-deploy"] == {"role": "tool_permission", "toolCallId": "c-deploy", "granted": True}
    assert messages["c-effect"]["role"] == "tool" and messages["c-effect"]["content"].startswith("exit code 0")
    assert "c-effect said" in said
