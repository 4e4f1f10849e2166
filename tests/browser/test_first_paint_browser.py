"""A session rebuilt after a restart whose big message its first paint left as text: in a real Chromium, the page
shows the text at once and then the message as Markdown, exactly as before the restart (MessageDocs.for_page)."""

from __future__ import annotations

import asyncio
import signal
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from markupsafe import escape
from playwright.sync_api import Page, expect

from tests.render.test_first_paint import FLOOD_AGENT, big_markdowns
from tests.support.restarts import drive, session_page, stop, thread_html
from tests.support.servers import ServerFactory
from tests.support.urls import URLS
from webclient.render.markdown import render_markdown


def test_a_big_message_shown_as_text_at_first_paint_becomes_its_markdown(
    page: Page, start_server: ServerFactory, tmp_path: Path
) -> None:
    env = {"WEBCLIENT_DATA_DIR": str(tmp_path / "data")}
    texts = big_markdowns()
    text = texts[0]
    first = start_server(agent=FLOOD_AGENT, **env)
    with ThreadPoolExecutor(1) as thread:  # Playwright's event loop runs in this one
        session_id = thread.submit(asyncio.run, drive(first, texts)).result()
    before = thread_html(session_page(first, session_id))
    stop(first, signal.SIGTERM)

    second = start_server(agent=FLOOD_AGENT, **env)
    response = page.goto(second.sign_in_url(URLS.for_("session", session_id=session_id)))
    assert response is not None and f'md-as-text">{escape("pong: " + text[:2000])}' in response.text()
    message = page.locator('[data-role="agent-message"]').first  # the oldest, left as text
    code_blocks = render_markdown(f"pong: {text}").count('<pre><code class="language-python">')
    expect(message.locator(".md:not(.md-live) pre")).to_have_count(code_blocks, timeout=30_000)
    expect(message.locator(".md-live")).to_have_text("")
    assert message.locator(".md:not(.md-live)").inner_text().startswith("pong: Paragraph 0 says why and how.")
    assert thread_html(session_page(second, session_id)) == before
