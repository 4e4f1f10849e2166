"""Markdown that reads as the page does, whatever the agent sent: the pieces of an export.

Text the page shows as plain text is escaped (`plain`); code and output sit in fences longer than any backtick
run inside them (`fence`, `code_span`); agent Markdown that leaves a fence or raw-HTML block open is closed
(`seal`), so one message cannot swallow the rest of the document; only web addresses become links.
"""

from __future__ import annotations

import difflib
import re
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from webclient.render.highlight import lexer_for

if TYPE_CHECKING:  # imported at the first export: an idle server makes none
    from markdown_it import MarkdownIt
    from markdown_it.token import Token


@cache
def _markdown() -> MarkdownIt:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark")  # raw HTML on, as in most places an exported file is read


_SEAL = "export-seal-9d2c41"
_INLINE_SPECIAL = re.compile(r"([\\`*_\[\]<>&~|])")
_WHITESPACE = re.compile(r"\s+")
_LINE_ENDS = re.compile(r"\r\n|\r|\n")
_BACKTICKS = re.compile(r"`+")
_LINES = re.compile(r"[^\n]*\n|[^\n]+")
_HTML_BLOCK_TAG = re.compile(r"\s*<(script|pre|style|textarea)", re.IGNORECASE)
_HTML_BLOCK_ENDS = (("<!--", "-->"), ("<?", "?>"), ("<![CDATA[", "]]>"), ("<!", ">"))


def fence(text: str, info: str = "") -> str:
    """``text`` as a fenced code block whose fence is longer than any backtick run inside it."""
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    marker = "`" * max(3, longest + 1)
    info = re.sub(r"[^\w+#.-]", "", info)  # an info string of a backtick fence cannot hold backticks
    body = text if not text or text.endswith(("\n", "\r")) else f"{text}\n"
    return f"{marker}{info}\n{body}{marker}"


def code_span(text: str) -> str:
    """``text`` as inline code on one line, delimited by more backticks than it contains in a row."""
    text = _WHITESPACE.sub(" ", text)
    if not text.strip():
        return f"`{text}`" if text else ""  # all spaces: kept as they are
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    marker = "`" * (longest + 1)
    padded = text.startswith(("`", " ")) or text.endswith(("`", " "))
    return f"{marker} {text} {marker}" if padded else f"{marker}{text}{marker}"


def plain(text: str) -> str:
    """Plain text on one line, with every character Markdown would act on escaped."""
    return _INLINE_SPECIAL.sub(r"\\\1", _WHITESPACE.sub(" ", text).strip())


def quote(block: str) -> str:
    """``block`` as a block quote; every line is marked, a lone CR ends one as CommonMark says."""
    return "\n".join(f"> {line}" if line else ">" for line in _LINE_ENDS.split(block))


def details(summary: str, body: str) -> str:
    return f"<details>\n<summary>{summary}</summary>\n\n{body}\n\n</details>"


def seal(text: str) -> str:
    """Agent Markdown as it came, closed if it leaves a fence or an HTML block open at its end."""
    text = text.strip("\n")
    if not text.strip():
        return ""
    block = _open_block(text)
    if block is None:
        return text
    end = block.markup if block.type == "fence" else _html_block_end(block.content)
    sealed = f"{text}\n{end}"
    return sealed if end and _open_block(sealed) is None else fence(text, "markdown")


def _open_block(text: str) -> Token | None:
    """The top-level block that would run on past the end of ``text`` (a blank token if none is found)."""
    from markdown_it.token import Token

    tokens = _markdown().parse(f"{text}\n\n{_SEAL}\n")
    if len(tokens) >= 3 and tokens[-3].type == "paragraph_open" and tokens[-3].level == 0:
        if tokens[-2].content == _SEAL:
            return None
    return next((t for t in reversed(tokens) if t.level == 0 and _SEAL in t.content), Token("unknown", "", 0))


def _html_block_end(content: str) -> str:
    """The line that ends a raw-HTML block that runs to its end marker (``</pre>``, ``-->``, ...)."""
    tag = _HTML_BLOCK_TAG.match(content)
    if tag:
        return f"</{tag.group(1).lower()}>"
    return next((end for start, end in _HTML_BLOCK_ENDS if content.lstrip().startswith(start)), "")


def link(text: str, url: str) -> str:
    target = "".join(f"%{ord(c):02X}" if c in " <>()\\\"'" or ord(c) < 32 else c for c in url)
    return f"[{plain(text) or plain(url)}]({target})"


def is_web_url(url: str) -> bool:
    try:
        return urlsplit(url.strip()).scheme.lower() in ("http", "https")
    except ValueError:
        return False


def fence_language(path: str | None, mime_type: str | None) -> str:
    """A fence language for a file, from its name or else its type; empty when neither says."""
    lexer = lexer_for(path) if path else None
    if lexer is None and mime_type:
        lexer = _mime_lexer(mime_type)
    return str(lexer.aliases[0]) if lexer is not None and lexer.aliases else ""


@lru_cache(maxsize=64)
def _mime_lexer(mime_type: str) -> Any:
    from pygments.lexers import get_lexer_for_mimetype
    from pygments.util import ClassNotFound

    try:
        return get_lexer_for_mimetype(mime_type)
    except ClassNotFound:
        return None


def unified_diff(old_text: str | None, new_text: str, path: str) -> str:
    """A unified diff of two texts (``old_text`` None for a new file), git-style, with the path."""
    path = _WHITESPACE.sub(" ", path) or "file"
    old, new = (f"a/{path}", f"b/{path}") if not path.startswith("/") else (path, path)
    lines = difflib.unified_diff(_LINES.findall(old_text or ""), _LINES.findall(new_text), old, new)
    if old_text is None:
        lines = (line.replace(f"--- {old}", "--- /dev/null", 1) if i == 0 else line for i, line in enumerate(lines))
    return "".join(line if line.endswith("\n") else f"{line}\n\\ No newline at end of file\n" for line in lines)
