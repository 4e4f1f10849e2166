"""The raw JSON-RPC traffic of one session, both ways, bounded: what the protocol log viewer shows.

Each line is summarised when it is recorded (kind, method, id, ``sessionUpdate`` type), so filtering
the whole log is a pass over small records; a response is given the method of the request it answers.
The summary is read from the message the JSON-RPC peer already decoded (or encoded) when it is given:
decoding every line a second time here cost about a seventh of the server's time in a flood.
"""

from __future__ import annotations

import json
import re
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

from webclient.acp.updates import KNOWN_SESSION_UPDATES

MAX_LINES = 5000
MAX_LINE_CHARS = 20_000
MAX_CHARS = 8_000_000
"""Characters the log holds in all: 5,000 lines cut at 20,000 characters would be 100 MB a session."""
PREVIEW_CHARS = 160
MAX_PENDING = 10_000
"""Requests remembered while they wait for their response (the oldest are forgotten beyond this)."""

Kind = Literal["request", "response", "error", "notification", "unparseable"]

# Lines cut at MAX_LINE_CHARS are no longer JSON: their summary is read from the keys at their start.
_HEAD_CHARS = 4000
_STRING = r'"((?:[^"\\]|\\.)*)"'
_HEAD_KEY = re.compile(r'"(method|result|error|params)"\s*:')
_HEAD_METHOD = re.compile(r'"method"\s*:\s*' + _STRING)
_HEAD_ID = re.compile(r'"id"\s*:\s*(-?\d+(?:\.\d+)?|"(?:[^"\\]|\\.)*"|null)')
_HEAD_UPDATE = re.compile(r'"sessionUpdate"\s*:\s*' + _STRING)

Summary = tuple[Kind, str | None, str | None, str | None]
"""(kind, method, id, sessionUpdate type) of a line."""
_UNPARSEABLE: Summary = ("unparseable", None, None, None)
_UNDECODED: Any = object()
"""``record``'s default message: the caller has not decoded the line, so the log decodes it itself."""


class LogLine(NamedTuple):
    """One line of traffic and what it is.

    ``direction`` is ``in`` (from the agent), ``out`` (to it) or ``garbage`` (a line from the agent that
    could not be read; ``text`` starts with the reason). ``id`` is the JSON text of the message id
    (``3``, ``"abc"``); ``method`` of a response is that of the request it answers, when that was seen;
    ``update`` is the ``sessionUpdate`` type of a ``session/update`` notification.

    A named tuple, not a frozen dataclass: one is made for every line the agent writes, and a frozen
    dataclass sets each of its eight fields through ``object.__setattr__`` (a third of the log's cost).
    """

    number: int
    when: float
    direction: str
    text: str
    kind: Kind = "unparseable"
    method: str | None = None
    id: str | None = None
    update: str | None = None

    @property
    def unknown_update(self) -> bool:
        """A ``session/update`` of a type this client does not know (a newer protocol, an extension)."""
        return self.update is not None and self.update not in KNOWN_SESSION_UPDATES

    @property
    def preview(self) -> str:
        text = self.text
        return text if len(text) <= PREVIEW_CHARS else f"{text[:PREVIEW_CHARS]}…"


@dataclass(frozen=True, slots=True)
class LogFilter:
    """Which lines to show: every condition that is set must hold."""

    direction: str = ""
    """``in`` (from the agent, unreadable lines included), ``out`` (to the agent), or empty for both."""
    query: str = ""
    """Text the raw line contains, ignoring case."""
    method: str = ""
    """A method name (a response matches the method it answers) or a ``sessionUpdate`` type."""
    unknown_only: bool = False
    """Only ``session/update`` notifications of a type this client does not know."""

    def matches(self, line: LogLine) -> bool:
        if self.direction and (line.direction == "out") != (self.direction == "out"):
            return False
        if self.method and self.method != line.method and self.method != line.update:
            return False
        if self.unknown_only and not line.unknown_update:
            return False
        if self.query:
            needle = self.query.lower()
            text = line.text
            # Lower-casing a long line costs more than searching it: skip it when case cannot matter.
            return needle in (text if needle == self.query.upper() else text.lower())
        return True


