"""Agent Markdown → safe HTML, in one go or incrementally while it streams.

CommonMark via markdown-it-py with raw HTML off (agent HTML shows as text) and its link validation
(no ``javascript:``/``vbscript:``/``file:`` links); code highlighted with Pygments; the result passes
through nh3 (Ammonia) as a second line of defence, so a bug in the first never reaches the page.
"""

from __future__ import annotations

import html
import re
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any

from webclient.render.highlight import coloured
from webclient.render.text import scrub

if TYPE_CHECKING:  # imported at the first Markdown rendered: an idle server shows none
    from markdown_it import MarkdownIt
    from markdown_it.token import Token
    from pygments.lexer import Lexer

_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")
"""Lines with their endings, split as CommonMark splits them (\\n, \\r\\n or a lone \\r)."""

MAX_BLOCK_CHARS = 100_000
"""A block still being written is parsed again at every catch-up: one longer than this (an agent, or a remote
server, that streams one paragraph forever) is shown from here on as text, in pieces of this size, so that no
catch-up parses more than this (~25 ms) and the server never waits on one message."""

_REFERENCE_DEFINITION = re.compile(r"^ {0,3}\[[^\]]+\]:", re.MULTILINE)

_ALLOWED_TAGS = {
    "a", "blockquote", "br", "code", "del", "em", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "img", "li",
    "ol", "p", "pre", "span", "strong", "s", "table", "tbody", "td", "th", "thead", "tr", "ul",
}  # fmt: skip
_ALLOWED_ATTRIBUTES = {
    "a": {"href", "title"},
    "img": {"src", "alt", "title"},
    "span": {"class"},
    "code": {"class"},
    "ol": {"start"},
    "td": {"class"},
    "th": {"class"},
}
_ALIGN_CLASSES = frozenset({"md-align-left", "md-align-center", "md-align-right"})
"""A table column's alignment is a class, never a ``style`` attribute (the page's CSP allows none)."""


@lru_cache(maxsize=128)
def _lexer(lang: str) -> Lexer | None:
    """The lexer of a fence's language, made once: Pygments looks a name up through all its lexers, which costs
    more than highlighting a short block (a message of a hundred code blocks asks for the same few)."""
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound

    try:
        return get_lexer_by_name(lang)
    except ClassNotFound:
        return None


def _highlight(code: str, lang: str, _attrs: str) -> str:
    lexer = _lexer(lang) if lang else None
    if lexer is None:
        return html.escape(code)
    return coloured(code, lexer)


_INLINE_IMAGE = re.compile(r"data:image/(?:png|jpeg|gif|webp);base64,[A-Za-z0-9+/=\s]*\Z")


def _image(_renderer: Any, tokens: Any, index: int, _options: Any, _env: Any) -> str:
    """An image the page may show (inline data) as an image; any other as a link to it, so that merely
    showing a message never makes the browser fetch from a host the agent chose (a tracking pixel)."""
    token = tokens[index]
    src = str(token.attrGet("src") or "")
    alt = html.escape(token.content or "image")
    if _INLINE_IMAGE.match(src):
        return f'<img src="{html.escape(src)}" alt="{alt}">'
    return f'<a href="{html.escape(src)}">🖼 {alt}</a>'


def _align_classes(state: Any) -> None:
    """Table cells that markdown-it aligns with ``style="text-align:…"`` get an ``md-align-…`` class instead."""
    for token in state.tokens:
        if token.type in ("th_open", "td_open") and token.attrs:
            align = str(token.attrs.pop("style", "")).removeprefix("text-align:")
            if f"md-align-{align}" in _ALIGN_CLASSES:
                token.attrSet("class", f"md-align-{align}")


@cache
def _markdown() -> MarkdownIt:
    """The parser and renderer, made at the first Markdown rendered (markdown-it and Pygments with it)."""
    from markdown_it import MarkdownIt

    parser = (
        MarkdownIt("commonmark", {"html": False, "linkify": False, "highlight": _highlight})
        .enable("table")
        .enable("strikethrough")
    )
    parser.add_render_rule("image", _image)
    parser.core.ruler.push("align_classes", _align_classes)
    return parser


def _keep_attribute(tag: str, attribute: str, value: str) -> str | None:
    """The sanitiser's last word on URLs: an ``img`` loads only inline image data, whatever produced it, and
    a ``data:`` link is an image too."""
    if attribute == "class" and tag in ("td", "th"):
        return value if value in _ALIGN_CLASSES else None
    inline = _INLINE_IMAGE.match(value) is not None
    if tag == "img" and attribute == "src" and not inline:
        return None
    if attribute == "href" and value.strip().lower().startswith("data:") and not inline:
        return None
    return value


def _sanitize(markup: str) -> str:
    import nh3  # here: its library is 1.4 MiB of an idle server, which shows no Markdown until a session does

    return nh3.clean(
        markup,
        tags=_ALLOWED_TAGS,
        attributes=_ALLOWED_ATTRIBUTES,
        url_schemes={"http", "https", "mailto", "data"},
        attribute_filter=_keep_attribute,
        link_rel="noopener noreferrer nofollow",
    )


def render_markdown(text: str) -> str:
    """Safe HTML for ``text``."""
    return _sanitize(_markdown().render(scrub(text)))


