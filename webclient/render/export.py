"""A session as one Markdown document, like Zed's "Open thread as Markdown".

The thread is written in order: a heading for each side of the conversation, agent text as it came
(it is Markdown already), thoughts folded in ``<details>``, tool calls as a line with their kind, title
and status followed by what they carry (diffs, terminal output, text), plans as task lists, notices as
block quotes. Text the page shows as plain text (titles, plan items, option names) is escaped, so it reads
here as it reads there; code, diffs and output sit in fences longer than any backtick run inside them;
agent Markdown that leaves a fence or raw-HTML block open is closed, so one message cannot swallow the
rest of the document. Images and audio are named, never inlined.
"""

from __future__ import annotations

import difflib
import logging
import re
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from markdown_it import MarkdownIt
from markdown_it.token import Token
from pygments.lexers import get_lexer_for_mimetype
from pygments.util import ClassNotFound

from webclient.render.highlight import lexer_for
from webclient.render.rendering import kind_label, pretty_json, status_label
from webclient.viewmodel.content import (
    AudioBlock,
    Diff,
    EmbeddedResource,
    ImageBlock,
    ResourceLink,
    TerminalRef,
    TextBlock,
    ToolContent,
)
from webclient.viewmodel.entries import Entry, FileChange, MessageEntry, Notice, Plan, ToolCall
from webclient.viewmodel.terminals import TerminalSet
from webclient.viewmodel.thread import Thread

if TYPE_CHECKING:
    from webclient.session.core import Session

logger = logging.getLogger(__name__)

FILENAME_LIMIT = 80
"""Characters of slug at most in an export's file name (before ``.md``)."""

_MD = MarkdownIt("commonmark")  # raw HTML on, as in most places an exported file is read
_SEAL = "export-seal-9d2c41"
_INLINE_SPECIAL = re.compile(r"([\\`*_\[\]<>&~|])")
_WHITESPACE = re.compile(r"\s+")
_LINE_ENDS = re.compile(r"\r\n|\r|\n")
_SURROGATES = re.compile("[\ud800-\udfff]")
_BACKTICKS = re.compile(r"`+")
_LINES = re.compile(r"[^\n]*\n|[^\n]+")
_HTML_BLOCK_TAG = re.compile(r"\s*<(script|pre|style|textarea)", re.IGNORECASE)
_HTML_BLOCK_ENDS = (("<!--", "-->"), ("<?", "?>"), ("<![CDATA[", "]]>"), ("<!", ">"))
_WINDOWS_RESERVED = frozenset(
    {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)), *(f"lpt{i}" for i in range(10))}
)
_PLAN_MARKS = {"completed": "x", "in_progress": " ", "pending": " "}
_NOTICE_LABELS = {"info": "Note", "warning": "Warning", "error": "Error"}


@dataclass(frozen=True, slots=True)
class ExportHeader:
    """What the document says about its session before the thread starts."""

    title: str | None = None
    agent_name: str | None = None
    agent_version: str | None = None
    workspace: str | None = None
    started: float | None = None
    """When the session started, in seconds since the epoch."""
    display_path: Callable[[str], str] = str
    """How a path reads (the session's: relative to the workspace when inside it)."""


def session_markdown(session: Session) -> str:
    """The whole session as a Markdown document (see :func:`thread_markdown`)."""
    info = session.agent_info if isinstance(session.agent_info, dict) else {}
    name = _text_or_none(info.get("title")) or _text_or_none(info.get("name"))
    header = ExportHeader(
        title=session.title or name,
        agent_name=name,
        agent_version=_text_or_none(info.get("version")),
        workspace=str(session.spec.cwd),
        started=session.created,
        display_path=session.display_path,
    )
    return thread_markdown(session.thread, header)


def thread_markdown(thread: Thread, header: ExportHeader | None = None) -> str:
    """The thread as a Markdown document: a heading and facts from ``header``, then every entry in order.

    Never raises on what the agent sent: an entry that cannot be written becomes a line saying so, and the
    result always encodes as UTF-8.
    """
    header = header or ExportHeader()
    writer = _Writer(thread.terminals, header.display_path)
    blocks = [f"# {_plain(header.title or '') or 'Agent session'}", *_facts(header)]
    agent = _plain(header.agent_name or "Agent")
    speaker: str | None = None
    for entry in thread:
        if isinstance(entry, MessageEntry) and entry.kind == "user-message":
            speaker = "user"
            blocks.append("## You")
        elif not isinstance(entry, Notice) and speaker != "agent":
            speaker = "agent"
            blocks.append(f"## {agent}")
        try:
            blocks.extend(block for block in writer.entry(entry) if block)
        except Exception as error:  # a bug here must not lose the rest of the export
            logger.exception("cannot export entry %s", entry.seq)
            blocks.append(f"*This entry could not be exported ({_plain(type(error).__name__)}).*")
    # Lone surrogates (JSON allows "\\ud800") cannot be encoded: the document must always be valid UTF-8.
    return _SURROGATES.sub("\ufffd", "\n\n".join(blocks) + "\n")


