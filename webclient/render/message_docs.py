"""Messages as the page shows them while they stream: finished Markdown blocks, the rest, the raw text since.

One :class:`MessageDoc` per message owns its rendering (shared by every page showing the session), and each
rendering is described by a :class:`Progress`: what a page that received it holds, so the live view can send a
page only what it lacks.

A session rebuilt from its journal has every message to render from scratch, which a big one makes slow (Markdown
and Pygments take ~50 ms per 100 KB). So a page's first paint (``MessageDocs.for_page``) renders finished
messages from scratch, newest first, only up to ``MessageDocs.FIRST_PAINT_CHARS``; the others show as their text, as a
streaming message's tail does, and are rendered right after (``render_pending``, or the next view of them: the
page's socket sends them rendered as soon as it connects), into the very HTML a slower first paint had shown.

A finished message longer than ``MessageDocs.LONG_MESSAGE`` shows by its end (``MessageDocs.by_its_end``): its last
100 kB or so, from a block's start, under a control that brings the part before it (``earlier_part``), 100 kB at a
time, over the page's socket. The export has it whole.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from markupsafe import Markup, escape

from webclient.render.dom import markdown_id
from webclient.render.markdown import MarkdownStream, render_markdown
from webclient.viewmodel.entries import Entry, MessageEntry


@dataclass(frozen=True, slots=True)
class Progress:
    """How far one rendering of a message went; what a page holds once it received that rendering."""

    generation: int
    """The Markdown's generation: a new one re-made blocks a page already holds."""
    blocks: int
    """Finished blocks rendered."""
    caught_up: int
    """Source characters rendered as Markdown (finished blocks and the rest); the text after them is raw."""
    chars: int
    """Source characters shown."""
    streaming: bool
    attachments: int

    def continues(self, shown: Progress, thought: bool) -> bool:
        """Whether a page holding ``shown`` gets this by additions (new blocks, a new rest, more raw text); if not,
        it gets the message whole. A thought's card opens and closes with its streaming."""
        return (
            self.generation == shown.generation
            and self.blocks >= shown.blocks
            and self.chars >= shown.chars
            and self.attachments == shown.attachments
            and (self.streaming == shown.streaming or not thought)
        )


@dataclass(slots=True)
class MessageView:
    """What a message looks like now: finished blocks, the rest rendered as of the last catch-up, and the
    text that arrived since (shown as it is, at the end of the rendered rest, until the next catch-up)."""

    blocks: list[str]
    """The HTML of the finished blocks (the stream's own list, growing with it: read it before the next view)."""
    before: Markup
    """The unfinished rest as Markdown, up to where the raw text goes (inside its last element)."""
    raw: str
    """The text since the last catch-up."""
    after: Markup
    """The closing tags of the rest's last element."""
    progress: Progress

    @property
    def live_before(self) -> Markup:
        """The live rest up to where text arrives: the rendered rest's start and the raw text, escaped."""
        return self.before + self.raw

    @property
    def live_after(self) -> Markup:
        """The live rest from where text arrives: the tail's cursor (while it streams) and the rest's closing tags."""
        return TAIL + self.after if self.progress.streaming else self.after

    @property
    def html(self) -> Markup:
        """The finished blocks as one piece, made only when asked: a streamed update sends only the new ones, and
        joining a long message on every frame would cost more than the rest of the frame."""
        return Markup("".join(self.blocks))


TAIL = Markup('<span class="md-tail"></span>')
"""Where a streaming message's text arrives (the page draws a cursor after it)."""
AS_TEXT_BEFORE, AS_TEXT_AFTER = Markup('<p class="md-as-text">'), Markup("</p>")
"""Around a message shown as its text until it is rendered."""
_CLOSING_TAGS = re.compile(r"(?:</[a-z0-9]+>\s*)+$")


def _split_for_tail(html: str) -> tuple[str, str]:
    """``html`` cut where the raw tail goes: inside its last element, so new text continues the paragraph (or
    code block) it belongs to instead of starting a line of its own."""
    end = _CLOSING_TAGS.search(html)
    if end is None or html[end.start() + 2 : end.start() + 4] in ("td", "th"):
        return html, ""  # text typed into a table cell would resize every column: keep it below
    return html[: end.start()], html[end.start() :]