class MarkdownStream:
    """Markdown that grows: finished blocks are rendered once, the block still being written stays text.

    While a message streams, ``blocks`` holds the HTML of every top-level block that can no longer
    change (a later block has started after a blank line) and ``tail`` the source after them. The page
    appends new blocks and shows the tail as plain text, so no byte is rendered or sent twice except
    the short tail. ``generation`` changes when already-sent blocks had to be replaced (a final render
    that differs from the pieces, e.g. a reference link defined late): the page then re-renders the
    message whole.
    """

    def __init__(self) -> None:
        self.blocks: list[str] = []
        self.tail = ""
        self.generation = 0
        self.final = False
        self._committed = 0  # source offset up to which blocks are rendered
        self._tail_parse: tuple[str, _Parse, int] | None = None
        """The tail as the last catch-up parsed it, with that parse and the index of its first token."""

    @property
    def committed(self) -> int:
        """How many characters of the source are rendered for good (`blocks`); what follows is `tail`."""
        return self._committed

    def update(self, source: str, *, final: bool = False) -> None:
        """Catch up with ``source`` (which only grows); ``final`` renders the rest once and for all."""
        if self.final:
            return
        if not final:
            self.catch_up(source[self._committed :])
            return
        self._tail_parse = None
        self._finish(source, self._commit_long(source[self._committed :]))

    def catch_up(self, rest: str) -> None:
        """`update` (not final) given only what follows `committed`: a long source is not copied every frame."""
        if self.final:
            return
        self._tail_parse = None
        rest = self._commit_long(rest)
        parse = _parse_blocks(rest)
        cut, first_kept = _stable_cut(rest, parse)
        if cut:
            self.blocks.append(render_markdown(rest[:cut]) if parse is None else parse.render(0, first_kept))
            self._committed += cut
            rest = rest[cut:]
        self.tail = rest
        if parse is not None:
            self._tail_parse = (rest, parse, first_kept)

    def _commit_long(self, rest: str) -> str:
        """Commit the start of ``rest`` until what is left is short enough to parse whole; what is left."""
        while len(rest) > MAX_BLOCK_CHARS:
            rest = self._commit_prefix(rest)
        return rest

    def _commit_prefix(self, rest: str) -> str:
        """Commit the start of a rest too long to parse whole: the stable blocks of its first ``MAX_BLOCK_CHARS``
        as Markdown, or, when one block is longer than that, its first ``MAX_BLOCK_CHARS`` (to a line's end, if
        one) as text. What is left of ``rest``."""
        prefix = rest[:MAX_BLOCK_CHARS]
        parse = _parse_blocks(prefix)
        cut, first_kept = _stable_cut(prefix, parse)
        if cut:
            self.blocks.append(render_markdown(prefix[:cut]) if parse is None else parse.render(0, first_kept))
        else:
            cut = prefix.rfind("\n") + 1 or len(prefix)
            self.blocks.append(f"<p>{html.escape(scrub(prefix[:cut]))}</p>")
        self._committed += cut
        return rest[cut:]

    def render_tail(self, text: str) -> str:
        """Safe HTML for ``text``, a prefix of ``tail`` (its whitespace stripped): from the parse this catch-up
        made when ``text`` is exactly what it parsed past the cut, which is the usual case; else parsed anew."""
        kept = self._tail_parse
        if kept is not None and kept[0] == text:
            return kept[1].render(kept[2], None)
        return render_markdown(text)

    def _finish(self, source: str, rest: str) -> None:
        self.final = True
        self.tail = ""
        self._committed = len(source)
        if rest:
            self.blocks.append(render_markdown(rest))
        # Blocks rendered apart equal the whole except when a late reference definition (``[x]: url``)
        # reaches back into earlier blocks: only then is the (costly) whole render worth making.
        if len(self.blocks) > 1 and _REFERENCE_DEFINITION.search(source):
            whole = render_markdown(source)
            if whole != "".join(self.blocks):
                self.blocks = [whole]
                self.generation += 1

    @property
    def html(self) -> str:
        return "".join(self.blocks)


class _Parse:
    """One parse of a message's unrendered rest, whose top-level blocks render apart without parsing again."""

    __slots__ = ("env", "tokens")

    def __init__(self, tokens: list[Token], env: dict[str, Any]) -> None:
        self.tokens = tokens
        self.env = env

    def render(self, start: int, stop: int | None) -> str:
        markdown = _markdown()
        return _sanitize(markdown.renderer.render(self.tokens[start:stop], markdown.options, self.env))


def _parse_blocks(text: str) -> _Parse | None:
    """``text`` parsed once for both the cut and the rendering of either side of it; None when either side
    would render differently alone: a reference definition (``[x]: url``) reaches across blocks, and a
    lone surrogate made safe changes the text's length (so its line offsets)."""
    if _REFERENCE_DEFINITION.search(text) or scrub(text) is not text:
        return None
    env: dict[str, Any] = {}
    return _Parse(_markdown().parse(text, env), env)


def _stable_cut(text: str, parse: _Parse | None) -> tuple[int, int]:
    """Length of the longest prefix of ``text`` made of whole top-level blocks that cannot change, and the index
    of the first token after it (in ``parse``, or of a parse made here when there is none).

    A block is stable when a later top-level block has begun after a blank line: nothing appended
    afterwards can reach back into it (lazy continuation needs no blank line; a list that continues
    stays one block in the parse and is not cut). A last block whose first line is still being
    written does not count: ``2`` may yet become ``2. item`` of the list before it.
    """
    lines = _LINES.findall(text)
    if len(lines) < 3:
        return 0, 0
    tokens = parse.tokens if parse is not None else _markdown().parse(text)
    starts = [(t.map[0], i) for i, t in enumerate(tokens) if t.level == 0 and t.map is not None and t.nesting in (0, 1)]
    if starts and starts[-1][0] < len(lines) and not lines[starts[-1][0]].endswith(("\n", "\r")):
        starts.pop()
    if len(starts) < 2:
        return 0, 0
    last_start, first_kept = starts[-1]
    if last_start == 0 or last_start > len(lines) or lines[last_start - 1].strip():
        return 0, 0
    return sum(len(line) for line in lines[:last_start]), first_kept
