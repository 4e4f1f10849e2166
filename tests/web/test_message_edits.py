"""A streaming message's rest as edits of what the page holds (`webclient.web.live.message_edits`): applied as
`static/js/live-text.js` applies them, they end as the message rendered whole, and send each byte about once."""

from __future__ import annotations

import random

import pytest

from webclient.render.markdown import render_markdown
from webclient.render.message_docs import MessageDocs
from webclient.viewmodel.entries import MessageEntry
from webclient.web.live.message_edits import FIELD, RECORD, Held, common_prefix, edit, storable, units


class Page:
    """A message as the page holds it, edited as `static/js/live-text.js` edits it (lengths in UTF-16 units)."""

    def __init__(self) -> None:
        self.finished = ""
        self.before = ""
        self.after = ""

    def apply(self, record: str) -> None:
        assert record.startswith(RECORD) and RECORD not in record[1:]
        _id, cut, moved, added, *after = record[1:].split(FIELD)
        before = self.before.encode("utf-16-le")
        if cut == "r":
            before = b""
        elif cut:
            before = before[: len(before) - 2 * int(cut)]
        whole = before.decode("utf-16-le") + added
        if moved:
            encoded = whole.encode("utf-16-le")
            self.finished += encoded[: 2 * int(moved)].decode("utf-16-le")
            whole = encoded[2 * int(moved) :].decode("utf-16-le")
        self.before = whole
        if after:
            self.after = after[0]


def test_common_prefix_and_units() -> None:
    assert common_prefix("abcdef", "abcxyz") == 3
    assert common_prefix("abc", "abc") == 3 and common_prefix("", "x") == 0 and common_prefix("ab", "abc") == 2
    for _ in range(200):
        a = "".join(random.choices("ab", k=random.randrange(20)))
        b = "".join(random.choices("ab", k=random.randrange(20)))
        expected = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
        assert common_prefix(a, b) == expected, (a, b)
    assert units("abc") == 3 and units("é") == 1 and units("😀") == 2  # a character past U+FFFF is two units


def test_an_agents_separators_and_lone_surrogates_never_reach_a_record() -> None:
    record, held = edit("entry-3", None, "", f"<p>a{RECORD}b{FIELD}c\udcff", "</p>")
    assert record.count(RECORD) == 1 and record.count(FIELD) == 4
    assert held.before == storable(f"<p>a{RECORD}b{FIELD}c\udcff") == "<p>a\ufffdb\ufffdc\ufffd"
    assert record == RECORD + FIELD.join(["3", "r", "", held.before, "</p>"])


def test_an_edit_sends_what_changed_and_names_a_scoped_entry_whole() -> None:
    held = Held("<p>Hello wor", "</p>")
    record, held = edit("entry-12", held, "", "<p>Hello world, <code>x</code>", "</p>")
    assert record == RECORD + FIELD.join(["12", "", "", "ld, <code>x</code>"])  # the after did not change
    record, held = edit("sub-2-entry-4", held, "", "<p>Hello world, <strong>x", "</strong></p>")
    assert record == RECORD + FIELD.join(["sub-2-entry-4", "13", "", "strong>x", "</strong></p>"])  # cut from "<"
    assert edit("entry-12", held, "", held.before, held.after)[0] == ""


@pytest.mark.parametrize("seed", range(4))
def test_a_message_streamed_in_random_pieces_ends_as_rendered_whole_and_sends_its_text_about_once(seed: int) -> None:
    rng = random.Random(seed)
    words = ["plain", "words", "`code()`", "**bold**", "<tag>", "&", "😀", "é", "[a link](https://example.com)"]
    paragraphs = [" ".join(rng.choices(words, k=rng.randrange(5, 40))) for _ in range(12)]
    blocks = [*paragraphs[:4], "- one\n- two `x`\n- three", *paragraphs[4:8], "```python\ndef f(x):\n    return x\n```"]
    text = "\n\n".join([*blocks, "| a | b |\n|---|---|\n| 1 | 2 |", *paragraphs[8:]]) + "\n"
    docs, page, held = MessageDocs(), Page(), None
    entry = MessageEntry(seq=1, turn=1, parts=[""])
    shown_blocks, sent, now, at = 0, 0, 0.0, 0
    while at < len(text):
        step = rng.randrange(1, 40)
        entry.parts.append(text[at : at + step])
        at += step
        now += 0.05
        view = docs.view(entry, now)
        finished = "".join(view.blocks[shown_blocks : view.progress.blocks])
        shown_blocks = view.progress.blocks
        record, held = edit("entry-1", held, finished, view.live_before, view.live_after)
        if record:
            page.apply(record)
            sent += len(record)
        assert (page.before, page.after) == (held.before, held.after)
    entry.streaming = False
    view = docs.view(entry, now + 1)
    record, held = edit("entry-1", held, "".join(view.blocks[shown_blocks:]), view.live_before, view.live_after)
    page.apply(record)
    sent += len(record)
    assert page.finished == render_markdown(text) and page.before == page.after == ""
    assert sent < 1.5 * len(render_markdown(text)), sent / len(render_markdown(text))
