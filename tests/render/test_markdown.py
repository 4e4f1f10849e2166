"""Tests for webclient.render.markdown (safe rendering, incremental streaming) and message_docs.MessageDocs.view."""

from __future__ import annotations

import random
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from markupsafe import escape

from webclient.render.highlight import COLOURED
from webclient.render.markdown import MAX_BLOCK_CHARS, MarkdownStream, _sanitize, render_markdown
from webclient.render.message_docs import MessageDocs, MessageView, Progress
from webclient.render.rendering import Renderer
from webclient.viewmodel.entries import MessageEntry

# -- helpers -------------------------------------------------------------------------------------


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs.extend((tag, name, value or "") for name, value in attrs)


def parse(markup: str) -> _Collector:
    collector = _Collector()
    collector.feed(markup)
    collector.close()
    return collector


def scheme(url: str) -> str:
    """The scheme a browser would see: control characters and whitespace dropped, lower case."""
    cleaned = re.sub(r"[\x00-\x20\x7f]", "", url).lower()
    match = re.match(r"([a-z][a-z0-9+.\-]*):", cleaned)
    return match.group(1) if match else ""


def stream(source: str, size: int) -> tuple[MarkdownStream, list[tuple[list[str], int]]]:
    """Feed ``source`` in pieces of ``size`` characters; returns the stream and, per step, its blocks and how much
    of the source fed so far they cover (``committed``: the rest is the tail, shown as plain text)."""
    doc = MarkdownStream()
    steps = []
    for end in range(size, len(source) + size, size):
        fed = source[:end]
        doc.update(fed)
        assert fed.endswith(doc.tail)
        steps.append((list(doc.blocks), len(fed) - len(doc.tail)))
    return doc, steps


DOCUMENT = (
    "# Plan\n\nI will *read* the code first,\nthen fix it.\n\n"
    "```python\ndef f(x):\n\n    return x + 1\n```\n\n"
    "- one\n- two\n\n- three\n\n"
    "> quoted\n> lines\n\n"
    "| file | lines |\n|:-----|------:|\n| a.py | 10 |\n\n"
    "---\n\n    indented\n\n    code\n\n"
    "Done: see [docs](https://example.com/docs).\n"
)

# -- render_markdown: safety ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "source",
    [
        "<script>alert(1)</script>",
        "hello <script src=//evil.example/x.js></script>",
        '<img src=x onerror="alert(1)">',
        "<iframe src='https://evil.example'></iframe>",
        "<svg onload=alert(1)>",
        '<a href="javascript:alert(1)">click</a>',
        "<div>\n<script>alert(1)</script>\n</div>",
        "- item <b onmouseover=alert(1)>x</b>",
    ],
)
def test_render_markdown_escapes_raw_html(source: str) -> None:
    out = render_markdown(source)
    found = parse(out)
    assert not {"script", "img", "iframe", "svg", "div", "b"} & set(found.tags)
    assert not [a for a in found.attrs if a[1].startswith("on")]
    assert "&lt;" in out


@pytest.mark.parametrize(
    "source",
    [
        "[x](javascript:alert(1))",
        "[x](JaVaScRiPt:alert(1))",
        "[x](  javascript:alert(1)  )",
        "[x](<javascript:alert(1)>)",
        "[x](&#106;avascript:alert(1))",
        "[x](&#x6A;avascript&#x3A;alert(1))",
        "[x](javascript&colon;alert(1))",
        "[x](java%0ascript:alert(1))",
        "[x](\\javascript:alert(1))",
        "<javascript:alert(1)>",
        "<JAVASCRIPT:alert(1)>",
        "[x](vbscript:msgbox(1))",
        "[x](VBScript:msgbox(1))",
        "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
        "[x](DATA:text/html,<script>alert(1)</script>)",
        "![x](data:text/html,x)",
        "![x](javascript:alert(1))",
        "[x][ref]\n\n[ref]: javascript:alert(1)",
        "[x][ref]\n\n[ref]: &#x64;ata:text/html,x",
        '[x](https://ok.example "title") [y](javascript:alert(1) "t")',
    ],
)
def test_render_markdown_never_produces_script_links(source: str) -> None:
    found = parse(render_markdown(source))
    for tag, name, value in found.attrs:
        if name in ("href", "src"):
            assert scheme(value) not in ("javascript", "vbscript", "data", "file"), (tag, name, value)


