"""End to end: the v2 draft's shapes (``tests/agents/v2shapes_agent.py``, on a v1 connection) through a real server,
live over the page's socket, on the page, escaped, and the same after a restart; and per-entity cancel, sent only for
what advertises it."""

from __future__ import annotations

import asyncio
import html
import json
import re
import signal
import sys
from pathlib import Path

import httpx
import pytest
from websockets.asyncio.client import ClientConnection

from tests.support.html import parse, squash
from tests.support.restarts import PERMISSION_ASKED, ready_page, session_page, stop, thread_html, until
from tests.support.servers import AGENTS, Server, ServerFactory
from tests.support.urls import URLS
from tests.support.waiting import received

V2_AGENT = f"{sys.executable} {AGENTS / 'v2shapes_agent.py'}"


async def tour(server: Server) -> str:
    """A session that runs the tour, answering its permission request with the agent's custom option."""
    async with ready_page(server) as (socket, nonce, session_id):
        await until(socket, 'data-agent-state="ready"')
        await socket.send(json.dumps({"action": "prompt", "prompt": "tour of v2", "nonce": nonce}))
        frame = await until(socket, PERMISSION_ASKED)
        request_id = re.search(r'"request_id": "([^"]+)"', frame)
        assert request_id is not None
        answer = {"action": "permission", "request_id": request_id.group(1), "option_id": "later"}
        await socket.send(json.dumps(answer))
        await until_idle(socket)
    return session_id


async def until_idle(socket: ClientConnection) -> None:
    async with asyncio.timeout(30):
        while 'data-turn-state="idle"' not in html.unescape(str(await socket.recv())):
            pass


@pytest.mark.parametrize("version", ["1", "2"])
def test_the_v2_shapes_show_escaped_live_and_after_a_restart(
    start_server: ServerFactory, tmp_path: Path, version: str
) -> None:
    """The same shapes on a v1 connection (the folds take them) and on a v2 one."""
    env = {"WEBCLIENT_DATA_DIR": str(tmp_path / "data"), "WEBCLIENT_ACP_PROTOCOL": version}
    workspace = tmp_path / "workspace"
    first = start_server(agent=V2_AGENT, workspace=workspace, **env)
    session_id = asyncio.run(tour(first))
    initialize = next(m for m in received(first.record_file) if m.get("method") == "initialize")
    assert initialize["params"]["protocolVersion"] == int(version)
    shown = thread_html(session_page(first, session_id))
    text = squash(parse(shown).text)
    # Messages by id: the prompt named by the agent's user_message, m1 whole although a thought came between, m2
    # replaced by its upsert.
    assert shown.count('data-role="user-message"') == 1
    assert squash("First part, second part.") in text
    assert squash("Replaced whole.") in text and "draft to be replaced" not in text
    assert "<strong>whole</strong>" in shown
    # The tool call created by tool_call_update: its name, a custom kind, a custom status shown generically.
    assert 'data-tool-call-id="c1"' in shown and "edit_files" in text
    assert 'data-status="_reviewing"' in shown and "Reviewing" in text
    # The v2 diff: its files with their operations, and the patch's hunks drawn as rows.
    for part in ("Modified", "Moved", "Touch", "Added", "old.py → ", "new.py", "binary image/png", "Binary file"):
        assert squash(part) in text, part
    assert '<tr class="d-del">' in shown and '<tr class="d-add">' in shown
    added = re.search(r'<tr class="d-add">.*?</tr>', shown)
    assert added is not None and "&lt;script&gt;" in added.group(0) and 'class="hl-' in added.group(0)
    # The agent-owned terminal: its snapshot and chunks (a split UTF-8 character joined), size, exit.
    assert squash("snapshot line café € done") in text
    assert 'data-role="terminal-size">20×5' in shown and squash("exit 0") in text
    # Plans by id: items with a cancelled entry, Markdown, a file plan that was removed.
    assert 'data-status="cancelled"' in shown
    assert "<strong>tests</strong>" in shown
    assert squash("removed by the agent") in text and "PLAN.md" in text
    # The v2 permission request: title, Markdown description, the command and cwd, the custom option chosen.
    for part in ("Run a command", "rm -rf build", "in /work", "You chose: Ask me later"):
        assert squash(part) in text, part
    assert "<strong>deletes</strong>" in shown
    assert "'outcome': 'selected', 'optionId': 'later'" in html.unescape(shown)
    # Agent strings are text, never markup.
    for tag in re.findall(r"<(img|script)\b[^>]*>", shown):
        raise AssertionError(f"agent markup on the page: {tag}")
    exported = export(first, session_id)
    for part in ("- move `", "print('new <script>')", "**Plan** *(removed)*", "1. Write **tests**"):
        assert part in exported, part
    stop(first, signal.SIGTERM)

    second = start_server(agent=V2_AGENT, workspace=workspace, **env)
    assert thread_html(session_page(second, session_id)) == shown
    assert export(second, session_id) == exported