_PLAIN_TEXT = re.compile(r"(?:[^\W_]|[ .,:?!/%=+-])*")
"""Text that Markdown renders as itself inside a paragraph (``fullmatch``): letters, digits, spaces and punctuation
that neither starts nor ends anything (emphasis, code, links, entities, HTML, escapes) and that the page's escaping
leaves as it is (no quotes). No line break: a new line may start a list, a heading or a table."""
_CONTINUES_AS_TEXT = re.compile(r"(?:\A|\n) {0,3}[^\W\d_][^\n]*(?:[^\W_]|[.,:?!])\Z")
"""A rendered rest that plain text can continue: its last line began with a letter (so that line cannot become a
block of another kind: a list, a heading, a rule) and ends with a letter, a digit or a full stop and the like (not a
``*``, ``_`` or ``\\`` that the next character could turn into markup)."""


class MessageDoc:
    """The rendering of one message: its Markdown stream, when it last caught up and the rest rendered then (cut
    where the raw text goes once per catch-up, not once per frame)."""

    __slots__ = ("after", "before", "caught_up", "continues_as_text", "revision", "seen", "stream", "updated")

    def __init__(self, revision: int = 0, generation: int = 0) -> None:
        self.revision = revision
        """The message's ``revision`` this rendering follows (a new one replaced or reopened its content)."""
        self.stream = MarkdownStream()
        self.stream.generation = generation
        self.updated = 0.0
        self.seen = -1
        """The message's length at the last catch-up."""
        self.caught_up = 0
        self.before = ""
        self.after = ""
        self.continues_as_text = False
        """Plain text (`_PLAIN_TEXT`) after the rest rendered at the last catch-up renders as itself: the rest ends
        inside a paragraph (`_CONTINUES_AS_TEXT`)."""

    def view(self, entry: MessageEntry, now: float, interval: float, tail_limit: int) -> MessageView:
        """The message as of ``now``: Markdown catches up when it streams no more, or when it grew and either
        ``interval`` seconds passed since the last catch-up (less for a short rest: `MessageDocs.REST_RATE`) or the
        raw text is longer than ``tail_limit``."""
        stream = self.stream
        length = entry.length  # a streaming message is read from its end only (`text_since`), never whole
        if not entry.streaming:
            stream.update(entry.text, final=True)
            self.caught_up, self.before, self.after = length, "", ""
        elif length != self.seen and self._due(entry, now, interval, tail_limit):
            stream.catch_up(entry.text_since(stream.committed))
            self.updated, self.seen = now, length
            # Markdown drops a paragraph's trailing space or newline: keep it in the raw text that follows.
            rest = stream.tail.rstrip()
            self.caught_up = length - (len(stream.tail) - len(rest))
            self.before, self.after = _split_for_tail(stream.render_tail(rest)) if rest else ("", "")
            self.continues_as_text = self.after == "</p>\n" and _CONTINUES_AS_TEXT.search(rest) is not None
        progress = Progress(
            stream.generation, len(stream.blocks), self.caught_up, length, entry.streaming, len(entry.attachments)
        )
        raw = entry.text_since(self.caught_up)
        return MessageView(stream.blocks, Markup(self.before), raw, Markup(self.after), progress)

    def _due(self, entry: MessageEntry, now: float, interval: float, tail_limit: int) -> bool:
        """Whether Markdown catches up with a message that grew: when ``interval`` seconds passed since the last
        catch-up (less for a short rest: `MessageDocs.REST_RATE`), unless what came since renders as itself (words
        continuing the paragraph being written: the page shows them right as text, and parsing the rest again for
        them was most of a streaming message's cost); and whenever the raw text is longer than ``tail_limit``."""
        if entry.length - self.caught_up > tail_limit:
            return True
        gap = min(interval, max(MessageDocs.CATCH_UP_GAP, len(self.stream.tail) / MessageDocs.REST_RATE))
        if now - self.updated < gap:
            return False
        return not (self.continues_as_text and _PLAIN_TEXT.fullmatch(entry.text_since(self.caught_up)) is not None)