def test_render_markdown_keeps_safe_links_with_rel() -> None:
    found = parse(render_markdown("[docs](https://example.com/a?b=1) and <mailto:me@example.com>"))
    hrefs = [value for _, name, value in found.attrs if name == "href"]
    assert hrefs == ["https://example.com/a?b=1", "mailto:me@example.com"]
    assert ("a", "rel", "noopener noreferrer nofollow") in found.attrs


def test_render_markdown_highlights_fenced_code() -> None:
    out = render_markdown("```python\ndef f(x):\n    return x + 1\n```\n")
    found = parse(out)
    classes = [value for tag, name, value in found.attrs if tag == "span" and name == "class"]
    assert classes and all(c.startswith("hl-") for c in classes)
    assert ("code", "class", "language-python") in found.attrs
    assert "<pre><code" in out


def test_fenced_code_has_a_span_only_where_a_style_sheet_colours_it() -> None:
    """Names, punctuation and operators were most of a highlighted block's bytes, each in a span no style colours."""
    out = render_markdown("```python\nclass Cache:\n    x = [i * i for i in range(3)]  # squares\n    s = 'a<b'\n```\n")
    assert out == (
        '<pre><code class="language-python"><span class="hl-k">class</span> <span class="hl-nc">Cache</span>:\n'
        '    x = [i * i <span class="hl-k">for</span> i <span class="hl-ow">in</span> <span class="hl-nb">range</span>('
        '<span class="hl-mi">3</span>)]  <span class="hl-c1"># squares</span>\n'
        "    s = <span class=\"hl-s1\">'a&lt;b'</span>\n</code></pre>\n"
    )


def test_the_coloured_classes_are_those_the_style_sheets_colour() -> None:
    styled = set()
    for sheet in (Path(__file__).parents[2] / "static").glob("*.css"):
        styled |= set(re.findall(r"\.(hl-[a-z0-9]+)", sheet.read_text()))
    assert styled == COLOURED


def test_render_markdown_unknown_language_and_html_in_code_are_escaped() -> None:
    out = render_markdown("```nosuchlang\n<script>alert(1)</script>\n```\n\n```html\n<b onclick=x>\n```\n")
    found = parse(out)
    assert "script" not in found.tags and "b" not in found.tags
    assert "&lt;script&gt;" in out


def test_render_markdown_renders_tables_with_alignment() -> None:
    found = parse(render_markdown("| a | b |\n|:--|:-:|\n| 1 | 2 |\n"))
    assert {"table", "thead", "tbody", "tr", "th", "td"} <= set(found.tags)
    assert ("td", "class", "md-align-center") in found.attrs
    assert ("th", "class", "md-align-left") in found.attrs
    assert not [attr for attr in found.attrs if attr[1] == "style"]  # the page's CSP allows no inline style


def test_render_markdown_keeps_only_alignment_classes_on_table_cells() -> None:
    cells = '<td class="md-align-right">1</td><td class="plan-item x" style="position:fixed">2</td>'
    out = _sanitize(f"<table><tr>{cells}</tr></table>")
    assert 'class="md-align-right"' in out and "plan-item" not in out and "style" not in out


def test_render_markdown_basic_inline_and_block_elements() -> None:
    found = parse(render_markdown("# T\n\n**b** *i* ~~s~~ `c`\n\n1. x\n\n> q\n"))
    assert {"h1", "strong", "em", "s", "code", "ol", "li", "blockquote", "p"} <= set(found.tags)


# -- MarkdownStream ------------------------------------------------------------------------------