def export(server: Server, session_id: str) -> str:
    with httpx.Client(base_url=server.url, headers=server.headers) as http:
        return http.get(URLS.for_("export", session_id=session_id)).text


def test_stop_is_sent_only_for_what_advertises_cancel(start_server: ServerFactory, tmp_path: Path) -> None:
    env = {"WEBCLIENT_DATA_DIR": str(tmp_path / "data"), "WEBCLIENT_ACP_PROTOCOL": "2"}
    server = start_server(agent=V2_AGENT, workspace=tmp_path / "workspace", **env)

    async def run() -> tuple[str, str, str]:
        async with ready_page(server) as (socket, nonce, session_id):
            await until(socket, 'data-agent-state="ready"')
            await socket.send(json.dumps({"action": "prompt", "prompt": "stoppable", "nonce": nonce}))
            frames = [await until(socket, 'data-tool-call-id="fixed"')]
            while 'data-action="stop-terminal"' not in frames[-1]:
                frames.append(html.unescape(str(await socket.recv())))
            first = "".join(frames)
            # Not advertised, unknown, or of another kind: nothing is sent.
            for kind, entity in (("tool_call", "fixed"), ("tool_call", "nope"), ("session", "long")):
                await socket.send(json.dumps({"action": "cancel_entity", "kind": kind, "id": entity}))
            for kind, entity in (
                ("tool_call", "long"),
                ("terminal", "srv"),
                ("tool_call", "long"),
                ("tool_call", "refuses"),
            ):
                await socket.send(json.dumps({"action": "cancel_entity", "kind": kind, "id": entity}))
            stopping = await until(socket, "Stopping…")
            await until_idle(socket)
            return first, stopping, session_id

    first, stopping, session_id = asyncio.run(run())
    assert 'data-role="stopping"' in stopping
    cancels = [m for m in received(server.record_file) if str(m.get("method", "")).endswith("/cancel")]
    assert [(m["method"], m["params"]) for m in cancels] == [
        ("tool_call/cancel", {"sessionId": "v2shapes-1", "toolCallId": "long"}),
        ("terminal/cancel", {"sessionId": "v2shapes-1", "terminalId": "srv"}),
        ("tool_call/cancel", {"sessionId": "v2shapes-1", "toolCallId": "refuses"}),
    ]
    fixed = re.search(r'<article [^>]*data-tool-call-id="fixed".*?</article>', first, re.DOTALL)
    assert fixed is not None and "stop-tool-call" not in fixed.group(0)
    page = thread_html(session_page(server, session_id))
    assert 'data-tool-call-id="long" data-kind="other" data-status="cancelled"' in page
    assert "killed (SIGTERM)" in page
    refuses = re.search(r'<article [^>]*data-tool-call-id="refuses".*?</article>', page, re.DOTALL)
    assert refuses is not None and 'data-role="stopping"' not in refuses.group(0)  # refused: not stopping after all
    assert "stop-tool-call" in refuses.group(0)  # still advertised: the user may try again
    page_rest = page.replace(refuses.group(0), "")
    assert "stop-tool-call" not in page_rest and "stop-terminal" not in page_rest  # capabilities cleared: no Stop
    # The user's Stops are journalled as actions, and the thread is the same after a restart.
    stop(server, signal.SIGTERM)
    second = start_server(agent=V2_AGENT, workspace=tmp_path / "workspace", **env)
    # Its agent not started again, the restarted page offers no Stop.
    without_stop = re.sub(r'<button type="button" class="entity-stop".*?</button>', "", page)
    assert thread_html(session_page(second, session_id)) == without_stop


def test_a_v1_connection_offers_no_stop_whatever_an_update_advertises(
    start_server: ServerFactory, tmp_path: Path
) -> None:
    server = start_server(agent=V2_AGENT, workspace=tmp_path / "workspace")  # the client asks for version 1

    async def run() -> str:
        async with ready_page(server) as (socket, nonce, _):
            await until(socket, 'data-agent-state="ready"')
            await socket.send(json.dumps({"action": "prompt", "prompt": "stoppable", "nonce": nonce}))
            frames = [await until(socket, 'data-tool-call-id="long"')]
            while "listening" not in frames[-1]:
                frames.append(html.unescape(str(await socket.recv())))
            for kind, entity in (("tool_call", "long"), ("terminal", "srv")):
                await socket.send(json.dumps({"action": "cancel_entity", "kind": kind, "id": entity}))
            await socket.send(json.dumps({"action": "cancel"}))
            await until_idle(socket)
            return "".join(frames)

    frames = asyncio.run(run())
    assert "stop-tool-call" not in frames and "stop-terminal" not in frames
    assert [m["method"] for m in received(server.record_file) if "cancel" in str(m.get("method"))] == ["session/cancel"]