class MessageDocs:
    """The rendering of every message of one session, shared by all its viewers."""

    RENDER_INTERVAL = 0.3
    """Seconds at most between Markdown catch-ups while a message streams (plain text shows in between)."""
    REST_RATE = 40_000
    """Characters of unfinished rest per second of interval: a short rest catches up at every frame (a paragraph
    takes ~0.5 ms), a long one less often, so that catching up costs a few percent of a core per streaming message.
    Text shown raw and then rendered differently is sent again from where it differs: the more often the rest
    catches up, the less is sent twice."""
    CATCH_UP_GAP = 0.025
    """Seconds at least between two catch-ups: the pages of one session, each asking at its own frame, share one."""
    TAIL_LIMIT = 4096
    """Characters of plain-text tail after which Markdown catches up at once."""
    FIRST_PAINT_CHARS = 100_000
    """Characters of finished messages a page's first paint renders from scratch (~50 ms); the messages past them
    show as text until rendered just after. Less than a window holds (`LiveView.WINDOW_CHARS`)."""
    LONG_MESSAGE = 100_000
    """Characters of a finished message past which it shows by its end (`by_its_end`: about 50 ms of Markdown), the
    earlier part on request: a 3.4 MB answer would make a 3.6 MB page and take seconds to render."""

    def __init__(self, on_pending: Callable[[], None] | None = None) -> None:
        self._docs: dict[int, MessageDoc] = {}
        self._pending: dict[int, MessageEntry] = {}
        """Finished messages a first paint showed as text, not rendered yet (oldest first)."""
        self._on_pending = on_pending
        """Called when a first paint leaves a message as text and none was pending: time to call ``render_pending``."""
        self._granted: set[int] | None = None
        """For a first paint, the messages it may render from scratch; None for every other view."""
        self._ends: dict[int, tuple[int, int, MessageView]] = {}
        """Long finished messages as shown by their end, by seq, with the revision and length rendered."""

    def for_page(self, window: Sequence[Entry]) -> MessageDocs:
        """These renderings (shared) as the first paint of a page showing ``window`` uses them: a page whose socket,
        once connected, sends each message it shows as text through ``view``. It renders the finished messages not
        rendered yet from the newest (at the bottom, where the page opens) while they fit in ``FIRST_PAINT_CHARS``
        in all; the others show as text and are pending."""
        page = copy.copy(self)  # the same dicts
        budget, page._granted = self.FIRST_PAINT_CHARS, set()
        for entry in reversed(window):
            if (
                isinstance(entry, MessageEntry)
                and entry.kind != "user-message"  # plain text, never Markdown
                and entry.seq not in self._docs
                and entry.seq not in self._pending
                and entry.seq not in self._ends
                and len(entry.text) <= budget
            ):
                budget -= len(entry.text)
                page._granted.add(entry.seq)
        return page

    def keep(self, first_seq: int) -> None:
        """Forget the messages numbered below ``first_seq`` (the thread dropped them to bound its memory)."""
        for seq in [seq for seq in self._docs if seq < first_seq]:
            del self._docs[seq]
        for seq in [seq for seq in self._pending if seq < first_seq]:
            del self._pending[seq]
        for seq in [seq for seq in self._ends if seq < first_seq]:
            del self._ends[seq]

    def view(self, entry: MessageEntry, now: float) -> MessageView:
        if not entry.streaming and entry.kind != "user-message" and entry.length > self.LONG_MESSAGE:
            return self.by_its_end(entry)
        doc = self._docs.get(entry.seq)
        if doc is not None and doc.revision != entry.revision:  # its content was replaced: render it anew, whole
            doc = self._docs[entry.seq] = MessageDoc(entry.revision, doc.stream.generation + 1)
        if doc is None:
            if self._granted is not None and self._leave_as_text(entry):
                return _as_text(entry)
            self._pending.pop(entry.seq, None)
            doc = self._docs[entry.seq] = MessageDoc()
        return doc.view(entry, now, self.RENDER_INTERVAL, self.TAIL_LIMIT)

    def by_its_end(self, entry: MessageEntry) -> MessageView:
        """A long finished message as a page shows it: its last ``LONG_MESSAGE`` characters or so (from a block's
        start), under a control that asks for the part before (`earlier_part`). Rendered once per revision; its
        whole rendering, if it streamed here, is let go of."""
        kept = self._ends.get(entry.seq)
        if kept is not None and kept[:2] == (entry.revision, entry.length):
            return kept[2]
        self._docs.pop(entry.seq, None)
        self._pending.pop(entry.seq, None)
        text = entry.text
        cut = block_start(text, len(text) - self.LONG_MESSAGE)
        html = Markup(earlier_control(entry, cut)) + Markup(render_markdown(text[cut:]))
        # A generation no rendering of the stream has: a page that holds any other rendering gets this one whole.
        progress = Progress(-1, 1, len(text), len(text), False, len(entry.attachments))
        view = MessageView([html], Markup(""), "", Markup(""), progress)
        self._ends[entry.seq] = (entry.revision, entry.length, view)
        return view

    def render_pending(self) -> bool:
        """Render the newest message a first paint left as text (the one nearest the bottom of the page, where a
        reader starts); whether any is left."""
        if self._pending:
            entry = self._pending[next(reversed(self._pending))]
            self._pending.pop(entry.seq)
            if entry.seq not in self._docs:
                self._docs[entry.seq] = MessageDoc()
                self._docs[entry.seq].view(entry, 0.0, self.RENDER_INTERVAL, self.TAIL_LIMIT)
        return bool(self._pending)

    def _leave_as_text(self, entry: MessageEntry) -> bool:
        """Whether a first paint shows ``entry``, not rendered yet, as text (and leaves it pending)."""
        if entry.streaming or self._granted is None or entry.seq in self._granted:
            return False  # a streaming message is rendered as it streams: its page gets only what it lacks afterwards
        if entry.seq not in self._pending:
            self._pending[entry.seq] = entry
            if len(self._pending) == 1 and self._on_pending is not None:
                self._on_pending()
        return True