@pytest.mark.parametrize("size", [1, 2, 3, 7, 16, 50])
def test_stream_in_pieces_then_final_equals_whole_render(size: int) -> None:
    doc, _ = stream(DOCUMENT, size)
    doc.update(DOCUMENT, final=True)
    assert doc.html == render_markdown(DOCUMENT)
    assert doc.tail == "" and doc.final


@pytest.mark.parametrize("size", [1, 3, 16])
def test_stream_blocks_only_appended_and_committed_grows(size: int) -> None:
    doc, steps = stream(DOCUMENT, size)
    for (before, committed_before), (after, committed_after) in zip(steps, steps[1:], strict=False):
        assert after[: len(before)] == before
        assert committed_after >= committed_before
    assert len(doc.blocks) > 3
    assert doc.generation == 0


@pytest.mark.parametrize("size", [1, 5])
def test_stream_blocks_render_the_committed_source(size: int) -> None:
    doc, steps = stream(DOCUMENT, size)
    for blocks, committed in steps:
        assert "".join(blocks) == render_markdown(DOCUMENT[:committed])
        assert committed == 0 or DOCUMENT[:committed].endswith("\n\n")


def test_stream_never_cuts_inside_unclosed_code_fence() -> None:
    head = "Intro.\n\n"
    fence = "```python\nimport os\n\n\nprint(os.getcwd())\n\n# more\n\n"
    source = head + fence + "```\n\nAfter.\n"
    fence_start, fence_end = len(head), len(head) + len(fence) + len("```\n")
    doc, steps = stream(source, 1)
    for _, committed in steps:
        assert committed <= fence_start or committed >= fence_end
    assert any(committed == fence_start for _, committed in steps)
    assert steps[-1][1] >= fence_end
    doc.update(source, final=True)
    assert doc.html == render_markdown(source)


def test_stream_single_block_stays_tail_until_final() -> None:
    doc = MarkdownStream()
    doc.update("just one paragraph\nwith two lines")
    assert (doc.blocks, doc.tail) == ([], "just one paragraph\nwith two lines")
    doc.update("just one paragraph\nwith two lines", final=True)
    assert doc.blocks == [render_markdown("just one paragraph\nwith two lines")] and doc.generation == 0


def test_stream_a_block_that_never_ends_is_shown_as_text_in_pieces() -> None:
    """A remote server streamed one paragraph forever, and every catch-up parsed all of it: the server stalled."""
    doc, text = MarkdownStream(), ""
    for _ in range(16):  # 800 kB of one paragraph, eight times the bound, as a fast stream brings it
        text += "tick <b>" * 6250
        doc.update(text)
        assert len(doc.tail) <= MAX_BLOCK_CHARS  # what the next catch-up parses again
    assert len(text) >= 8 * MAX_BLOCK_CHARS
    assert "<b>" not in doc.html and doc.html.count("tick &lt;b&gt;") + doc.tail.count("tick <b>") == 16 * 6250
    doc.update(text, final=True)
    assert doc.html.count("tick &lt;b&gt;") == 16 * 6250


def test_stream_a_long_message_of_short_blocks_stays_markdown() -> None:
    source = "".join(f"Paragraph **{n}**.\n\n" for n in range(10_000))  # 200 KB at once, twice the bound
    assert len(source) > 2 * MAX_BLOCK_CHARS
    doc = MarkdownStream()
    doc.update(source)
    assert len(doc.tail) <= MAX_BLOCK_CHARS and doc.html.count("<strong>") + doc.tail.count("**") // 2 == 10_000
    doc.update(source, final=True)
    assert doc.html == render_markdown(source)


def test_stream_late_reference_definition_bumps_generation() -> None:
    source = "See [the docs][d].\n\nMore text.\n\n[d]: https://example.com/docs\n"
    doc, _ = stream(source, 4)
    assert 'href="https://example.com/docs"' not in doc.html
    assert doc.generation == 0
    doc.update(source, final=True)
    assert doc.generation == 1
    assert doc.blocks == [render_markdown(source)]
    assert 'href="https://example.com/docs"' in doc.html


