"""Review in a real Chromium: the agent edits one file in two places; the person undoes one hunk (a tap on Undo) and
keeps the other (the "k" key); the file on disk is as expected, the next prompt tells the agent what was undone, and
a reload shows the same."""

from __future__ import annotations

import sys
from pathlib import Path

from playwright.sync_api import Browser, Page, expect

from tests.support.browser import open_session, send_prompt
from tests.support.servers import AGENTS, Server, ServerFactory
from tests.support.urls import URLS

AGENT = f"{sys.executable} {AGENTS / 'review_agent.py'}"
ORIGINAL = "".join(f"line {n}\n" for n in range(1, 21))


def notes_server(start_server: ServerFactory, tmp_path: Path) -> tuple[Server, Path]:
    """A server whose agent works in a folder holding ``notes.txt`` (twenty lines); that file."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    notes = workspace / "notes.txt"
    notes.write_text(ORIGINAL)
    return start_server(agent=AGENT, workspace=workspace), notes


def edit_notes(page: Page, server: Server) -> None:
    """A new session on ``page`` whose agent has edited ``notes.txt`` in two places (lines 2 and 19)."""
    open_session(page, server)
    send_prompt(page, "edit notes.txt")
    expect(page.locator('[data-role="agent-message"]').last).to_have_text("edited")


def test_undo_one_hunk_keep_the_other_and_the_agent_is_told(
    start_server: ServerFactory, page: Page, tmp_path: Path
) -> None:
    server, notes = notes_server(start_server, tmp_path)
    edit_notes(page, server)

    page.click('[data-action="show-changes"]')
    page.click('.change-list a:has-text("notes.txt")')
    hunks = page.locator('[data-role="review-hunk"]')
    expect(hunks).to_have_count(2)
    expect(page.locator(".review-help")).to_be_visible()
    page.keyboard.press("]")  # from the first (current without a mark) to the second, and back
    expect(hunks.last).to_have_attribute("data-current", "")
    page.keyboard.press("[")
    expect(hunks.first).to_have_attribute("data-current", "")
    hunks.first.locator('[data-action="review-undo"]').click()
    expect(page.locator('[data-role="review-decisions"]')).to_contain_text("Undone: line 2")
    expect(hunks).to_have_count(1)
    page.keyboard.press("k")  # the current hunk: the only one left
    expect(page.locator('[data-role="no-changes"]')).to_be_visible()
    expect(page.locator('[data-role="review-decisions"]')).to_contain_text("Kept: line 19")
    assert notes.read_text() == ORIGINAL.replace("line 19\n", "line 19 (edited)\n")

    send_prompt(page, "what changed?")
    expect(page.locator('[data-role="agent-message"]').last).to_contain_text(
        "got: The person undid these changes of yours since your last turn: notes.txt (line 2)."
    )

    session_url = page.url
    page.reload()
    expect(page.locator("#session")).to_have_attribute("data-connection", "open")
    page.click('[data-action="show-changes"]')
    expect(page.locator('[data-role="no-changes"]')).to_have_text("No files changed yet.")
    page.goto(server.url + URLS.for_("change_diff", session_id=session_url.rsplit("/", 1)[1], path="notes.txt"))
    expect(page.locator('[data-role="review-decisions"] li')).to_have_text(["Undone: line 2", "Kept: line 19"])


def test_on_a_phone_the_review_is_tapped(start_server: ServerFactory, browser: Browser, tmp_path: Path) -> None:
    server, notes = notes_server(start_server, tmp_path)
    context = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True)
    try:
        page = context.new_page()
        edit_notes(page, server)
        page.tap('[data-action="show-changes"]')
        page.tap('.change-list a:has-text("notes.txt")')
        hunks = page.locator('[data-role="review-hunk"]')
        expect(hunks).to_have_count(2)
        expect(page.locator(".review-help")).to_be_hidden()  # its keys mean nothing to a finger
        undo = hunks.last.locator('[data-action="review-undo"]')
        box = undo.bounding_box()
        assert box is not None and box["height"] >= 32 and box["width"] >= 44, box  # a finger's size
        undo.tap()
        expect(hunks).to_have_count(1)
        assert notes.read_text() == ORIGINAL.replace("line 2\n", "line 2 (edited)\n")
    finally:
        context.close()


def test_a_refused_undo_is_said_beside_the_file_to_the_person_alone_and_stays_as_the_panel_reloads(
    start_server: ServerFactory, page: Page, tmp_path: Path
) -> None:
    server, notes = notes_server(start_server, tmp_path)
    edit_notes(page, server)
    page.click('[data-action="show-changes"]')
    page.click('.change-list a:has-text("notes.txt")')
    hunks = page.locator('[data-role="review-hunk"]')
    expect(hunks).to_have_count(2)

    # The page showed another version of the file than the one on disk now (someone wrote it meanwhile).
    undo = hunks.first.locator('[data-action="review-undo"]')
    stale = """b => b.setAttribute("hx-vals", b.getAttribute("hx-vals").replace(/"digest": "\\w+"/, '"digest": "x"'))"""
    undo.evaluate(stale)
    page.locator('[data-role="change-diff"]').evaluate("s => s.dataset.before = 'yes'")
    undo.click()
    refused = page.locator('[data-role="change-diff"] [data-role="review-refused"]')
    expect(refused).to_contain_text("Not undone: notes.txt changed since the page showed it")
    expect(page.locator('[data-role="change-diff"]:not([data-before])')).to_have_count(1)  # the panel reloaded
    expect(refused).to_be_visible()
    expect(page.locator("#thread")).not_to_contain_text("Not undone")  # not the session's: no one else sees it
    assert notes.read_text() == ORIGINAL.replace("line 2\n", "line 2 (edited)\n").replace(
        "line 19\n", "line 19 (edited)\n"
    )

    hunks.first.locator('[data-action="review-undo"]').click()  # as the page shows it now: done, the refusal goes
    expect(hunks).to_have_count(1)
    expect(refused).to_have_count(0)


def test_a_change_that_comes_while_the_panel_is_settling_is_shown(
    start_server: ServerFactory, page: Page, tmp_path: Path
) -> None:
    server, notes = notes_server(start_server, tmp_path)
    edit_notes(page, server)
    page.click('[data-action="show-changes"]')
    expect(page.locator(".change-list")).to_contain_text("notes.txt")

    # htmx wires a swapped-in panel a moment after it shows it (20 ms); here 3 s, so that the count comes meanwhile.
    page.evaluate("""() => {
        htmx.config.defaultSettleDelay = 3000;
        window.countsSeen = 0;
        document.body.addEventListener("htmx:oobAfterSwap", event => {
            if (event.detail.target.id === "changes-count") window.countsSeen += 1;
        });
    }""")
    page.click('.change-list a:has-text("notes.txt")')
    hunks = page.locator('[data-role="review-hunk"]')
    expect(hunks).to_have_count(2)
    notes.write_text(ORIGINAL.replace("line 19\n", "line 19 (edited)\n"))  # someone else undoes line 2
    page.wait_for_function("() => window.countsSeen > 0")
    expect(page.locator('[data-role="change-diff"].htmx-added')).to_have_count(1)  # not settled yet
    expect(hunks).to_have_count(1, timeout=10_000)


def test_back_to_changes_and_the_since_toggle_keep_the_side_panel(
    start_server: ServerFactory, page: Page, tmp_path: Path
) -> None:
    server, _ = notes_server(start_server, tmp_path)
    edit_notes(page, server)
    body, hunks = page.locator("#side-panel-body"), page.locator('[data-role="review-hunk"]')
    page.click('[data-action="show-changes"]')
    page.click('.change-list a:has-text("notes.txt")')
    expect(hunks).to_have_count(2)
    page.click('[data-role="change-diff"] a:has-text("← Changes")')
    expect(page.locator('[data-role="changes"]')).to_be_visible()
    expect(body).to_have_count(1)  # swapped into, never swapped out: the next link still finds it
    page.click('[data-action="since-prompt"]')
    expect(page.locator('[data-role="changes"]')).to_have_attribute("data-since", "prompt")
    expect(body).to_have_count(1)
    page.click('.change-list a:has-text("notes.txt")')
    expect(hunks).to_have_count(2)
    page.click('[data-action="since-session"]')
    expect(page.locator('[data-role="change-diff"] [data-action="since-prompt"]')).to_be_visible()
    expect(body).to_have_count(1)
    page.click('[data-role="change-diff"] a:has-text("← Changes")')
    page.click('.change-list a:has-text("notes.txt")')
    expect(hunks).to_have_count(2)