def export_filename(title: str | None) -> str:
    """A safe ASCII file name for an export: the title as a lowercase slug, ``session.md`` when it has none."""
    ascii_title = unicodedata.normalize("NFKD", title or "").encode("ascii", "ignore").decode("ascii")
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_title.lower()).strip("-")[:FILENAME_LIMIT].rstrip("-")
    if slug in _WINDOWS_RESERVED:
        slug = f"{slug}-session"
    return f"{slug or 'session'}.md"


# -- Markdown helpers ----------------------------------------------------------------------------


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


def _plain(text: str) -> str:
    """Plain text on one line, with every character Markdown would act on escaped."""
    return _INLINE_SPECIAL.sub(r"\\\1", _WHITESPACE.sub(" ", text).strip())


def _quote(block: str) -> str:
    """``block`` as a block quote; every line is marked, a lone CR ends one as CommonMark says."""
    return "\n".join(f"> {line}" if line else ">" for line in _LINE_ENDS.split(block))


def _details(summary: str, body: str) -> str:
    return f"<details>\n<summary>{summary}</summary>\n\n{body}\n\n</details>"


def _seal(text: str) -> str:
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
    tokens = _MD.parse(f"{text}\n\n{_SEAL}\n")
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


def _link(text: str, url: str) -> str:
    target = "".join(f"%{ord(c):02X}" if c in " <>()\\\"'" or ord(c) < 32 else c for c in url)
    return f"[{_plain(text) or _plain(url)}]({target})"


def _is_web_url(url: str) -> bool:
    try:
        return urlsplit(url.strip()).scheme.lower() in ("http", "https")
    except ValueError:
        return False


def _language(path: str | None, mime_type: str | None) -> str:
    """A fence language for a file, from its name or else its type; empty when neither says."""
    lexer = lexer_for(path) if path else None
    if lexer is None and mime_type:
        lexer = _mime_lexer(mime_type)
    return str(lexer.aliases[0]) if lexer is not None and lexer.aliases else ""


@lru_cache(maxsize=64)
def _mime_lexer(mime_type: str) -> Any:
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


def _text_or_none(value: Any) -> str | None:
    return str(value) if isinstance(value, str | int | float) and str(value) else None


def _facts(header: ExportHeader) -> Iterator[str]:
    facts = []
    if header.agent_name:
        version = f" {_plain(header.agent_version)}" if header.agent_version else ""
        facts.append(f"- Agent: {_plain(header.agent_name)}{version}")
    if header.workspace:
        facts.append(f"- Workspace: {code_span(header.workspace)}")
    if header.started is not None:
        try:
            started = datetime.fromtimestamp(header.started, tz=UTC).strftime("%Y-%m-%d %H:%M UTC")
            facts.append(f"- Started: {started}")
        except (OverflowError, OSError, ValueError):
            pass
    if facts:
        yield "\n".join(facts)


# -- entries -------------------------------------------------------------------------------------


