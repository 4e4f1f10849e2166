"""A long finished message shows by its end, the part before it on request (`MessageDocs.by_its_end`,
`earlier_part`): a page never holds megabytes of one answer, and nothing of it is lost."""

from __future__ import annotations

import json
import re

from markupsafe import escape

from webclient.render.markdown import render_markdown
from webclient.render.message_docs import MessageDocs, block_start, earlier_part
from webclient.viewmodel.entries import MessageEntry

LONG = MessageDocs.LONG_MESSAGE


def long_message(text: str, seq: int = 7) -> MessageEntry:
    return MessageEntry(seq=seq, turn=1, parts=[text], streaming=False)


def paragraphs(count: int) -> str:
    return "\n\n".join(f"Paragraph {n:05d} " + "word " * 18 for n in range(count))


CONTROL = re.compile(r'hx-vals="([^"]+)"')


def asked_before(html: str) -> int | None:
    found = CONTROL.search(html)
    return json.loads(found.group(1).replace("&#34;", '"'))["before"] if found else None


def test_a_long_finished_message_shows_its_end_from_a_block_and_a_control_for_the_rest() -> None:
    text = paragraphs(10_000)  # about 1.1 MB
    view = MessageDocs().view(long_message(text), 1.0)
    html = str(view.html)
    before = asked_before(html)
    assert before is not None and len(text) - LONG <= before < len(text) - LONG + 200
    assert text[before - 2 : before] == "\n\n" and text[before:].startswith("Paragraph ")
    assert html.endswith(render_markdown(text[before:]))
    assert 'data-action="message-earlier"' in html and "Show the earlier part (980 kB more)" in html
    assert view.raw == "" and view.progress.generation < 0 and view.progress.chars == len(text)


def test_the_earlier_parts_in_turn_make_the_whole_message() -> None:
    text = paragraphs(4_000)
    entry = long_message(text)
    before = asked_before(str(MessageDocs().view(entry, 1.0).html))
    pieces = []
    while before is not None:
        part = earlier_part(entry, before)
        assert part.startswith(f'<div id="entry-7-md-cut-{before}" hx-swap-oob="outerHTML">')
        cut = asked_before(part) or 0
        assert cut < before
        pieces.append(text[cut:before])
        assert part.endswith(render_markdown(text[cut:before]) + "</div>")
        before = asked_before(part)
    assert "".join(reversed(pieces)) + text[len("".join(pieces)) :] == text


def test_a_message_is_never_cut_inside_a_fenced_code_block() -> None:
    code = "```python\n" + "\n\n".join(f"x = {n}" for n in range(30_000)) + "\n```\n\nAfter the code.\n\n"
    text = code + paragraphs(100)
    cut = block_start(text, len(code) // 2)
    assert cut == text.index("After the code.")
    assert block_start(text, 0) == 0


def test_a_short_or_streaming_message_shows_whole() -> None:
    docs = MessageDocs()
    short = long_message(paragraphs(10))
    assert asked_before(str(docs.view(short, 1.0).html)) is None
    streaming = MessageEntry(seq=8, turn=1, parts=[paragraphs(2_000)], streaming=True)
    assert asked_before(str(docs.view(streaming, 1.0).html)) is None


def test_the_earlier_control_escapes_what_it_carries() -> None:
    html = str(MessageDocs().view(long_message(paragraphs(2_000), seq=3), 1.0).html)
    values = json.dumps({"action": "message_earlier", "seq": 3, "before": asked_before(html)})
    assert f'hx-vals="{escape(values)}"' in html
