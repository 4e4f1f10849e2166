"""The agent's hands as a person sees them in Chromium: live terminals, diffs, the side panel, Changes."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from tests.support.browser import open_session, send_prompt
from tests.support.servers import ServerFactory


def test_terminal_output_streams_into_the_card_while_the_command_runs(start_server: ServerFactory, page: Page) -> None:
    server = start_server()
    open_session(page, server)
    send_prompt(page, "run 8")
    terminal = page.locator('[data-tool-call-id="run-1"] [data-role="terminal"]')
    expect(terminal.locator('[data-role="terminal-output"]')).to_contain_text("line 1 done")
    # Seen while the command still runs: the card streams, it does not wait for the end.
    expect(terminal).to_have_attribute("data-state", "running")
    expect(terminal.locator(".t-fg-green").first).to_have_text("line 0")
    expect(terminal).to_have_attribute("data-state", "exited", timeout=10_000)
    expect(terminal.locator('[data-role="terminal-status"]')).to_have_text("exit 0")
    expect(terminal.locator('[data-role="terminal-output"]')).to_contain_text("line 7 done")
    # Released by the agent at the end of the turn: the card keeps the final output.
    expect(page.locator('[data-role="agent-message"]').last).to_contain_text('"lines": 8')
    expect(terminal.locator('[data-role="terminal-output"]')).to_contain_text("line 0 done")


def test_a_display_only_terminal_from_tool_call_meta_streams_too(start_server: ServerFactory, page: Page) -> None:
    server = start_server()
    open_session(page, server)
    send_prompt(page, "meta")
    terminal = page.locator('[data-tool-call-id="meta-1"] [data-role="terminal"]')
    expect(terminal.locator('[data-role="terminal-output"]')).to_contain_text("checking")
    expect(terminal.locator(".t-fg-red")).to_have_text("bad")
    expect(terminal.locator('[data-role="terminal-status"]')).to_have_text("exit 1")
    expect(terminal.locator(".t-b")).to_have_text("checking")


def test_follow_the_agent_tracks_its_latest_location(start_server: ServerFactory, page: Page) -> None:
    server = start_server()
    (server.workspace / "big.py").write_text("".join(f"value_{n} = {n}\n" for n in range(1, 301)))
    open_session(page, server)
    page.check("#follow-toggle")
    send_prompt(page, "look big.py 20 250")
    panel = page.locator("#side-panel-body")
    expect(panel.locator('[data-role="file-panel"]')).to_have_attribute("data-line", "250")
    expect(panel.locator("tr.target")).to_contain_text("value_250 = 250")
    expect(page.locator("#side-panel")).to_be_visible()
    expect(panel.locator("tr.target")).to_be_in_viewport()
    # The choice is remembered: after a reload the panel follows again without a click.
    page.reload()
    expect(page.locator("#follow-toggle")).to_be_checked()
    expect(page.locator("#session")).to_have_attribute("data-turn-state", "idle")
    send_prompt(page, "look big.py 42")
    expect(panel.locator('[data-role="file-panel"]')).to_have_attribute("data-line", "42")
    expect(panel.locator("tr.target")).to_contain_text("value_42 = 42")


def test_a_location_link_opens_the_file_at_that_line(start_server: ServerFactory, page: Page) -> None:
    server = start_server()
    (server.workspace / "big.py").write_text("".join(f"value_{n} = {n}\n" for n in range(1, 301)))
    open_session(page, server)
    send_prompt(page, "look big.py 120")
    link = page.locator('[data-tool-call-id="look-1"] a.location')
    expect(link).to_have_text("big.py:120")
    link.click()
    expect(page.locator("#side-panel-body tr.target")).to_contain_text("value_120 = 120")
    expect(page.locator("#side-panel-body .hl-mi").first).to_be_visible()  # highlighted as Python


def test_a_write_shows_as_a_change_openable_as_a_diff(start_server: ServerFactory, page: Page) -> None:
    server = start_server()
    (server.workspace / "notes.txt").write_text("first\nsecond\n")
    open_session(page, server)
    send_prompt(page, f"fs write {server.workspace}/notes.txt first changed")
    change = page.locator('[data-role="file-change"]')
    expect(change).to_have_attribute("data-path", "notes.txt")
    expect(change.locator(".d-stat")).to_have_text("+1 −2")
    # Something changed directly on disk is listed too (the workspace is watched).
    (server.workspace / "made.py").write_text("print('hi')\n")
    expect(page.locator("#changes-count")).to_have_text("2")
    page.click('[data-action="show-changes"]')
    items = page.locator('[data-role="changes"] li')
    expect(items).to_have_count(2)
    expect(page.locator('[data-role="changes"] li[data-path="made.py"]')).to_have_attribute("data-status", "added")
    page.click('[data-role="changes"] li[data-path="notes.txt"] a')
    diff = page.locator('#side-panel-body [data-role="change-diff"] details.diff')
    expect(diff.locator("tr.d-del").first).to_contain_text("first")
    expect(diff.locator("tr.d-add")).to_contain_text("first changed")


def test_the_same_diff_sent_again_replaces_it_and_keeps_it_closed(start_server: ServerFactory, page: Page) -> None:
    server = start_server()
    open_session(page, server)
    send_prompt(page, "diff-twice 3")
    diff = page.locator('[data-tool-call-id="d1"] details.diff')
    expect(diff).to_have_attribute("open", "")
    expect(diff.locator(".d-stat")).to_have_text("+1 −1")
    diff.locator("summary .d-path").click()
    expect(diff).not_to_have_attribute("open", re.compile(".*"))
    expect(page.locator('[data-tool-call-id="d1"]')).to_have_attribute("data-status", "completed", timeout=10_000)
    expect(page.locator('[data-tool-call-id="d1"] details.diff')).to_have_count(1)
    expect(page.locator('[data-tool-call-id="d1"] details.diff')).not_to_have_attribute("open", re.compile(".*"))


def test_split_or_unified_is_the_users_choice_and_remembered(start_server: ServerFactory, page: Page) -> None:
    server = start_server()
    open_session(page, server)
    send_prompt(page, "diff-twice 0")
    expect(page.locator('[data-role="agent-message"]').last).to_contain_text("second")
    diff = page.locator('[data-tool-call-id="d1"] details.diff')
    expect(diff).to_have_attribute("data-mode", "unified")
    diff.locator('[data-action="diff-mode"]').click()
    expect(diff).to_have_attribute("data-mode", "split")
    expect(diff.locator("table.d-split tr").first).to_be_visible()
    page.reload()
    expect(page.locator('[data-tool-call-id="d1"] details.diff')).to_have_attribute("data-mode", "split")