class _Writer:
    """Turns entries into Markdown blocks; knows the thread's terminals and how paths read."""

    def __init__(self, terminals: TerminalSet, display_path: Callable[[str], str]) -> None:
        self.terminals = terminals
        self.display_path = display_path

    def path(self, path: str) -> str:
        try:
            return self.display_path(path)
        except Exception:
            return path

    def entry(self, entry: Entry) -> Iterator[str]:
        if isinstance(entry, MessageEntry):
            yield from self.message(entry)
        elif isinstance(entry, ToolCall):
            yield from self.tool_call(entry)
        elif isinstance(entry, Plan):
            yield from self.plan(entry)
        elif isinstance(entry, FileChange):
            verb = "created" if entry.old_text is None else "wrote"
            yield f"The agent {verb} {code_span(entry.display_path) or 'a file'}:"
            yield from self.diff(entry.old_text, entry.new_text or "", entry.display_path)
        elif isinstance(entry, Notice):
            label = _NOTICE_LABELS.get(entry.level, "Note")
            body = f"**{label}:** {_plain(entry.title or '')}"
            if entry.detail:
                body += f"\n\n{fence(entry.detail)}"
            yield _quote(body)
        else:
            yield f"*An entry of type {code_span(entry.role)} is not exported.*"

    def message(self, entry: MessageEntry) -> Iterator[str]:
        text = _seal(entry.text)
        if entry.kind == "thought":
            parts = [text, *(block for item in entry.attachments for block in self.content(item))]
            body = "\n\n".join(part for part in parts if part)
            yield _details("Thinking", body or "*(empty)*")
            return
        yield text
        for item in entry.attachments:
            yield from self.content(item)

    def tool_call(self, call: ToolCall) -> Iterator[str]:
        title = _plain(call.title or "") or "Tool call"
        yield f"**{kind_label(call.kind)}:** {title} — *{_plain(status_label(call.effective_status)) or 'Unknown'}*"
        if call.locations:
            yield "\n".join(
                f"- {code_span(self.path(loc.path) + (f':{loc.line}' if loc.line else ''))}" for loc in call.locations
            )
        for item in call.content:
            yield from self.content(item)
        if call.permission is not None:
            yield self.permission(call)
        if call.raw_input is not None:
            yield _details("Input", fence(pretty_json(call.raw_input), "json"))
        if call.raw_output is not None:
            yield _details("Output", fence(pretty_json(call.raw_output), "json"))

    def permission(self, call: ToolCall) -> str:
        prompt = call.permission
        assert prompt is not None
        offered = ", ".join(_plain(option.name or option.option_id) for option in prompt.options)
        offered = f" (offered: {offered})" if offered else ""
        if prompt.state == "selected":
            chosen = prompt.chosen_option
            answer = f"**{_plain(chosen.name)}**" if chosen is not None else code_span(prompt.chosen or "")
            return f"**Permission:** you chose {answer}{offered}."
        if prompt.state == "cancelled":
            return f"**Permission:** not answered, the turn was stopped{offered}."
        return f"**Permission:** waiting for an answer{offered}."

    def plan(self, plan: Plan) -> Iterator[str]:
        yield f"**Plan** ({plan.done} of {len(plan.items)} done)"
        lines = []
        for item in plan.items:
            mark = _PLAN_MARKS.get(item.status, " ")
            note = " *(in progress)*" if item.status == "in_progress" else ""
            lines.append(f"- [{mark}] {_plain(item.content or '') or '(empty)'}{note}")
        yield "\n".join(lines)

    def content(self, item: ToolContent) -> Iterator[str]:
        if isinstance(item, TextBlock):
            yield _seal(item.text)
        elif isinstance(item, Diff):
            yield f"Diff of {code_span(self.path(item.path)) or 'a file'}:"
            yield from self.diff(item.old_text, item.new_text or "", self.path(item.path))
        elif isinstance(item, TerminalRef):
            yield from self.terminal(item.terminal_id)
        elif isinstance(item, ImageBlock):
            name = f"Image ({_plain(item.mime_type or 'unknown type')})"
            yield f"*{name}:* {self.reference(item.uri)}" if item.uri else f"*{name}, not included.*"
        elif isinstance(item, AudioBlock):
            yield f"*Audio clip ({_plain(item.mime_type or 'unknown type')}), not included.*"
        elif isinstance(item, ResourceLink):
            line = self.reference(item.uri, item.title or item.name)
            yield f"{line} — {_plain(item.description)}" if item.description else line
        elif isinstance(item, EmbeddedResource):
            yield f"Attached: {self.reference(item.uri)}"
            if item.text is not None:
                yield fence(item.text, _language(urlsplit(item.uri or "").path, item.mime_type))
            else:
                yield f"*Binary contents ({_plain(item.mime_type or 'unknown type')}), not included.*"
        else:
            yield f"*Content of type {code_span(item.kind or '') or 'unknown'}:*"
            yield _details("Content", fence(pretty_json(item.raw), "json"))

    def reference(self, uri: str | None, name: str | None = None) -> str:
        """A link when ``uri`` is on the web, else the name and the uri as code."""
        uri = uri or ""
        if _is_web_url(uri):
            return _link(name or uri, uri.strip())
        label = _plain(name) if name else ""
        return f"{label} {code_span(uri)}".strip() if uri else label or "*(no address)*"

    def diff(self, old_text: str | None, new_text: str, path: str) -> Iterator[str]:
        text = unified_diff(old_text, new_text, path)
        yield fence(text, "diff") if text else "*(an empty file)*" if old_text is None else "*(no changes)*"

    def terminal(self, terminal_id: str) -> Iterator[str]:
        term = self.terminals.get(terminal_id)
        if term is None:
            yield f"Terminal {code_span(terminal_id)} (no output)."
            return
        output = "\n".join(line.rstrip() for line in term.screen.plain_text().split("\n")).strip("\n")
        command = f"$ {term.command}" if term.command else ""
        body = "\n".join(part for part in (command, output) if part)
        yield fence(body, "console") if body else f"Terminal {code_span(terminal_id)}: no output."
        if term.signal:
            status = f"Killed by signal {_plain(term.signal)}."
        elif term.exit_code is not None:
            status = f"Exit status {term.exit_code}."
        elif term.state == "running":
            status = "Still running when exported."
        else:
            status = "Finished." if term.exited else "Released before it finished."
        yield f"Ran in {code_span(self.path(term.cwd))}. {status}" if term.cwd else status