def test_stream_updates_after_final_are_ignored() -> None:
    doc = MarkdownStream()
    doc.update("a\n\nb", final=True)
    html = doc.html
    doc.update("a\n\nb\n\nc")
    doc.update("a\n\nb\n\nc", final=True)
    assert doc.html == html and doc.tail == ""


def test_stream_empty_message_final_has_no_blocks() -> None:
    doc = MarkdownStream()
    doc.update("", final=True)
    assert doc.blocks == [] and doc.html == "" and doc.final


def test_stream_loose_ordered_list_is_not_committed_before_next_marker() -> None:
    source = "1. first\n\n2. second\n\n3. third\n"
    doc, steps = stream(source, 1)
    for blocks, committed in steps:
        assert "".join(blocks) == render_markdown(source[:committed]) if committed else blocks == []
    doc.update(source, final=True)
    assert doc.generation == 0


def test_stream_bare_carriage_returns_do_not_crash() -> None:
    source = "progress 50%\r\rprogress 100%\n\ndone"
    doc = MarkdownStream()
    doc.update(source)
    doc.update(source, final=True)
    assert doc.html == render_markdown(source)


def test_stream_crlf_line_endings_commit_while_streaming() -> None:
    source = "para one\r\n\r\npara two\r\n\r\npara three\r\n"
    doc, steps = stream(source, 3)
    assert steps[-1][1] == len("para one\r\n\r\npara two\r\n\r\n")
    doc.update(source, final=True)
    assert doc.html == render_markdown(source) and doc.generation == 0


# -- MessageDocs.view ----------------------------------------------------------------------------


def message(text: str, streaming: bool = True) -> MessageEntry:
    return MessageEntry(seq=1, turn=1, parts=[text], streaming=streaming)


def live(view: MessageView, entry: MessageEntry) -> str:
    """The unfinished rest of a message as the page gets it (``_message_live.html``), without its wrapper."""
    html = Renderer().page("_message_live.html", entry=entry, view=view, oob=None)
    opening = f'<div class="md md-live" id="entry-{entry.seq}-live">'
    assert html.startswith(opening) and html.endswith("</div>"), html
    return html[len(opening) : -len("</div>")]


def progress(generation: int, blocks: int, caught_up: int, chars: int) -> Progress:
    """A streaming message's progress, without attachments."""
    return Progress(generation, blocks, caught_up, chars, streaming=True, attachments=0)


def test_message_view_renders_the_unfinished_rest_and_keeps_no_raw_text_at_a_catch_up() -> None:
    docs = MessageDocs()
    entry = message("First paragraph.\n\nSecond,\nstill being wri")
    view = docs.view(entry, now=100.0)
    assert str(view.html) == render_markdown("First paragraph.\n\n")
    # The rest is rendered too (so it looks as it will), with an empty raw tail inside its paragraph.
    assert live(view, entry) == '<p>Second,\nstill being wri<span class="md-tail"></span></p>\n'
    assert view.raw == ""
    assert view.progress == progress(0, 1, len(entry.text), len(entry.text))
    assert view.blocks == [render_markdown("First paragraph.\n\n")]


def test_a_streaming_message_is_viewed_from_its_end_and_never_joined_whole() -> None:
    """A frame joined the whole message to read its end: with hundreds of megabytes streamed (a remote server's
    flood) every frame copied them all, a third of the server's time."""
    docs = MessageDocs()
    entry = message("Start.\n\n")
    for n in range(2000):
        entry.parts.append(f"Paragraph **{n}**.\n\n")
        view = docs.view(entry, now=100.0 + n * MessageDocs.RENDER_INTERVAL)
    assert len(entry.parts) == 2001  # never joined while it streamed
    assert view.progress.chars == len("".join(entry.parts))
    entry.streaming = False
    final = docs.view(entry, now=1000.0)
    assert str(final.html) == render_markdown(entry.text)


