"""Two sessions in worktrees of one repository, in a real Chromium: each agent changes the same file in its own
worktree without touching the other's or the main checkout, and a commit from one page lands on its branch."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.support.browser import send_prompt, until_connected
from tests.support.servers import Server, ServerFactory
from tests.workspace.test_worktrees import repository


def new_worktree_session(page: Page, server: Server) -> str:
    """New session with "Work in a new worktree" ticked: the session's id, its agent ready."""
    page.goto(server.sign_in_url("/"))
    page.check('[data-role="worktree-choice"]')
    page.click('[data-action="new-session"]')
    expect(page.locator("#session")).to_have_attribute("data-agent-state", "ready", timeout=20_000)
    until_connected(page)
    return str(page.locator("#session").get_attribute("data-session-id"))


def test_two_sessions_change_one_file_in_their_own_worktrees_then_one_commits(
    start_server: ServerFactory, page: Page, tmp_path: Path
) -> None:
    repo = repository(tmp_path / "repo")
    server = start_server(workspace=repo)
    other = page.context.new_page()
    first, second = new_worktree_session(page, server), new_worktree_session(other, server)
    worktrees = server.data_dir / "worktrees"

    for shown, session_id, text in [(page, first, "from-the-first"), (other, second, "from-the-second")]:
        short = re.sub("[^A-Za-z0-9]", "x", session_id)[:8]
        expect(shown.locator('[data-role="branch"]')).to_contain_text(f"webclient/{short}")
        send_prompt(shown, f"fs write {worktrees / session_id / 'notes.txt'} {text}")
        expect(shown.locator('[data-role="agent-message"]').last).to_contain_text('"result"', timeout=20_000)
    assert (worktrees / first / "notes.txt").read_text() == "from-the-first"
    assert (worktrees / second / "notes.txt").read_text() == "from-the-second"
    assert (repo / "notes.txt").read_text() == "first\n", "the main checkout is untouched"

    page.click('[data-action="show-worktree"]')
    panel = page.locator('[data-role="worktree"]')
    expect(panel.locator('[data-role="uncommitted"]')).to_be_visible()
    expect(panel.locator('details[data-path="notes.txt"]')).to_contain_text("from-the-first")
    panel.locator('[data-role="commit-message"]').fill("The first session's notes")
    panel.locator('[data-action="commit"]').click()
    expect(page.locator('[data-role="worktree"] [data-role="clean"]')).to_be_visible()

    branch = str(page.locator('[data-role="worktree"]').get_attribute("data-branch"))
    log = subprocess.run(
        ["git", "-C", str(repo), "log", "-1", "--format=%s", branch], capture_output=True, text=True, check=True
    )
    assert log.stdout.strip() == "The first session's notes"
    shown = subprocess.run(
        ["git", "-C", str(repo), "show", f"{branch}:notes.txt"], capture_output=True, text=True, check=True
    )
    assert shown.stdout == "from-the-first"
    assert (worktrees / second / "notes.txt").read_text() == "from-the-second", "the other worktree is its own"
    other.close()
