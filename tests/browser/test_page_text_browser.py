"""Agent text cannot dress up the page (issue 9, section 2), checked in Chromium.

The agent (``tests/agents/page_agent.py``) names plan statuses after the page's own classes, hides bidi overrides
and look-alike letters in titles, paths and option names, and sends 30,000-character tokens everywhere; the page
keeps its layout, shows what is hidden, never scrolls sideways, and has no ``style`` attribute to allow.
"""

from __future__ import annotations

import json
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Locator, Page, Route, expect

from tests.support.browser import open_session, send_prompt
from tests.support.own_server import own_server
from tests.support.servers import AGENTS, ServerFactory

AGENT = f"{sys.executable} {AGENTS / 'page_agent.py'}"
MARKER = "⟨U+202E⟩"
PLAN_CLASSES = {"plan-item", "current"} | {
    f"{kind}-{value}"
    for kind, values in (
        ("status", ("pending", "in_progress", "completed", "other")),
        ("priority", ("high", "medium", "low", "other")),
    )
    for value in values
}


def test_plan_words_that_are_page_classes_change_no_layout(start_server: ServerFactory, page: Page) -> None:
    server = start_server(agent=AGENT)
    open_session(page, server)
    thread_box = page.locator("#thread").bounding_box()
    send_prompt(page, "spoof")
    items = page.locator('#thread [data-role="plan"] .plan-item')
    expect(items).to_have_count(3)
    for i in range(3):
        classes = set(items.nth(i).evaluate("e => [...e.classList]"))
        assert classes <= PLAN_CLASSES, classes
    expect(items.nth(0)).to_have_attribute("data-status", "pending side-panel open")
    expect(items.nth(0).locator(".plan-status")).to_have_text("pending side-panel open")
    expect(items.nth(0).locator(".priority")).to_have_text("high jump")
    # The side panel stays closed, and the plan sits in the thread column, in the flow of the page.
    assert not page.evaluate("document.body.classList.contains('panel-open')")
    expect(page.locator("#side-panel")).to_be_hidden()
    for i in range(3):
        assert items.nth(i).evaluate("e => getComputedStyle(e).position") == "static"
        box = items.nth(i).bounding_box()
        assert (
            box
            and thread_box
            and thread_box["x"] <= box["x"]
            and box["x"] + box["width"] <= thread_box["x"] + thread_box["width"] + 1
        )


def test_hidden_characters_show_as_markers_and_look_alike_paths_are_marked(
    start_server: ServerFactory, page: Page
) -> None:
    server = start_server(agent=AGENT)
    open_session(page, server)
    send_prompt(page, "spoof")
    reject = page.locator('[data-option-kind="reject_once"]')
    expect(reject).to_contain_text(MARKER)
    text = reject.inner_text()
    assert "\u202e" not in text and "Allow once" not in text
    expect(reject).to_have_attribute("data-option-id", "reject")
    card = page.locator('[data-tool-call-id="spoof-1"]')
    expect(card.locator(".tool-title")).to_have_text(f"Read {MARKER}txt.exe")
    locations = card.locator(".locations li")
    expect(locations.nth(0).locator('[data-role="mixed-scripts"]')).to_have_attribute(
        "title", "One name mixes Latin and Cyrillic letters: a look-alike character may stand in for another"
    )
    expect(locations.nth(1)).to_contain_text("a⟨U+200B⟩b.txt")
    expect(locations.nth(1).locator('[data-role="mixed-scripts"]')).to_have_count(0)
    # Scripts still get the exact path.
    assert locations.nth(1).locator("a").get_attribute("data-path", timeout=1000).endswith("a\u200bb.txt")  # type: ignore[union-attr]
    expect(page.locator('[data-role="title"]')).to_contain_text(MARKER)
    page.wait_for_function("document.title.includes('⟨U+202E⟩')")
    title = page.title()
    assert "\u202e" not in title and len(title) <= 80 + len(" · ACP web client"), title


def overflow(page: Page) -> int:
    """How far the page scrolls sideways, in pixels (0 when it does not)."""
    return int(page.evaluate("document.scrollingElement.scrollWidth - document.scrollingElement.clientWidth"))


def long_workspace(tmp_path: Path) -> Path:
    """A workspace whose path is as long as Linux allows (no 30,000-character path exists): 15 long names."""
    path = tmp_path
    for i in range(15):
        path = path / (chr(ord("a") + i) * 240)
    path.mkdir(parents=True)
    return path


