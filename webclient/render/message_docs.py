"""Messages as the page shows them while they stream: finished Markdown blocks, the rest, the raw text since.

One :class:`MessageDoc` per message owns its rendering (shared by every page showing the session), and each
rendering is described by a :class:`Progress`: what a page that received it holds, so the live view can send a
page only what it lacks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from markupsafe import Markup

from webclient.render.markdown import MarkdownStream
from webclient.viewmodel.entries import MessageEntry


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
    def html(self) -> Markup:
        """The finished blocks as one piece, made only when asked: a streamed update sends only the new ones, and
        joining a long message on every frame would cost more than the rest of the frame."""
        return Markup("".join(self.blocks))


_CLOSING_TAGS = re.compile(r"(?:</[a-z0-9]+>\s*)+$")


def _split_for_tail(html: str) -> tuple[str, str]:
    """``html`` cut where the raw tail goes: inside its last element, so new text continues the paragraph (or
    code block) it belongs to instead of starting a line of its own."""
    end = _CLOSING_TAGS.search(html)
    if end is None or html[end.start() + 2 : end.start() + 4] in ("td", "th"):
        return html, ""  # text typed into a table cell would resize every column: keep it below
    return html[: end.start()], html[end.start() :]


class MessageDoc:
    """The rendering of one message: its Markdown stream, when it last caught up and the rest rendered then (cut
    where the raw text goes once per catch-up, not once per frame)."""

    __slots__ = ("after", "before", "caught_up", "stream", "updated")

    def __init__(self) -> None:
        self.stream = MarkdownStream()
        self.updated = 0.0
        self.caught_up = 0
        self.before = ""
        self.after = ""

    def view(self, entry: MessageEntry, now: float, interval: float, tail_limit: int) -> MessageView:
        """The message as of ``now``: Markdown catches up when it streams no more, ``interval`` seconds after the
        last catch-up, or once the raw text is longer than ``tail_limit``."""
        stream = self.stream
        text = entry.text
        if not entry.streaming:
            stream.update(text, final=True)
            self.caught_up, self.before, self.after = len(text), "", ""
        elif now - self.updated >= interval or len(text) - self.caught_up > tail_limit:
            stream.update(text)
            self.updated = now
            # Markdown drops a paragraph's trailing space or newline: keep it in the raw text that follows.
            rest = stream.tail.rstrip()
            self.caught_up = len(text) - (len(stream.tail) - len(rest))
            self.before, self.after = _split_for_tail(stream.render_tail(rest)) if rest else ("", "")
        progress = Progress(
            stream.generation, len(stream.blocks), self.caught_up, len(text), entry.streaming, len(entry.attachments)
        )
        raw = text[self.caught_up :]
        return MessageView(stream.blocks, Markup(self.before), raw, Markup(self.after), progress)


class MessageDocs:
    """The rendering of every message of one session, shared by all its viewers."""

    RENDER_INTERVAL = 0.3
    """Seconds between Markdown catch-ups while a message streams (plain text shows in between)."""
    TAIL_LIMIT = 4096
    """Characters of plain-text tail after which Markdown catches up at once: text sent as a tail is sent
    again as HTML, so a fast stream must not build a long one."""

    def __init__(self) -> None:
        self._docs: dict[int, MessageDoc] = {}

    def keep(self, first_seq: int) -> None:
        """Forget the messages numbered below ``first_seq`` (the thread dropped them to bound its memory)."""
        for seq in [seq for seq in self._docs if seq < first_seq]:
            del self._docs[seq]

    def view(self, entry: MessageEntry, now: float) -> MessageView:
        doc = self._docs.get(entry.seq)
        if doc is None:
            doc = self._docs[entry.seq] = MessageDoc()
        return doc.view(entry, now, self.RENDER_INTERVAL, self.TAIL_LIMIT)
