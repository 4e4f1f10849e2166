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

import logging
import re
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from webclient.render.formats import compaction_label, kind_label, notice_label, pretty_json, status_label, turn_usage
from webclient.render.markdown_blocks import (
    code_span,
    details,
    fence,
    fence_language,
    is_web_url,
    link,
    plain,
    quote,
    seal,
    unified_diff,
)
from webclient.viewmodel.content import (
    AudioBlock,
    Diff,
    DiffChanges,
    EmbeddedResource,
    ImageBlock,
    ResourceLink,
    TerminalRef,
    TextBlock,
    ToolContent,
)
from webclient.viewmodel.entries import (
    Compaction,
    Entry,
    FileChange,
    MessageEntry,
    Notice,
    PermissionPrompt,
    Plan,
    ToolCall,
    TurnUsage,
)
from webclient.viewmodel.questions import Question
from webclient.viewmodel.subagents import SessionMessage, Subagent
from webclient.viewmodel.terminals import TerminalSet
from webclient.viewmodel.thread import Thread

if TYPE_CHECKING:
    from webclient.session.core import Session

__all__ = [
    "FILENAME_LIMIT",
    "ExportHeader",
    "code_span",
    "export_filename",
    "fence",
    "session_markdown",
    "thread_markdown",
    "unified_diff",
]

logger = logging.getLogger(__name__)

FILENAME_LIMIT = 80
"""Characters of slug at most in an export's file name (before ``.md``)."""

_SURROGATES = re.compile("[\ud800-\udfff]")
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
    info = session.lifecycle.agent_info if isinstance(session.lifecycle.agent_info, dict) else {}
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
    blocks = [f"# {plain(header.title or '') or 'Agent session'}", *_facts(header)]
    agent = plain(header.agent_name or "Agent")
    speaker: str | None = None
    for entry in thread:
        if isinstance(entry, MessageEntry) and entry.kind == "user-message":
            speaker = "user"
            blocks.append(f"## {plain(entry.by.name)}" if entry.by is not None else "## You")
        elif not isinstance(entry, Notice) and speaker != "agent":
            speaker = "agent"
            blocks.append(f"## {agent}")
        try:
            blocks.extend(block for block in writer.entry(entry) if block)
        except Exception as error:  # a bug here must not lose the rest of the export
            logger.exception("cannot export entry %s", entry.seq)
            blocks.append(f"*This entry could not be exported ({plain(type(error).__name__)}).*")
    # Lone surrogates (JSON allows "\\ud800") cannot be encoded: the document must always be valid UTF-8.
    return _SURROGATES.sub("\ufffd", "\n\n".join(blocks) + "\n")


def _chooser(prompt: PermissionPrompt) -> str:
    """Who answered a permission question, as the export says it: a rule, a person of a team, or "you"."""
    if prompt.rule is not None:
        return f"rule {prompt.rule.rule_id} ({plain(prompt.rule.what)})"
    if prompt.by is not None:
        return f"{plain(prompt.by.name)} ({prompt.by.clock} UTC)"
    return "you"


def export_filename(title: str | None) -> str:
    """A safe ASCII file name for an export: the title as a lowercase slug, ``session.md`` when it has none."""
    ascii_title = unicodedata.normalize("NFKD", title or "").encode("ascii", "ignore").decode("ascii")
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_title.lower()).strip("-")[:FILENAME_LIMIT].rstrip("-")
    if slug in _WINDOWS_RESERVED:
        slug = f"{slug}-session"
    return f"{slug or 'session'}.md"


def _text_or_none(value: Any) -> str | None:
    return str(value) if isinstance(value, str | int | float) and str(value) else None


