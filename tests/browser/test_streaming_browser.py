"""A streamed answer, edited in place as it streams (`webclient.web.live.message_edits`, `static/js/live-text.js`),
ends as the very HTML a page rendered whole shows, in Chromium."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.support.browser import open_session, send_prompt, until_connected
from tests.support.servers import ServerFactory


def test_a_streamed_markdown_answer_ends_as_the_page_renders_it_whole(start_server: ServerFactory, page: Page) -> None:
    server = start_server(agent=None, DEMO_AGENT_SPEED="0.2")  # the demo agent, paced: a frame edits the rest
    open_session(page, server)
    page.evaluate(
        """() => {
             window.edits = 0;
             window.seenLive = 0;
             const session = document.getElementById("session");
             session.addEventListener("htmx:wsBeforeMessage", (event) => {
               if (event.detail.message.startsWith("\\x1e")) window.edits += 1;
             });
             session.addEventListener("htmx:wsAfterMessage", () => {
               const live = document.querySelector('[data-role="agent-message"] .md-live');
               if (live && live.textContent) window.seenLive += 1;
             });
           }"""
    )
    send_prompt(page, "markdown")
    answer = page.locator('[data-role="agent-message"]').last
    expect(answer.locator("table")).to_have_count(1, timeout=30_000)
    expect(page.locator("#session")).to_have_attribute("data-turn-state", "idle", timeout=30_000)
    assert page.evaluate("window.seenLive") > 10  # the rest was shown as it grew
    assert page.evaluate("window.edits") > 10  # by edits, not by fragments
    streamed = answer.locator(".md").first.inner_html()
    expect(answer.locator(".md-live")).to_have_text("")
    assert "```" not in streamed and "**" not in streamed  # no Markdown left as text

    page.reload()
    until_connected(page)
    whole = page.locator('[data-role="agent-message"]').last.locator(".md").first.inner_html()
    assert streamed == whole
