"""Checkpoints in a real Chromium: three prompts that each change files, the files restored to before the second (on
disk as they were), then the second prompt edited and resent, in a new agent session (the agent offers no fork) or in
a fork of its session (it offers ``session/fork``); Restore is disabled while a turn runs."""

from __future__ import annotations

import secrets
import subprocess
import sys
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.support.browser import open_session, send_prompt
from tests.support.restarts import journalled
from tests.support.servers import AGENTS, Server, ServerFactory, free_port, launch_server, stop_server

AGENT = f"{sys.executable} {AGENTS / 'checkpoint_agent.py'}"
PROMPTS = (
    "write a.txt one\nfirst",
    "write a.txt two\nwrite b.txt two\nsecond",
    "write c/d.txt three\ndelete b.txt\nthird",
)


def files(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): p.read_text() for p in sorted(folder.rglob("*")) if p.is_file()}


def three_prompts(page: Page, server: Server) -> None:
    (server.workspace / "a.txt").write_text("zero\n")
    open_session(page, server)
    for number, text in enumerate(PROMPTS, 1):
        send_prompt(page, text)
        expect(page.locator('[data-role="agent-message"]')).to_have_count(number)
        expect(page.locator('[data-role="agent-message"]').last).to_contain_text(": " + text.splitlines()[-1])
        expect(page.locator("#session")).to_have_attribute("data-turn-state", "idle")
    assert files(server.workspace) == {"a.txt": "two\n", "c/d.txt": "three\n"}


def open_checkpoint(page: Page, number: int) -> None:
    """The checkpoint of the ``number``-th prompt (from 0), opened: its preview loaded."""
    checkpoint = page.locator('[data-role="user-message"]').nth(number).locator('[data-role="checkpoint"]')
    checkpoint.locator("summary").click()
    expect(checkpoint.locator('[data-role="checkpoint-preview"]')).to_be_visible()


def restore_then_resend(page: Page, server: Server, summary: bool) -> None:
    three_prompts(page, server)
    second = page.locator('[data-role="user-message"]').nth(1)
    open_checkpoint(page, 1)
    changes = second.locator('[data-role="checkpoint-changes"] li')
    expect(changes).to_have_count(2)
    expect(changes.nth(0)).to_contain_text("written back a.txt")
    expect(changes.nth(1)).to_contain_text("deleted (made since) c/d.txt")
    second.locator('[data-role="checkpoint-restore"]').click()
    expect(page.locator('[data-role="notice"]', has_text="Files restored to before this prompt")).to_have_count(1)
    assert files(server.workspace) == {"a.txt": "one\n"}

    open_checkpoint(page, 1)  # opened again: the preview is fetched afresh
    expect(second.locator('[data-role="checkpoint-same"]')).to_be_visible()
    second.locator('[data-role="checkpoint-resend"] textarea').fill("write e.txt edited\nresent")
    if summary:
        second.locator('[data-role="checkpoint-summary"]').check()
    second.locator('[data-role="checkpoint-resend-button"]').click()
    expect(page.locator('[data-role="agent-message"]').last).to_contain_text(": resent")
    expect(page.locator('[data-role="user-message"]')).to_have_count(4)  # the earlier branch stays above
    expect(page.locator('[data-role="user-message"]').nth(2)).to_contain_text("third")
    assert files(server.workspace) == {"a.txt": "one\n", "e.txt": "edited\n"}


def test_restore_to_before_the_second_prompt_then_resend_it_in_a_new_agent_session(
    start_server: ServerFactory, page: Page
) -> None:
    server = start_server(agent=AGENT)
    restore_then_resend(page, server, summary=True)
    expect(page.locator('[data-role="notice"]', has_text="Branch point: a new agent session")).to_have_count(1)
    prompts = [m for m in server.received() if m.get("method") == "session/prompt"]
    told = prompts[-1]["params"]["prompt"][0]["text"]
    assert told.startswith("Earlier in this conversation") and told.endswith("write e.txt edited\nresent")
    assert not any(m.get("method") == "session/fork" for m in server.received())


def test_resend_continues_in_a_fork_when_the_agent_offers_one(start_server: ServerFactory, page: Page) -> None:
    server = start_server(agent=AGENT, FORK="1")
    restore_then_resend(page, server, summary=False)
    expect(
        page.locator('[data-role="notice"]', has_text="Branch point: the conversation continues in a fork")
    ).to_have_count(1)
    prompts = [m for m in server.received() if m.get("method") == "session/prompt"]
    assert prompts[-1]["params"]["sessionId"].startswith("fork-")


def test_restore_is_disabled_while_a_turn_runs(start_server: ServerFactory, page: Page) -> None:
    server = start_server(agent=AGENT)
    open_session(page, server)
    send_prompt(page, "write a.txt one\nfirst")
    expect(page.locator('[data-role="agent-message"]')).to_contain_text(": first")
    expect(page.locator("#session")).to_have_attribute("data-turn-state", "idle")
    open_checkpoint(page, 0)
    restore = page.locator('[data-role="user-message"]').first.locator('[data-role="checkpoint-restore"]')
    expect(restore).to_be_enabled()
    send_prompt(page, "slow 30")
    expect(page.locator("#session")).to_have_attribute("data-turn-state", "running")
    expect(restore).to_be_disabled()
    expect(restore).to_have_attribute(
        "title", "The agent is working: wait for the turn to end, or stop it, before restoring files."
    )
    page.locator('button[data-action="cancel"]').click()
    expect(page.locator("#session")).to_have_attribute("data-turn-state", "idle")
    expect(restore).to_be_enabled()


def test_a_page_after_a_restart_still_restores_to_before_a_prompt(page: Page, tmp_path: Path) -> None:
    port, token = free_port(), secrets.token_urlsafe(16)
    workspace = tmp_path / "work"
    workspace.mkdir()
    env = {"WEBCLIENT_DATA_DIR": str(tmp_path / "data")}

    def start() -> Server:
        options = ["--agent", AGENT, "--workspace", str(workspace)]
        return launch_server(port, token, tmp_path / "received.jsonl", workspace, options, env, subprocess.DEVNULL)

    server = start()
    try:
        three_prompts(page, server)
        journalled(tmp_path / "data", ": third")  # stored in batches: the stop must not beat the last of them
        stop_server(server)
        server = start()
        page.goto(server.sign_in_url(page.url))
        expect(page.locator("#session-status")).to_have_attribute("data-turn-state", "ended")
        expect(page.locator('[data-role="checkpoint"]')).to_have_count(3)  # rebuilt from the journal
        open_checkpoint(page, 1)
        page.locator('[data-role="user-message"]').nth(1).locator('[data-role="checkpoint-restore"]').click()
        expect(page.locator('[data-role="notice"]', has_text="Files restored to before this prompt")).to_have_count(1)
        assert files(workspace) == {"a.txt": "one\n"}
    finally:
        stop_server(server)
