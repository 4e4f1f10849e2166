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
from webclient.render.markdown import render_markdown
from webclient.render.message_docs import MessageDocs, MessageView, Progress
from webclient.viewmodel.entries import MessageEntry

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


def test_a_first_paint_renders_messages_while_they_fit_and_shows_the_others_as_text() -> None:
    called: list[None] = []
    docs = message_docs(lambda: called.append(None))
    small, big, bigger, last = finished(1, 1_000), finished(2, BUDGET - 1_500), finished(3, 5_000), finished(4, 400)
    page = docs.for_page()
    views = [page.view(entry, 1.0) for entry in (small, big, bigger, last)]
    assert html(views[0]) == render_markdown(small.text)
    assert html(views[1]) == render_markdown(big.text)
    assert views[2].blocks == [] and views[2].raw == bigger.text and views[2].before == views[2].after == ""
    assert views[2].progress == Progress(0, 0, 0, len(bigger.text), streaming=False, attachments=0)
    assert html(views[3]) == render_markdown(last.text)  # a message that still fits (500 left) is rendered
    assert called == [None]  # once, when the first message was left as text
    # Another page painted before the text was rendered shows it as text again, and rendered what it had.
    again = docs.for_page()
    assert again.view(bigger, 2.0).raw == bigger.text
    assert html(again.view(big, 2.0)) == render_markdown(big.text)
    assert called == [None]


def test_the_next_view_of_a_message_left_as_text_renders_it_as_an_unhurried_first_paint_would() -> None:
    docs = message_docs()
    entries = [finished(seq, BUDGET // 2) for seq in range(1, 6)]
    page = docs.for_page()
    assert [bool(page.view(entry, 1.0).raw) for entry in entries] == [False, False, True, True, True]
    expected = [html(MessageDocs().view(entry, 1.0)) for entry in entries]
    # The socket's resync renders through ``view``, never leaving anything as text.
    assert [html(docs.view(entry, 2.0)) for entry in entries] == expected
    assert not docs.render_pending()
    assert [html(docs.for_page().view(entry, 3.0)) for entry in entries] == expected


def test_pending_messages_render_newest_first_and_then_a_first_paint_shows_them_whole() -> None:
    docs = message_docs()
    entries = [finished(seq, BUDGET) for seq in range(1, 5)]
    page = docs.for_page()
    assert [bool(page.view(entry, 1.0).raw) for entry in entries] == [False, True, True, True]
    assert docs.render_pending()
    page = docs.for_page()
    assert [bool(page.view(entry, 2.0).raw) for entry in entries] == [False, True, True, False]
    assert docs.render_pending()
    assert not docs.render_pending()
    assert not docs.render_pending()
    page = docs.for_page()
    assert [html(page.view(entry, 3.0)) for entry in entries] == [render_markdown(entry.text) for entry in entries]


def test_a_streaming_message_is_never_left_as_text() -> None:
    docs = message_docs()
    page = docs.for_page()
    page.view(finished(1, BUDGET), 1.0)
    streaming = MessageEntry(seq=2, turn=1, parts=["Still **going**.\n\nMore"], streaming=True)
    view = page.view(streaming, 1.0)
    assert "<strong>going</strong>" in view.before and view.raw == ""
    assert not docs.render_pending()


def test_messages_the_thread_let_go_of_are_not_rendered_after_all() -> None:
    docs = message_docs()
    page = docs.for_page()
    for seq in range(1, 5):
        page.view(finished(seq, BUDGET), 1.0)
    docs.keep(first_seq=4)
    assert not docs.render_pending()  # 2 and 3 are forgotten: only 4 was left to render
    assert html(docs.for_page().view(finished(4, BUDGET), 2.0)) == render_markdown(finished(4, BUDGET).text)


# -- a real server, restarted on its store -------------------------------------------------------------------


def big_markdown() -> str:
    """More Markdown than a first paint renders from scratch, in paragraphs, lists and code blocks."""
    block = "Paragraph {n} says *why* and `how`.\n\n- item {n}\n- next\n\n```python\nvalue = {n} * 2\n```\n\n"
    text = "".join(block.format(n=n) for n in range(MessageDocs.FIRST_PAINT_CHARS // 60))
    assert MessageDocs.FIRST_PAINT_CHARS < len(text) < 2 * MessageDocs.FIRST_PAINT_CHARS
    return text


def test_a_rebuilt_sessions_big_message_shows_as_text_then_exactly_as_before_the_restart(
    start_server: ServerFactory, tmp_path: Path
) -> None:
    env = {"WEBCLIENT_DATA_DIR": str(tmp_path / "data")}
    text = big_markdown()
    rendered = render_markdown(f"pong: {text}")  # the agent's answer
    first = start_server(agent=FLOOD_AGENT, **env)
    session_id = asyncio.run(drive(first, [text]))
    before = thread_html(session_page(first, session_id))
    assert rendered in before
    stop(first, signal.SIGTERM)

    as_text = f'-tail">{escape("pong: " + text[:2000])}'
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
    url = server.url.replace("http", "ws") + f"/sessions/{session_id}/ws"
    async with websockets.connect(url, additional_headers=server.headers, max_size=None) as socket:
        async with asyncio.timeout(30):
            while 'id="thread"' not in (frame := str(await socket.recv())):
                pass
    return frame
