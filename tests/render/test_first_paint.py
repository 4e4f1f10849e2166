"""A page's first paint of a session whose messages were never rendered (rebuilt after a restart): big finished
messages show as text at first, then as the very Markdown a slower first paint had shown (MessageDocs.for_page)."""

from __future__ import annotations

import asyncio
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path

import websockets
from markupsafe import escape

from tests.support.restarts import drive, session_page, stop, thread_html
from tests.support.servers import AGENTS, Server, ServerFactory
from tests.support.urls import socket_at
from webclient.render.markdown import render_markdown
from webclient.render.message_docs import MessageDocs, MessageView, Progress
from webclient.viewmodel.entries import MessageEntry
from webclient.web.live.live_view import LiveView

FLOOD_AGENT = f"{sys.executable} {AGENTS / 'flood_agent.py'}"
"""Answers a prompt with one message: "pong: " and the prompt."""
BUDGET = 10_000
"""A first paint's budget in these tests (MessageDocs.FIRST_PAINT_CHARS is 20 times more: slow to render over)."""


def message_docs(on_pending: Callable[[], None] | None = None) -> MessageDocs:
    docs = MessageDocs(on_pending)
    docs.FIRST_PAINT_CHARS = BUDGET
    return docs


def finished(seq: int, chars: int) -> MessageEntry:
    """A finished agent message of ``chars`` characters of Markdown: paragraphs and highlighted code."""
    block = f"Paragraph {seq} with **bold** and `code`.\n\n```python\nx = [i for i in range({seq})]\n```\n\n"
    return MessageEntry(seq=seq, turn=1, parts=[(block * (chars // len(block) + 1))[:chars]], streaming=False)


def html(view: MessageView) -> str:
    return "".join((str(view.html), str(view.before), view.raw, str(view.after)))


def test_a_first_paint_renders_the_newest_messages_that_fit_and_shows_the_others_as_text() -> None:
    called: list[None] = []
    docs = message_docs(lambda: called.append(None))
    window = [finished(1, 1_000), finished(2, 6_000), finished(3, 5_000), finished(4, 400)]
    page = docs.for_page(window)
    views = [page.view(entry, 1.0) for entry in window]
    # From the newest: 4 and 3 fit (4,600 characters left), 2 does not, 1 still does.
    assert [html(view) for view in views[2:]] == [render_markdown(entry.text) for entry in window[2:]]
    assert html(views[0]) == render_markdown(window[0].text)
    assert views[1].blocks == [] and views[1].raw == window[1].text
    assert (views[1].before, views[1].after) == ('<p class="md-as-text">', "</p>")  # its lines kept
    assert views[1].progress == Progress(0, 0, 0, len(window[1].text), streaming=False, attachments=0)
    assert called == [None]  # when the first message was left as text
    # A page painted again before the text was rendered shows it as text again, and the others rendered.
    again = docs.for_page(window)
    assert [bool(again.view(entry, 2.0).raw) for entry in window] == [False, True, False, False]
    assert called == [None]


def test_the_next_view_of_a_message_left_as_text_renders_it_as_an_unhurried_first_paint_would() -> None:
    docs = message_docs()
    window = [finished(seq, BUDGET // 2) for seq in range(1, 6)]
    page = docs.for_page(window)
    assert [bool(page.view(entry, 1.0).raw) for entry in window] == [True, True, True, False, False]
    expected = [html(MessageDocs().view(entry, 1.0)) for entry in window]
    # The socket's resync renders through ``view``, never leaving anything as text.
    assert [html(docs.view(entry, 2.0)) for entry in window] == expected
    assert not docs.render_pending()
    page = docs.for_page(window)
    assert [html(page.view(entry, 3.0)) for entry in window] == expected


def test_pending_messages_render_newest_first_and_then_a_first_paint_shows_them_whole() -> None:
    docs = message_docs()
    window = [finished(seq, BUDGET) for seq in range(1, 5)]
    page = docs.for_page(window)
    assert [bool(page.view(entry, 1.0).raw) for entry in window] == [True, True, True, False]
    assert docs.render_pending()
    page = docs.for_page(window)
    assert [bool(page.view(entry, 2.0).raw) for entry in window] == [True, True, False, False]
    assert docs.render_pending()
    assert not docs.render_pending()
    assert not docs.render_pending()
    page = docs.for_page(window)
    assert [html(page.view(entry, 3.0)) for entry in window] == [render_markdown(entry.text) for entry in window]


def test_a_user_message_takes_none_of_the_budget_and_a_streaming_message_is_never_left_as_text() -> None:
    docs = message_docs()
    user = MessageEntry(seq=2, turn=1, kind="user-message", parts=["x" * BUDGET], streaming=False)
    window = [finished(1, BUDGET), user]
    assert html(docs.for_page(window).view(window[0], 1.0)) == render_markdown(window[0].text)
    streaming = MessageEntry(seq=4, turn=1, parts=["Still **going**.\n\nMore"], streaming=True)
    window = [finished(3, BUDGET + 1), streaming]
    page = docs.for_page(window)
    assert page.view(window[0], 1.0).raw == window[0].text
    view = page.view(streaming, 1.0)
    assert "<strong>going</strong>" in view.before and view.raw == ""


def test_messages_the_thread_let_go_of_are_not_rendered_after_all() -> None:
    docs = message_docs()
    window = [finished(seq, BUDGET) for seq in range(1, 6)]
    page = docs.for_page(window)
    for entry in window:
        page.view(entry, 1.0)
    docs.keep(first_seq=4)
    assert not docs.render_pending()  # 1 to 3 are forgotten: only 4 was left to render (5 was rendered)
    assert html(docs.for_page(window[3:]).view(window[3], 2.0)) == render_markdown(window[3].text)


# -- a real server, restarted on its store -------------------------------------------------------------------


def big_markdowns() -> list[str]:
    """Two messages of Markdown (paragraphs, lists and code blocks), each short enough to be shown whole (not by its
    end: `MessageDocs.LONG_MESSAGE`), together more than a first paint renders from scratch (the older is left as
    text), and with the second prompt less than a window holds (`LiveView.WINDOW_CHARS`): the page shows both."""
    block = "Paragraph {n} says *why* and `how`.\n\n- item {n}\n- next\n\n```python\nvalue = {n} * 2\n```\n\n"
    each = 60_000 // 88
    texts = ["".join(block.format(n=n) for n in range(m * each, (m + 1) * each)) for m in range(2)]
    assert all(len(text) < MessageDocs.LONG_MESSAGE for text in texts)
    assert len(texts[1]) < MessageDocs.FIRST_PAINT_CHARS < sum(map(len, texts))
    assert 3 * max(map(len, texts)) < LiveView.WINDOW_CHARS
    return texts


def test_a_rebuilt_sessions_big_message_shows_as_text_then_exactly_as_before_the_restart(
    start_server: ServerFactory, tmp_path: Path
) -> None:
    env = {"WEBCLIENT_DATA_DIR": str(tmp_path / "data")}
    texts = big_markdowns()
    text = texts[0]
    rendered = render_markdown(f"pong: {text}")  # the agent's answer
    first = start_server(agent=FLOOD_AGENT, **env)
    session_id = asyncio.run(drive(first, texts))
    before = thread_html(session_page(first, session_id))
    assert rendered in before
    stop(first, signal.SIGTERM)

    as_text = f'md-as-text">{escape("pong: " + text[:2000])}'
    second = start_server(agent=FLOOD_AGENT, **env)
    painted = thread_html(session_page(second, session_id))
    assert as_text in painted and rendered not in painted
    # Rendered in the background: a page soon shows the message as it was, with no socket involved.
    deadline = time.monotonic() + 30
    while (again := thread_html(session_page(second, session_id))) != before and time.monotonic() < deadline:
        time.sleep(0.2)
    assert again == before
    stop(second, signal.SIGTERM)

    third = start_server(agent=FLOOD_AGENT, **env)
    assert as_text in thread_html(session_page(third, session_id))
    assert rendered in asyncio.run(resync_frame(third, session_id))  # the page's socket brings the Markdown at once


async def resync_frame(server: Server, session_id: str) -> str:
    """The frame a page's socket gets first: its window re-rendered."""
    url = socket_at(server.url, session_id)
    async with websockets.connect(url, additional_headers=server.headers, max_size=None) as socket:
        async with asyncio.timeout(30):
            while 'id="thread"' not in (frame := str(await socket.recv())):
                pass
    return frame