def _facts(header: ExportHeader) -> Iterator[str]:
    facts = []
    if header.agent_name:
        version = f" {plain(header.agent_version)}" if header.agent_version else ""
        facts.append(f"- Agent: {plain(header.agent_name)}{version}")
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
            if entry.by_agent:
                label = plain(notice_label(entry.level, entry.severity))  # the severity is agent text
            body = f"**{label}:** {plain(entry.title or '')}"
            if entry.detail:
                body += f"\n\n{fence(entry.detail)}"
            yield quote(body)
        elif isinstance(entry, Compaction):
            body = f"**{plain(compaction_label(entry.status))}**"
            yield quote(f"{body}\n\n{fence(entry.error)}" if entry.error else body)
            if entry.summary:
                yield details("Summary", fence(entry.summary))
        elif isinstance(entry, TurnUsage):
            yield f"*{turn_usage(entry)}*"
        elif isinstance(entry, Question):
            yield from self.question(entry)
        elif isinstance(entry, Subagent):
            yield from self.subagent(entry)
        elif isinstance(entry, SessionMessage):
            label = "Sent to a subagent" if entry.sent else "Received from another session"
            yield quote(f"**{label}:**\n\n{seal(entry.text)}")
        else:
            yield f"*An entry of type {code_span(entry.role)} is not exported.*"

    def subagent(self, child: Subagent) -> Iterator[str]:
        """A subagent where it was announced: its title and state, then its own entries, quoted."""
        state = child.state or "state unknown"
        if child.state == "idle" and child.stop_reason:
            state = f"idle, {child.stop_reason}"
        body = [f"**Subagent:** {plain(child.shown_title)} — *{plain(state)}*"]
        if child.description:
            body.append(plain(child.description))
        body += [block for entry in child.thread for block in self.entry(entry)]
        yield quote("\n\n".join(body))

    def question(self, entry: Question) -> Iterator[str]:
        """One of the agent's questions, and the answer as the page shows it (a secret never)."""
        body = f"**The agent asked:** {plain(entry.message or '')}"
        if entry.url:
            body += f"\n\n{code_span(entry.url)}"
        titles = {f.name: f.title for f in entry.fields}
        shown = entry.shown_values.items()
        answer = "; ".join(f"{plain(titles.get(name, name))}: {plain(value)}" for name, value in shown)
        who = f" by {plain(entry.by.name)}, {entry.by.clock} UTC" if entry.by is not None else ""
        body += f"\n\n*Answer: {entry.state}{who}{' — ' + answer if answer else ''}*"
        yield quote(body)

    def message(self, entry: MessageEntry) -> Iterator[str]:
        text = seal(entry.text)
        if entry.kind == "thought":
            parts = [text, *(block for item in entry.attachments for block in self.content(item))]
            body = "\n\n".join(part for part in parts if part)
            yield details("Thinking", body or "*(empty)*")
            return
        yield text
        for item in entry.attachments:
            yield from self.content(item)

    def tool_call(self, call: ToolCall) -> Iterator[str]:
        title = plain(call.title or "") or "Tool call"
        yield f"**{kind_label(call.kind)}:** {title} — *{plain(status_label(call.effective_status)) or 'Unknown'}*"
        if call.locations:
            yield "\n".join(
                f"- {code_span(self.path(loc.path) + (f':{loc.line}' if loc.line else ''))}" for loc in call.locations
            )
        for item in call.content:
            yield from self.content(item)
        if call.permission is not None:
            yield self.permission(call)
        if call.raw_input is not None:
            yield details("Input", fence(pretty_json(call.raw_input), "json"))
        if call.raw_output is not None:
            yield details("Output", fence(pretty_json(call.raw_output), "json"))

    def permission(self, call: ToolCall) -> str:
        prompt = call.permission
        assert prompt is not None
        offered = ", ".join(plain(option.name or option.option_id) for option in prompt.options)
        offered = f" (offered: {offered})" if offered else ""
        if prompt.state == "selected":
            chosen = prompt.chosen_option
            answer = f"**{plain(chosen.name)}**" if chosen is not None else code_span(prompt.chosen or "")
            return f"**Permission:** {_chooser(prompt)} chose {answer}{offered}."
        if prompt.state == "cancelled":
            return f"**Permission:** not answered, the turn was stopped{offered}."
        return f"**Permission:** waiting for an answer{offered}."

    def plan(self, plan: Plan) -> Iterator[str]:
        if plan.form != "items":  # the v2 draft's Markdown, file, or another kind
            yield "**Plan**" + (" *(removed)*" if plan.removed else "")
            yield seal(plan.markdown) if plan.form == "markdown" else self.reference(plan.uri) if plan.uri else ""
            return
        yield f"**Plan** ({plan.done} of {len(plan.items)} done)"
        lines = []
        for item in plan.items:
            mark = _PLAN_MARKS.get(item.status, " ")
            note = " *(in progress)*" if item.status == "in_progress" else ""
            lines.append(f"- [{mark}] {plain(item.content or '') or '(empty)'}{note}")
        yield "\n".join(lines)

    def content(self, item: ToolContent) -> Iterator[str]:
        if isinstance(item, TextBlock):
            yield seal(item.text)
        elif isinstance(item, Diff):
            yield f"Diff of {code_span(self.path(item.path)) or 'a file'}:"
            yield from self.diff(item.old_text, item.new_text or "", self.path(item.path))
        elif isinstance(item, DiffChanges):
            yield "\n".join(f"- {plain(c.operation)} {code_span(self.path(c.path))}" for c in item.changes) or "Diff:"
            if item.patch_text:
                yield fence(item.patch_text, "diff")
        elif isinstance(item, TerminalRef):
            yield from self.terminal(item.terminal_id)
        elif isinstance(item, ImageBlock):
            name = f"Image ({plain(item.mime_type or 'unknown type')})"
            yield f"*{name}:* {self.reference(item.uri)}" if item.uri else f"*{name}, not included.*"
        elif isinstance(item, AudioBlock):
            yield f"*Audio clip ({plain(item.mime_type or 'unknown type')}), not included.*"
        elif isinstance(item, ResourceLink):
            line = self.reference(item.uri, item.title or item.name)
            yield f"{line} — {plain(item.description)}" if item.description else line
        elif isinstance(item, EmbeddedResource):
            yield f"Attached: {self.reference(item.uri)}"
            if item.text is not None:
                yield fence(item.text, fence_language(urlsplit(item.uri or "").path, item.mime_type))
            else:
                yield f"*Binary contents ({plain(item.mime_type or 'unknown type')}), not included.*"
        else:
            yield f"*Content of type {code_span(item.kind or '') or 'unknown'}:*"
            yield details("Content", fence(pretty_json(item.raw), "json"))

    def reference(self, uri: str | None, name: str | None = None) -> str:
        """A link when ``uri`` is on the web, else the name and the uri as code."""
        uri = uri or ""
        if is_web_url(uri):
            return link(name or uri, uri.strip())
        label = plain(name) if name else ""
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
            status = f"Killed by signal {plain(term.signal)}."
        elif term.exit_code is not None:
            status = f"Exit status {term.exit_code}."
        elif term.state == "running":
            status = "Still running when exported."
        else:
            status = "Finished." if term.exited else "Released before it finished."
        yield f"Ran in {code_span(self.path(term.cwd))}. {status}" if term.cwd else status
