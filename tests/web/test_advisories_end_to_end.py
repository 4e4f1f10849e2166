"""End to end: an agent's notices, compactions and a turn's token usage, through a real server and a real agent
process (``tests/agents/advisories_agent.py``), live over the page's socket, on the page, and after a restart."""

from __future__ import annotations

import asyncio
import html
import json
import signal
import sys
from pathlib import Path

import httpx

from tests.support.html import parse, squash
from tests.support.restarts import ready_page, session_page, stop, thread_html, until
from tests.support.servers import AGENTS, Server, ServerFactory
from tests.support.urls import URLS
from tests.support.waiting import received

ADVISORIES_AGENT = f"{sys.executable} {AGENTS / 'advisories_agent.py'}"
IN_PROGRESS = "Compacting the conversation…"


async def one_turn(server: Server, prompt: str) -> tuple[str, list[str]]:
    """A new session that runs ``prompt`` over its page's socket: its id, and every frame the page was sent."""
    frames: list[str] = []
    async with ready_page(server) as (socket, nonce, session_id):
        await until(socket, 'data-agent-state="ready"')
        await socket.send(json.dumps({"action": "prompt", "prompt": prompt, "nonce": nonce}))
        frames.append(await until(socket, 'data-turn-state="running"'))
        async with asyncio.timeout(30):
            while 'data-turn-state="idle"' not in frames[-1]:  # the turn ran, and ended
                frames.append(html.unescape(str(await socket.recv())))
    return session_id, frames


def test_notices_compactions_and_usage_show_live_on_the_page_and_after_a_restart(
    start_server: ServerFactory, tmp_path: Path
) -> None:
    env = {"WEBCLIENT_DATA_DIR": str(tmp_path / "data")}
    workspace = tmp_path / "workspace"
    first = start_server(agent=ADVISORIES_AGENT, workspace=workspace, **env)
    session_id, frames = asyncio.run(one_turn(first, "go"))

    # The client said it shows compactions and notices.
    initialize = next(m for m in received(first.record_file) if m.get("method") == "initialize")
    assert initialize["params"]["clientCapabilities"]["session"]["compaction"] == {}
    assert initialize["params"]["clientCapabilities"]["session"]["notices"] == {}
    # Live: the compaction was shown in progress, then replaced in place once completed.
    assert any(IN_PROGRESS in frame for frame in frames)
    assert any("Conversation compacted" in frame and 'hx-swap-oob="true"' in frame for frame in frames)

    page = session_page(first, session_id)
    shown = thread_html(page)
    text = squash(parse(shown).text)
    for part in (
        "Agent warning Rate limit close 80% of the hourly quota is used.\nSlow down.",
        "Agent notice (billing*) Billing <b>notice</b>",  # agent text: shown, never markup
        "Conversation compacted Summary The user asked for a parser; tests pass.",
        "Compacting the conversation failed Context too big",
        "Done.",
        "1,234 tokens (900 in, 334 out, 20 thought, 5,000 cached read)",
    ):
        assert squash(part) in text, part
    assert IN_PROGRESS not in shown
    assert "<b>notice</b>" not in shown
    assert shown.count('data-role="compaction"') == 2  # one entry per compaction id
    assert shown.count('data-role="turn-usage"') == 1
    # The usage line closes the turn: after the agent's message.
    assert shown.index("Done.") < shown.index('data-role="turn-usage"')
    assert 'class="entry notice notice-warning notice-agent"' in shown
    assert 'class="entry compaction compaction-failed"' in shown
    exported = export(first, session_id)
    for part in (
        "**Agent warning:** Rate limit close",
        "**Agent notice (billing\\*):** Billing \\<b\\>notice\\</b\\>",
        "> **Conversation compacted**",
        "<summary>Summary</summary>",
        "The user asked for a parser; tests pass.",
        "> **Compacting the conversation failed**",
        "*1,234 tokens (900 in, 334 out, 20 thought, 5,000 cached read)*",
    ):
        assert part in exported, part
    stop(first, signal.SIGTERM)

    second = start_server(agent=ADVISORIES_AGENT, workspace=workspace, **env)
    assert thread_html(session_page(second, session_id)) == shown
    assert export(second, session_id) == exported


def export(server: Server, session_id: str) -> str:
    with httpx.Client(base_url=server.url, headers=server.headers) as http:
        return http.get(URLS.for_("export", session_id=session_id)).text