@dataclass(frozen=True, slots=True)
class Selection:
    """The newest matching lines (oldest first), and how many matched in all."""

    lines: list[LogLine]
    matched: int
    last: int
    """The number of the newest line looked at: where the next ``after`` starts."""

    @property
    def omitted(self) -> int:
        return self.matched - len(self.lines)


def _opposite(direction: str) -> str:
    return "in" if direction == "out" else "out"


def _id_text(value: Any) -> str | None:
    if value is None or isinstance(value, bool) or not isinstance(value, str | int | float):
        return None
    return json.dumps(value)


def _summarise(text: str) -> Summary:
    """The summary of a complete line that nobody has decoded yet."""
    try:
        message = json.loads(text)
    except (ValueError, RecursionError):
        return _UNPARSEABLE
    return _summarise_message(message)


def _summarise_message(message: Any) -> Summary:
    """The summary of a decoded line (None for one that was not JSON; a batch is not summarised).

    Called for every line: the usual one, a ``session/update`` notification, costs three lookups."""
    if type(message) is not dict:
        return _UNPARSEABLE
    method = message.get("method")
    if type(method) is str:
        update = None
        if method == "session/update":
            try:
                update = message["params"]["update"]["sessionUpdate"]
            except (KeyError, TypeError):  # no params or update, or not objects
                pass
            if type(update) is not str:
                update = None
        if "id" in message:
            return "request", method, _id_text(message["id"]), update
        return "notification", method, None, update
    message_id = _id_text(message.get("id"))
    if "error" in message:
        return "error", None, message_id, None
    if "result" in message:
        return "response", None, message_id, None
    return "unparseable", None, message_id, None


def _summarise_head(text: str) -> Summary:
    """The same, guessed from the start of a line too long to keep whole (its keys usually come first)."""
    head = text[:_HEAD_CHARS]
    first = _HEAD_KEY.search(head)
    if first is None:
        return "unparseable", None, None, None
    found_id = _HEAD_ID.search(head, 0, first.start()) or _HEAD_ID.search(head)
    message_id = found_id.group(1) if found_id and found_id.group(1) != "null" else None
    if first.group(1) == "error":
        return "error", None, message_id, None
    if first.group(1) == "result":
        return "response", None, message_id, None
    found_method = _HEAD_METHOD.search(head)
    if found_method is None:
        return "unparseable", None, message_id, None
    method = found_method.group(1)
    found_update = _HEAD_UPDATE.search(head) if method == "session/update" else None
    kind: Kind = "request" if message_id is not None else "notification"
    return kind, method, message_id, found_update.group(1) if found_update else None