@pytest.mark.parametrize("width", [1280, 400])
def test_long_tokens_never_scroll_the_page_sideways(start_server: ServerFactory, browser: Browser, width: int) -> None:
    server = start_server(agent=AGENT)
    context = browser.new_context(viewport={"width": width, "height": 900})
    try:
        page = context.new_page()
        open_session(page, server)
        send_prompt(page, "long")
        expect(page.locator('[data-option-id="long"]')).to_be_visible(timeout=20_000)
        expect(page.locator('[data-tool-call-id="long-term"] [data-role="terminal-output"]')).to_contain_text("short")
        assert overflow(page) <= 0
        # A long working directory does not push the terminal's status out of its card.
        terminal = page.locator('[data-tool-call-id="long-term"] .terminal')
        status = terminal.locator('[data-role="terminal-status"]').bounding_box()
        box = terminal.bounding_box()
        assert status and box and status["x"] + status["width"] <= box["x"] + box["width"] + 1
        # The side panel: a file with a 30,000-character line, and the same file among the changes.
        page.click('[data-tool-call-id="long-1"] a.location >> nth=0')
        expect(page.locator('#side-panel [data-role="file-panel"]')).to_be_visible()
        assert overflow(page) <= 0
        page.click("#side-panel .side-panel-bar a")  # "All changes"
        page.locator("#side-panel .change a").click(timeout=20_000)
        expect(page.locator('#side-panel [data-role="change-diff"]')).to_be_visible()
        assert overflow(page) <= 0
        page.click('[data-action="close-panel"]')
        page.click('#thread [data-action="diff-mode"]')  # side by side
        expect(page.locator(".d-table.d-split")).to_have_count(1, timeout=20_000)
        assert overflow(page) <= 0
        page.click('#thread [data-action="diff-mode"]')
        expect(page.locator(".d-table.d-unified")).to_have_count(1, timeout=20_000)
        page.wait_for_function("document.title.length > 0")
        assert len(page.title()) <= 80 + len(" · ACP web client")
    finally:
        context.close()


def test_a_very_long_working_directory_does_not_scroll_the_page_sideways(browser: Browser, tmp_path: Path) -> None:
    with own_server(long_workspace(tmp_path), AGENT) as server:
        for width in (1280, 400):
            context = browser.new_context(viewport={"width": width, "height": 900})
            try:
                page = context.new_page()
                open_session(page, server)
                expect(page.locator(".cwd")).to_contain_text("a" * 240)
                assert overflow(page) <= 0
            finally:
                context.close()