def test_message_view_between_render_intervals_only_grows_the_raw_tail() -> None:
    """A long unfinished rest catches up every ``RENDER_INTERVAL``; a short one at every view (`REST_RATE`)."""
    docs = MessageDocs()
    two = "Two" + " words" * 3000
    entry = message(f"One.\n\n{two}\n")
    first = docs.view(entry, now=100.0)
    entry.parts.append("2\n\nThree <b>\n")
    soon = docs.view(entry, now=100.0 + MessageDocs.RENDER_INTERVAL / 2)
    assert soon.html == first.html
    assert soon.raw == "\n2\n\nThree <b>\n"  # the newline Markdown dropped from "Two…\n" comes first
    assert "Three &lt;b&gt;" in live(soon, entry)  # raw text is escaped
    assert soon.progress == progress(0, 1, len(f"One.\n\n{two}"), len(entry.text))
    later = docs.view(entry, now=101.0)
    assert str(later.html) == render_markdown("One.\n\n") + render_markdown(f"{two}\n2\n\n")
    assert later.raw == "\n" and "Three &lt;b&gt;" in live(later, entry)
    assert later.progress == progress(0, 2, len(entry.text) - 1, len(entry.text))
    entry.parts.append("Four")  # a short rest: caught up at once
    quick = docs.view(entry, now=101.0 + MessageDocs.CATCH_UP_GAP)
    assert quick.raw == "" and "Three &lt;b&gt;\nFour<span" in live(quick, entry)


def test_message_view_keeps_raw_text_out_of_tables() -> None:
    docs = MessageDocs()
    entry = message("| a | b |\n|---|---|\n" + "| 1 | 2 |\n" * 2000)  # long: it catches up in an interval
    docs.view(entry, now=100.0)
    entry.parts.append("| 3 ")
    view = docs.view(entry, now=100.1)
    assert live(view, entry).endswith('</table>\n\n| 3 <span class="md-tail"></span>')


def test_message_view_after_streaming_is_whole_html_and_empty_tail() -> None:
    docs = MessageDocs()
    text = "Intro with [a link][l].\n\n```sh\nls\n```\n\nEnd\n\n[l]: https://example.com\n"
    entry = message(text[:30])
    docs.view(entry, now=100.0)
    entry.parts.append(text[30:])
    docs.view(entry, now=101.0)
    entry.streaming = False
    view = docs.view(entry, now=101.1)
    assert str(view.html) == render_markdown(text)
    assert view.raw == ""
    assert view.progress.generation == 1  # the late reference definition made the page re-render the message
    again = docs.view(entry, now=200.0)
    assert again == view


def test_message_view_of_finished_message_seen_first_time() -> None:
    docs = MessageDocs()
    entry = message("<script>x</script> **done**", streaming=False)
    view = docs.view(entry, now=0.0)
    assert str(view.html) == render_markdown(entry.text)
    assert "<script>" not in str(view.html)
    assert view.raw == "" and view.progress == Progress(0, 1, len(entry.text), len(entry.text), False, 0)


def test_message_view_keeps_the_space_markdown_would_drop_before_the_raw_tail() -> None:
    docs = MessageDocs()
    entry = message("A test would ")
    first = docs.view(entry, now=100.0)
    assert first.raw == " "
    assert live(first, entry) == '<p>A test would <span class="md-tail"></span></p>\n'
    entry.parts.append("call it")
    soon = docs.view(entry, now=100.1)
    assert "would call it<span" in live(soon, entry)  # caught up at once (a short rest), with the space