class ProtocolLog:
    """The last ``maxlen`` lines of traffic (and no more than ``MAX_CHARS`` characters), numbered from 1 in arrival
    order."""

    def __init__(self, maxlen: int = MAX_LINES) -> None:
        self._lines: deque[LogLine] = deque(maxlen=maxlen)
        self._chars = 0
        self._count = 0
        self._pending: dict[tuple[str, str], str] = {}
        self.methods: set[str] = set()
        """Every method seen (requests and notifications), evicted lines included (but not those of a replayed
        journal that the log could not hold)."""
        self.update_types: set[str] = set()
        """Every ``sessionUpdate`` type seen."""
        self._replayed: deque[tuple[str, str, Any]] = deque(maxlen=maxlen)
        """Lines of a journal being replayed, not made log lines yet: only the newest can stay, and a session of
        100,000 lines is rebuilt faster without (`replayed`)."""
        self._replayed_count = 0
        self.unrouted: set[int] = set()
        """The numbers of the ``session/update`` lines of a session that is neither this one nor one of its announced
        subagents: shown in no thread, marked here."""

    def mark_unrouted(self) -> None:
        """The line just recorded (or replayed) is an update of a session this client does not know."""
        self.unrouted.add(self._count + self._replayed_count)
        if len(self.unrouted) > 2 * (self._lines.maxlen or MAX_LINES):  # keep the newest: older lines are gone
            self.unrouted = set(sorted(self.unrouted)[-(self._lines.maxlen or MAX_LINES) :])

    def replayed(self, direction: str, line: str, message: Any) -> None:
        """A line of the session's journal, replayed when the session is rebuilt: counted now, made a log line when
        the log is next read or written."""
        self._replayed.append((direction, line, message))
        self._replayed_count += 1

    def _settle(self) -> None:
        """Make the replayed lines that the log can hold log lines, numbered after those it cannot."""
        replayed, self._replayed = self._replayed, deque(maxlen=self._replayed.maxlen)
        self._count += self._replayed_count - len(replayed)
        self._replayed_count = 0
        for direction, line, message in replayed:
            self.record(direction, line, message)

    def record(self, direction: str, line: str, message: Any = _UNDECODED) -> LogLine:
        """Add ``line``; ``message`` is what the line decodes to (None if it is not JSON), when the caller
        has decoded it already. A line too long to keep whole is summarised from its start either way, as
        the cut line is what the viewer shows and searches."""
        if self._replayed:
            self._settle()
        length = len(line)
        if length > MAX_LINE_CHARS:
            summary = _UNPARSEABLE if direction == "garbage" else _summarise_head(line)
            line = f"{line[:MAX_LINE_CHARS]}… ({length:,} characters)"
            length = len(line)
        elif direction == "garbage":
            summary = _UNPARSEABLE
        elif message is _UNDECODED:
            summary = _summarise(line)
        else:
            summary = _summarise_message(message)
        kind, method, message_id, update = summary
        if method is not None:
            self.methods.add(method)
            if update is not None:
                self.update_types.add(update)
        if message_id is not None:
            if kind == "request" and method is not None:
                self._remember(direction, message_id, method)
            elif kind in ("response", "error"):
                method = self._pending.pop((_opposite(direction), message_id), None)
        self._count += 1
        entry = LogLine(self._count, time.time(), direction, line, kind, method, message_id, update)
        lines = self._lines
        chars = self._chars + length
        if len(lines) == lines.maxlen:
            chars -= len(lines[0].text)  # the append below evicts it
        lines.append(entry)
        while chars > MAX_CHARS and len(lines) > 1:
            chars -= len(lines.popleft().text)
        self._chars = chars
        return entry

    def _remember(self, direction: str, message_id: str, method: str) -> None:
        if len(self._pending) >= MAX_PENDING:
            del self._pending[next(iter(self._pending))]
        self._pending[direction, message_id] = method

    def filter(self, spec: LogFilter | None = None, *, after: int = 0, limit: int | None = None) -> Selection:
        """The lines numbered above ``after`` that match ``spec``: the newest ``limit`` of them, oldest first.

        Safe to call from a worker thread: it works on one copy of the log, taken in a single step.
        """
        spec = spec or LogFilter()
        if self._replayed:
            self._settle()
        lines = list(self._lines)
        last = lines[-1].number if lines else self._count
        if after:
            start = max(0, len(lines) - (last - after)) if after < last else len(lines)
            lines = lines[start:]
        matching = [line for line in lines if spec.matches(line)]
        shown = matching if limit is None or len(matching) <= limit else matching[len(matching) - limit :]
        return Selection(shown, len(matching), last)

    def line(self, number: int) -> LogLine | None:
        """Line ``number``, if the log still holds it."""
        if self._replayed:
            self._settle()
        if not self._lines:
            return None
        index = number - self._lines[0].number
        return self._lines[index] if 0 <= index < len(self._lines) else None

    @property
    def total(self) -> int:
        """Lines recorded since the start, the dropped ones included."""
        return self._count + self._replayed_count

    def __iter__(self) -> Iterator[LogLine]:
        if self._replayed:
            self._settle()
        return iter(self._lines)

    def __len__(self) -> int:
        if self._replayed:
            self._settle()
        return len(self._lines)