def _as_text(entry: MessageEntry) -> MessageView:
    """A finished message not rendered yet: all of it as raw text (its lines kept) after no Markdown."""
    progress = Progress(0, 0, 0, len(entry.text), entry.streaming, len(entry.attachments))
    return MessageView([], AS_TEXT_BEFORE, entry.text, AS_TEXT_AFTER, progress)


def block_start(text: str, at: int) -> int:
    """Where a top-level Markdown block starts at or after ``at`` in ``text``: after a blank line outside a fenced
    code block (a part of a message cut there renders alone as it does in the whole); else the next line's start.
    0 when ``at`` is not past the start."""
    if at <= 0:
        return 0
    inside = len(_FENCE.findall(text, 0, at)) % 2 == 1
    cut = at
    for _ in range(50):  # a blank line outside a fence is usually near; past that, a line's start will do
        if inside:  # past the fence's end first
            close = _FENCE.search(text, cut)
            if close is None:
                break
            cut, inside = close.end(), False
        blank = text.find("\n\n", cut)
        if blank < 0:
            break
        inside = len(_FENCE.findall(text, cut, blank + 2)) % 2 == 1
        cut = blank + 2
        if not inside:
            return cut
    line = text.find("\n", at)
    return line + 1 if line >= 0 else at


_FENCE = re.compile(r"^ {0,3}(?:```|~~~)", re.MULTILINE)


def earlier_control(entry: MessageEntry, before: int) -> str:
    """The button that asks (over the page's socket) for the part of ``entry`` before ``before``; "" at the start.
    Its element is replaced by that part (`earlier_part`)."""
    if before <= 0:
        return ""
    values = json.dumps({"action": "message_earlier", "seq": entry.seq, "before": before})
    size = f"{before / 1e6:.1f} MB" if before >= 1e6 else f"{before / 1e3:.0f} kB"
    return (
        f'<div id="{markdown_id(entry)}-cut-{before}" class="message-cut" data-role="message-cut">'
        f'<button type="button" class="link" data-action="message-earlier" ws-send hx-vals="{escape(values)}">'
        f"Show the earlier part ({size} more)</button></div>"
    )


def earlier_part(entry: MessageEntry, before: int, size: int = MessageDocs.LONG_MESSAGE) -> str:
    """The part of a long message before ``before`` (about ``size`` characters, from a block's start), as the
    out-of-band fragment that replaces its control: a control for the part before it, then it rendered."""
    text = entry.text
    before = min(before, len(text))
    cut = block_start(text, before - size)
    if cut >= before:  # no block starts in the part: take it whole to a line's start
        cut = max(0, text.rfind("\n", 0, max(0, before - size)) + 1)
    html = earlier_control(entry, cut) + render_markdown(text[cut:before])
    return f'<div id="{markdown_id(entry)}-cut-{before}" hx-swap-oob="outerHTML">{html}</div>'