@pytest.mark.parametrize("size", [1, 3, 7, 19, 64])
@pytest.mark.parametrize(
    "source",
    [
        DOCUMENT,
        "| a | b |\n|---|---|\n| 1 | 2 |\n\nafter the table\n\n1. one\n2. two\n\n   indented\n\n    code\n\ntext ",
        "```\nunclosed fence\n\n\nstill code  \n",
        "para with [a link][x]\n\nmore\n\n[x]: https://example.com\n\nlast",
        "surrogates \ud83d\ude00 paired and \ud800 lone\n\nnext block\n\nlast",
    ],
)
def test_one_parse_a_catch_up_renders_what_separate_renders_would(source: str, size: int) -> None:
    """A catch-up parses the rest once and renders both sides of the cut from that parse: each new block and the
    tail must be exactly what rendering their text alone gives (else the page would change when it re-renders)."""
    doc, committed = MarkdownStream(), 0
    for end in range(size, len(source) + size, size):
        fed = source[:end]
        blocks = len(doc.blocks)
        doc.update(fed)
        newly = len(fed) - len(doc.tail)
        assert doc.blocks[blocks:] == ([render_markdown(fed[committed:newly])] if newly > committed else [])
        committed = newly
        tail = doc.tail.rstrip()
        assert doc.render_tail(tail) == render_markdown(tail)


def test_two_pages_asking_within_the_gap_share_one_catch_up() -> None:
    docs = MessageDocs()
    entry = message("One paragraph")
    docs.view(entry, now=100.0)
    entry.parts.append(" grows *fast*")
    other_page = docs.view(entry, now=100.0 + MessageDocs.CATCH_UP_GAP / 2)
    assert other_page.raw == " grows *fast*"  # shown as text until the next catch-up
    assert docs.view(entry, now=100.0 + MessageDocs.CATCH_UP_GAP).raw == ""


def shown(view: MessageView) -> str:
    """What a page shows of a message: its finished blocks, the rest and the raw text in it (the space that ends a
    paragraph, which the page draws as nothing, left out)."""
    return view.html + view.before + escape(view.raw.rstrip()) + view.after


def test_words_that_continue_a_paragraph_are_not_parsed_again_and_show_as_a_catch_up_would() -> None:
    """Parsing the rest again at every frame was most of a streaming message's cost: words and plain punctuation
    continuing the paragraph being written stay raw text, which renders as itself."""
    docs = MessageDocs()
    entry = message("# Title\n\nA paragraph")
    docs.view(entry, now=100.0)
    entry.parts.append(" goes on, 50% or 3/4 of it: yes!")
    later = docs.view(entry, now=101.0)
    assert later.raw == " goes on, 50% or 3/4 of it: yes!"
    assert shown(later) == render_markdown(entry.text)
    for markup in (" and *more", " and `code`", " a_b", " [x]", " &amp;", " <b>", ' "quoted"', "\n- a list"):
        docs = MessageDocs()
        entry = message("A paragraph")
        docs.view(entry, now=100.0)
        entry.parts.append(markup)
        assert docs.view(entry, now=101.0).raw in ("", "\n"), markup  # caught up: it may render otherwise
    for rest in ("12", "Some text\n1", "A line ending in _", "- item", "> quoted"):  # what follows could change it
        docs = MessageDocs()
        entry = message(rest)
        docs.view(entry, now=100.0)
        entry.parts.append(". more" if rest != "Some text\n1" else ") more")
        assert docs.view(entry, now=101.0).raw == "", rest


@pytest.mark.parametrize("seed", range(12))
def test_a_message_streamed_in_random_pieces_shows_at_every_view_what_a_catch_up_would(seed: int) -> None:
    """Whatever is left as raw text at a view past the catch-up interval renders as itself."""
    rng = random.Random(seed)
    words = ["plain", "Words", "50%", "a/b", "x=1+2", "end.", "why?", "é", "*em*", "`c`", "_u_", "&", "<t>", "1."]
    separators = [" ", " ", " ", "\n", "\n\n", "\n\n- ", "\n\n# ", "\n\n1. ", "  \n", "\\"]
    text = "".join(rng.choice(words) + rng.choice(separators) for _ in range(120))
    docs, entry, now, at = MessageDocs(), message(""), 100.0, 0
    while at < len(text):
        step = rng.randrange(1, 12)
        entry.parts.append(text[at : at + step])
        at += step
        now += MessageDocs.RENDER_INTERVAL
        view = docs.view(entry, now)
        assert shown(view) == render_markdown(entry.text), (seed, entry.text[-80:], view.raw)