class _Styled(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.styled: list[str] = []
        self.tags = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags += 1
        if any(name == "style" for name, _ in attrs):
            self.styled.append(f"<{tag} {attrs}>")


def strict_styles(route: Route) -> None:
    """The session page served with a CSP that allows no inline style at all (what the server sends once its
    style-src drops 'unsafe-inline')."""
    response = route.fetch()
    policy = response.headers.get("content-security-policy", "default-src 'self'; script-src 'self'")
    policy = policy.replace(" 'unsafe-inline'", "")
    route.fulfill(response=response, headers={**response.headers, "content-security-policy": policy})


def test_no_style_attribute_and_colours_still_show(start_server: ServerFactory, page: Page) -> None:
    server = start_server(agent=AGENT)
    page.add_init_script(
        "window.__violations = [];"
        "document.addEventListener('securitypolicyviolation',"
        " e => window.__violations.push(e.violatedDirective + ' ' + e.sample));"
    )
    page.route("**/sessions/*", strict_styles)
    open_session(page, server)
    assert "unsafe-inline" not in strict_policy(page)
    send_prompt(page, "colours")
    expect(page.locator("#session")).to_have_attribute("data-turn-state", "idle")
    send_prompt(page, "long")
    expect(page.locator('[data-option-id="long"]')).to_be_visible(timeout=20_000)
    terminal = page.locator('[data-tool-call-id="colours"] [data-role="terminal-output"]')
    indexed = terminal.locator("span[class]", has_text="indexed")
    expect(indexed).to_have_class("t-fg-208")
    assert indexed.evaluate("e => getComputedStyle(e).color") == "rgb(255, 135, 0)"
    truecolour = terminal.locator("span[class]", has_text="truecolour")
    assert truecolour.evaluate("e => getComputedStyle(e).color") == "rgb(0, 215, 0)"  # nearest to #0ac81e
    background = terminal.locator("span[class]", has_text="background")
    assert background.evaluate("e => getComputedStyle(e).backgroundColor") == "rgb(0, 0, 255)"
    right = page.locator(".md td", has_text="c")
    assert right.evaluate("e => getComputedStyle(e).textAlign") == "right"
    html = httpx.get(page.url, headers=server.headers, cookies=cookies(page)).text
    parsed = _Styled()
    parsed.feed(html)
    assert parsed.tags > 100 and parsed.styled == []
    # Nothing the page did needed an inline style (htmx, app.js: the sticky heights go to a constructed sheet).
    page.evaluate("document.querySelector('[data-action=close-panel]').click()")
    assert page.evaluate("window.__violations") == []


def strict_policy(page: Page) -> str:
    """The policy the page runs under, as a request for it answers."""
    return str(page.evaluate("fetch(location.href).then(r => r.headers.get('content-security-policy'))"))


def cookies(page: Page) -> dict[str, Any]:
    return {cookie["name"]: cookie["value"] for cookie in page.context.cookies()}


# The checks above missed what follows (issue 23): the agent never wrote a file through the client, so the thread's
# file changes and a new file's listing in Changes were never looked at; "no sideways scroll" was measured on the
# document only, while the phone's work bar scrolled by itself with Export, Rename and End out of sight; Rename was
# never opened; and the header's folder line was checked for length only, never for hidden characters.


def fits(page: Page, locator: Locator) -> bool:
    """Whether every element of ``locator`` that shows lies between the window's left and right edges."""
    return bool(
        locator.evaluate_all(
            """es => es.every(e => { const r = e.getBoundingClientRect();
                   return !r.width || (r.left >= -1 && r.right <= document.documentElement.clientWidth + 1); })"""
        )
    )


def shows_markers_only(locator: Locator) -> None:
    """``locator`` shows the bidi override as its marker, never as itself."""
    expect(locator).to_contain_text(MARKER)
    assert "\u202e" not in locator.inner_text()


@pytest.mark.parametrize("size", [(1280, 800), (390, 844)], ids=["desktop", "phone"])
def test_files_the_agent_writes_show_hidden_characters_and_long_tokens_stay_on_screen(
    start_server: ServerFactory, browser: Browser, size: tuple[int, int]
) -> None:
    server = start_server(agent=AGENT)
    context = browser.new_context(viewport={"width": size[0], "height": size[1]})
    try:
        page = context.new_page()
        open_session(page, server)
        send_prompt(page, "files")
        expect(page.locator("#session")).to_have_attribute("data-turn-state", "idle", timeout=20_000)
        # The thread: a file change per file written, and the tool call's diff of the new file.
        written = page.locator('#thread [data-role="file-change"]')
        expect(written).to_have_count(2)
        shows_markers_only(written.first.locator(".d-path"))
        shows_markers_only(page.locator('[data-tool-call-id="files-1"] .d-path'))
        send_prompt(page, "long")
        expect(page.locator('[data-option-id="long"]')).to_be_visible(timeout=20_000)
        assert overflow(page) <= 0
        # Each diff table scrolls inside its own box; the boxes, the folder line and the work bar stay on screen.
        for selector in ('#thread [data-role="file-change"]', "#thread .d-scroll", ".cwd", ".workbar a",
                         ".workbar button", ".workbar summary", ".workbar label"):  # fmt: skip
            assert fits(page, page.locator(selector)), selector
        page.click('[data-role="rename"] summary')
        expect(page.locator("#rename-title")).to_be_visible()
        assert overflow(page) <= 0
        assert fits(page, page.locator('[data-role="rename"] form, [data-role="rename"] form > *'))
        page.click('[data-role="rename"] summary')
        # Changes: the new file's name, then its diff.
        page.click('[data-action="show-changes"]')
        entry = page.locator('#side-panel .change[data-path^="notes"]')
        shows_markers_only(entry)
        shows_markers_only(page.locator('#side-panel .change[data-path^="draft"]'))
        assert overflow(page) <= 0
        assert fits(page, page.locator("#side-panel"))
        entry.locator("a").click()
        shows_markers_only(page.locator('#side-panel [data-role="change-diff"] .d-path'))
        page.click("#side-panel .side-panel-bar a")  # "All changes"
        page.locator('#side-panel .change[data-path="wide.txt"] a').click()
        expect(page.locator('#side-panel [data-role="change-diff"] .d-table')).to_be_visible()
        assert overflow(page) <= 0
        page.screenshot(path=f"/tmp/page-text-files-{size[0]}.png")
    finally:
        context.close()


def test_a_folder_name_with_a_bidi_override_shows_its_marker_in_the_header(browser: Browser, tmp_path: Path) -> None:
    workspace = tmp_path / "work\u202egnp.exe"
    workspace.mkdir()
    with own_server(workspace, AGENT) as server:
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        try:
            page = context.new_page()
            open_session(page, server)
            shows_markers_only(page.locator(".session-header .cwd"))
        finally:
            context.close()


@pytest.mark.parametrize("width", [1280, 390])
def test_the_agents_own_sessions_keep_long_folders_and_titles_in_the_page(
    start_server: ServerFactory, browser: Browser, tmp_path: Path, width: int
) -> None:
    """The folder line of a session the agent lists (tests/agents/resumable_agent.py): 30,000 characters, and a
    title with a bidi override."""
    sessions_file = tmp_path / "agent-sessions.json"
    listed = {"s-1": {"cwd": "/" + "w" * 30_000, "title": "Fix \u202egnp.exe " + "t" * 30_000, "turns": []}}
    sessions_file.write_text(json.dumps(listed))
    resumable = f"{sys.executable} {AGENTS / 'resumable_agent.py'}"
    server = start_server(agent=resumable, RESUME_MODE="list", SESSIONS_FILE=str(sessions_file))
    context = browser.new_context(viewport={"width": width, "height": 800})
    try:
        page = context.new_page()
        page.goto(server.sign_in_url("/"))
        page.click('a[href*="/agents/"][href$="/sessions"]')
        item = page.locator('[data-agent-session-id="s-1"]')
        expect(item).to_contain_text("w" * 200)
        shows_markers_only(item.locator("strong"))
        assert overflow(page) <= 0
        assert fits(page, item.locator("code, strong, button"))
    finally:
        context.close()
