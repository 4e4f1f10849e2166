"""A remote agent (AAP v3) in a real Chromium: the built-in remote demo, served by its own AAP server process, in
the same page as ACP agents: streamed text and thinking, the seed page's parallel tool calls as cards (the client's
read and list run here, the trusted search inline on the server, the untrusted deploy as a permission question),
answered together (a denial with its reason), and the agent going on with the results."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser import send_prompt
from tests.support.servers import ServerFactory


def test_the_remote_demo_calls_tools_in_parallel_and_asks_before_deploying(
    start_server: ServerFactory, page: Page
) -> None:
    server = start_server(agent=None, WEBCLIENT_DEMO_REMOTE="on")
    page.goto(server.sign_in_url("/"))
    page.click('[data-action="new-session"][data-agent="demo-remote"]')
    expect(page.locator("#session")).to_have_attribute("data-turn-state", "idle")
    expect(page.locator("h1")).to_have_text("AAP demo agent")
    expect(page.locator('[data-action="protocol-log"]')).to_have_count(0)  # its traffic is HTTP: no JSON-RPC log
    for label in ("Use Web search", "Run Web search without asking", "Use Deploy a preview"):
        page.get_by_label(label).check()
        expect(page.get_by_label(label)).to_be_checked()

    send_prompt(page, "tools")
    deploy = page.locator('[data-role="tool-call"]', has_text="deploy_preview")
    expect(deploy.locator('[data-role="permission"]')).to_have_attribute("data-state", "pending")
    read = page.locator('[data-role="tool-call"]', has_text="read_file")
    expect(read).to_contain_text("pocket-calc")  # the sample project's README, read by this client
    expect(page.locator('[data-role="tool-call"]', has_text="web_search")).to_contain_text("example.com/1")
    expect(page.locator('[data-role="tool-call"]', has_text="internal_notes")).to_contain_text("noted")
    expect(page.locator("#session")).to_have_attribute("data-turn-state", "awaiting-permission")

    deploy.locator('[data-role="permission-reason"]').fill("not on a Friday")
    deploy.locator('[data-option-id="deny"]').click()
    reply = page.locator('[data-role="agent-message"]').last
    expect(reply).to_contain_text("Here is what came back")
    expect(reply).to_contain_text("deploy_preview: Tool call denied: not on a Friday")  # the reason reached the agent
    expect(deploy).to_contain_text("Denied by the person: not on a Friday")
    expect(reply).to_contain_text("read_file: # pocket-calc")
    expect(page.locator("#session")).to_have_attribute("data-turn-state", "idle")


@pytest.mark.parametrize("width, height", [(1280, 800), (390, 844)])
def test_the_remote_demos_change_cards_say_what_they_ask(
    start_server: ServerFactory, page: Page, width: int, height: int, tmp_path: Path
) -> None:
    """``change`` asks to write a file and to run a command with the client's own tools: the cards show the file's
    path and its new content as a diff against the file on disk, and the command line with its folder, not just
    the tool's name."""
    page.set_viewport_size({"width": width, "height": height})
    server = start_server(agent=None, WEBCLIENT_DEMO_REMOTE="on")
    page.goto(server.sign_in_url("/"))
    page.click('[data-action="new-session"][data-agent="demo-remote"]')
    expect(page.locator("#session")).to_have_attribute("data-connection", "open")
    cwd = page.locator("code.cwd").get_attribute("title")
    assert cwd
    Path(cwd, "NOTES.md").write_text("# Notes\n\nWritten by hand.\n")  # on disk before the agent asks

    send_prompt(page, "change")
    write = page.locator('[data-role="tool-call"][data-kind="edit"]')
    expect(write.locator('[data-role="permission"]')).to_have_attribute("data-state", "pending")
    expect(write.locator(".tool-title")).to_have_text("Write a file")  # the title the client declared
    expect(write.locator('[data-role="tool-name"]')).to_have_text("write_file")
    expect(write.locator('.location[data-path$="/NOTES.md"]')).to_be_visible()
    expect(write.locator("tr.d-del")).to_contain_text("Written by hand.")  # the file on disk ...
    expect(write.locator("tr.d-add")).to_contain_text("Left by the remote demo agent.")  # ... and what it becomes
    expect(write.locator("tr.d-ctx").first).to_contain_text("# Notes")

    run = page.locator('[data-role="tool-call"][data-kind="execute"]')
    expect(run.locator('[data-role="permission"]')).to_have_attribute("data-state", "pending")
    expect(run.locator(".tool-title")).to_have_text("Run a command")
    command = run.locator('[data-role="permission-command"]')
    expect(command).to_contain_text("$ ls -1")
    expect(command).to_contain_text(f"in {cwd}")
    expect(command).to_be_visible()
    write.scroll_into_view_if_needed()
    page.screenshot(path=str(tmp_path / f"change-cards-{width}.png"))
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")  # nothing scrolls sideways

    write.locator('[data-option-id="allow"]').click()
    run.locator('[data-option-id="allow"]').click()
    expect(page.locator('[data-role="agent-message"]').last).to_contain_text("Here is what came back")
    expect(write.locator("tr.d-add")).to_contain_text("Left by the remote demo agent.")  # the diff stays, answered
    assert Path(cwd, "NOTES.md").read_text() == "# Notes\n\nLeft by the remote demo agent.\n"
