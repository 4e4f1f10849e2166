"""The protocol log viewer: every JSON-RPC line of a session both ways, filterable, tailing live.

One URL, ``/sessions/{id}/log``, answers:

- a browser: the whole page (filters from the query string, so a filtered view is a link);
- htmx, after the filters changed: the list alone (block ``log_list``);
- htmx, polling with ``after=N``: the matching lines after N and a new poller (block ``log_rows``);
- htmx, a row opened with ``line=N``: that line as indented JSON (block ``line_json``), or as plain
  text without htmx;
- ``format=text``: the whole log as plain text, then the agent's stderr.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from starlette.datastructures import QueryParams
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response

from webclient.acp.agent import AcpAgent
from webclient.acp.protocol_log import MAX_LINE_CHARS, LogFilter, LogLine, Selection
from webclient.render.formats import pretty_json
from webclient.session.core import Session
from webclient.web.context import base_context, render, session_of, small_int, urls
from webclient.web.context import renderer as web_renderer
from webclient.web.page_context import SignedInContext

TEMPLATE = "protocol_log.html"
SHOW_LIMIT = 1000
"""Lines a view shows at most: the newest of those that match."""
ARROWS = {"out": "→", "in": "←", "garbage": "!"}
DIRECTIONS = {"in": "agent → client", "out": "client → agent", "garbage": "agent → client, unreadable"}
KINDS = {
    "request": "request",
    "response": "result",
    "error": "error",
    "notification": "notification",
    "unparseable": "unreadable",
}


def clock(when: float) -> str:
    """``HH:MM:SS.mmm`` in local time."""
    return f"{time.strftime('%H:%M:%S', time.localtime(when))}.{int(when * 1000) % 1000:03d}"


def iso_time(when: float) -> str:
    return datetime.fromtimestamp(when).astimezone().isoformat(timespec="milliseconds")


def log_filter(params: QueryParams) -> LogFilter:
    """The filters of a query string (the names of the page's form fields)."""
    direction = params.get("direction", "")
    return LogFilter(
        direction=direction if direction in ("in", "out") else "",
        query=params.get("q", ""),
        method=params.get("method", ""),
        unknown_only=bool(params.get("unknown")),
    )


def filter_query(spec: LogFilter) -> dict[str, str]:
    """The query string fields that ask for ``spec`` (the inverse of :func:`log_filter`)."""
    values = {"direction": spec.direction, "method": spec.method, "q": spec.query}
    if spec.unknown_only:
        values["unknown"] = "1"
    return {key: value for key, value in values.items() if value}


@dataclass(frozen=True, kw_only=True)
class LogPageContext(SignedInContext):
    """What ``protocol_log.html`` and its blocks are rendered with."""

    template = TEMPLATE
    session: Session
    """The session whose traffic this is."""
    filter: LogFilter
    """The filters in effect (they fill the form)."""
    lines: list[LogLine]
    """The lines to show, oldest first."""
    omitted: int
    """Older matching lines left out to keep the page small."""
    log_url: str
    """This page's path, without a query string."""
    tail_url: str
    """What the poller asks for: the same filters, lines after the last one."""
    methods: list[str]
    """Method names seen, for the method filter."""
    update_types: list[str]
    """sessionUpdate types seen, for the same filter."""
    kept: int
    """Lines the log holds (the oldest are dropped past its limit)."""
    total: int
    """Lines recorded since the session started."""
    stderr: str
    """The agent's stderr (empty in fragments)."""
    tail: bool = False
    """Rendering what a poll found (``omitted`` then means skipped)."""
    pretty: str | None = None
    """One line as indented JSON (block line_json)."""
    clock: Callable[[float], str] = clock
    """when → HH:MM:SS.mmm."""
    iso_time: Callable[[float], str] = iso_time
    """when → ISO 8601, for <time datetime>."""
    arrows: dict[str, str] = field(default_factory=lambda: dict(ARROWS))
    """direction → arrow."""
    direction_labels: dict[str, str] = field(default_factory=lambda: dict(DIRECTIONS))
    """direction → who sent it to whom."""
    kind_labels: dict[str, str] = field(default_factory=lambda: dict(KINDS))
    """kind → its label."""


def _acp(session: Session) -> AcpAgent:
    """The session's ACP adapter, which keeps its JSON-RPC lines and the agent's stderr."""
    if not isinstance(session.agent, AcpAgent):
        raise HTTPException(404, "This session's agent speaks no JSON-RPC")
    return session.agent


def _context(request: Request, session: Session, spec: LogFilter, selection: Selection, stderr: str) -> LogPageContext:
    log = _acp(session).protocol_log
    log_url = urls(request).for_("protocol_log", session_id=session.id)
    methods = sorted(log.methods | ({spec.method} if spec.method and spec.method not in log.update_types else set()))
    return LogPageContext(
        **base_context(request),
        session=session,
        filter=spec,
        lines=selection.lines,
        omitted=selection.omitted,
        log_url=log_url,
        tail_url=urls(request).for_("protocol_log", session_id=session.id, **filter_query(spec), after=selection.last),
        methods=methods,
        update_types=sorted(log.update_types),
        kept=len(log),
        total=log.total,
        stderr=stderr,
    )


def _block(request: Request, block: str, context: LogPageContext, **extra: Any) -> HTMLResponse:
    renderer = web_renderer(request)
    html = renderer.block(TEMPLATE, block, **context.as_dict(), **extra)
    return HTMLResponse(html)


def _is_htmx(request: Request) -> bool:
    """An htmx swap (not a history restore, which wants the whole page)."""
    headers = request.headers
    return headers.get("hx-request") == "true" and headers.get("hx-history-restore-request") != "true"


def log_text(session: Session) -> str:
    """The whole log as plain text: time, arrow (→ to the agent, ← from it, ! unreadable), line; then stderr."""
    lines = [f"{clock(line.when)} {ARROWS.get(line.direction, '!')} {line.text}" for line in _acp(session).protocol_log]
    stderr = _acp(session).stderr.text()
    return "\n".join(lines) + f"\n\n── agent stderr ({len(stderr):,} characters) ──\n{stderr}"


def pretty_line(line: LogLine) -> str:
    """A line as indented JSON; as it is if it is not JSON (unreadable, or cut for length)."""
    if line.kind == "unparseable" or len(line.text) > MAX_LINE_CHARS:
        return line.text
    try:
        return pretty_json(json.loads(line.text))
    except (ValueError, RecursionError):
        return line.text


async def protocol_log_page(request: Request) -> Response:
    """``/sessions/{session_id}/log``: the page, one of its fragments, one line, or ``?format=text``."""
    session = await session_of(request)
    params = request.query_params
    log = _acp(session).protocol_log
    if params.get("format") == "text":
        return PlainTextResponse(log_text(session))
    spec = log_filter(params)
    if "line" in params:
        number = small_int(params["line"])
        line = log.line(number) if number is not None else None
        pretty = pretty_line(line) if line is not None else "This line is no longer in the log."
        if not _is_htmx(request):
            return PlainTextResponse(pretty, status_code=200 if line is not None else 404)
        context = _context(request, session, spec, Selection([], 0, log.total), "")
        return _block(request, "line_json", replace(context, pretty=pretty), line=line)
    after = small_int(params.get("after"))
    if _is_htmx(request) and after is not None:
        selection = log.filter(spec, after=after, limit=SHOW_LIMIT)
        return _block(request, "log_rows", replace(_context(request, session, spec, selection, ""), tail=True))
    # Searching 5,000 long lines takes a moment: not on the event loop.
    selection = await asyncio.to_thread(log.filter, spec, limit=SHOW_LIMIT)
    if _is_htmx(request):
        return _block(request, "log_list", _context(request, session, spec, selection, ""))
    context = _context(request, session, spec, selection, _acp(session).stderr.text())
    return render(request, context)
