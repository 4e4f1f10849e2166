"""A remote agent's session survives the web server's restart: the page is rebuilt from the journal, and Resume
takes up the AAP server's session, whose open call (an untrusted server tool, asked when the server died) is shown
again and answered before the next prompt goes."""

from __future__ import annotations

import asyncio
import json
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.aap_servers import demo_aap_server
from tests.support.restarts import journalled, ready_page, session_page, stop, thread_html, until
from tests.support.servers import ServerFactory


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


async def resume_and_prompt(server: object, session_id: str) -> str:
    async with ready_page(server, session_id) as (socket, nonce, _):  # type: ignore[arg-type]
        await socket.send(json.dumps({"action": "resume"}))
        await until(socket, 'data-agent-state="ready"')
        await socket.send(json.dumps({"action": "prompt", "prompt": "hello", "nonce": nonce + "-2"}))
        frame = await until(socket, 'data-option-id="allow"')
        assert "deploy_preview" in frame
        request_id = frame.split('"request_id": "', 1)[1].split('"', 1)[0]
        await socket.send(json.dumps({"action": "permission", "request_id": request_id, "option_id": "allow"}))
        return await until(socket, "I run behind an AAP server")  # the prompt's answer, after the open call's


def test_a_remote_session_is_rebuilt_and_its_open_call_answered_after_a_restart(
    remote: str, start_server: ServerFactory, tmp_path: Path
) -> None:
    env = {"WEBCLIENT_DATA_DIR": str(tmp_path / "data")}
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "README.md").write_text("# Restart me\n")
    first = start_server(agent=remote, workspace=tmp_path / "project", **env)
    session_id = asyncio.run(leave_asking(remote, first))
    before = thread_html(session_page(first, session_id))
    assert "Restart me" in before and 'data-state="pending"' in before
    journalled(tmp_path / "data", '"asked"')  # the question asked is in the journal: the rest came before it
    stop(first, signal.SIGKILL)

    second = start_server(agent=remote, workspace=tmp_path / "project", **env)
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
    assert page.count('<span class="tool-title">deploy_preview</span>') == 2  # asked before the restart, and after
    assert '<span class="tool-title">Tool call</span>' not in page
