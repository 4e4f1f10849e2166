"""The audit log's pages: a session's (its owner's and the admins'), and the whole server's (admins'); each also as
CSV (``?format=csv``) and JSON lines (``?format=jsonl``), all of it, oldest first."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from webclient.web.context import base_context, person, render
from webclient.web.page_context import SignedInContext
from webclient.web.pages.shares import owned

if TYPE_CHECKING:  # the store only with one: SQLAlchemy is slow to import
    from webclient.store.audit import AuditRow
    from webclient.store.store import Store

EXPORTS = {"csv": "text/csv; charset=utf-8", "jsonl": "application/x-ndjson; charset=utf-8"}


@dataclass(frozen=True, kw_only=True)
class AuditContext(SignedInContext):
    """``audit.html``: the audit log of one session (its owner's) or of the whole server (the admins')."""

    template = "audit.html"
    rows: list[AuditRow]
    """The newest rows, newest first."""
    session_id: str | None
    """The session whose log this is; None for the server's."""
    session_title: str | None
    """That session's title (or id)."""
    detail_text: Callable[[AuditRow], str]
    """A row → its detail as one line to read."""
    when: Callable[[float], str]
    """A row's time → ISO 8601, UTC."""


async def session_audit(request: Request) -> Response:
    session, store = await owned(request)
    return await _answer(request, store, session.id, f"audit-{session.id}", session_title=session.title or session.id)


async def server_audit(request: Request) -> Response:
    store: Store | None = getattr(request.app.state, "store", None)
    if not person(request).admin or store is None:
        raise HTTPException(404, "Not Found")
    return await _answer(request, store, None, "audit")


async def _answer(
    request: Request, store: Store, session_id: str | None, filename: str, session_title: str | None = None
) -> Response:
    from webclient.store import audit  # here: SQLAlchemy is imported only when a store is used

    fmt = request.query_params.get("format", "")
    if fmt in EXPORTS:
        rows = await store.audit_log(session_id, limit=None)
        body = audit.as_csv(rows) if fmt == "csv" else audit.as_json_lines(rows)
        headers = {"content-disposition": f'attachment; filename="{filename}.{fmt}"'}
        return Response(body, media_type=EXPORTS[fmt], headers=headers)
    rows = await store.audit_log(session_id)
    context = AuditContext(
        **base_context(request),
        rows=rows,
        session_id=session_id,
        session_title=session_title,
        detail_text=detail_text,
        when=when,
    )
    return render(request, context)


def when(at: float) -> str:
    """An audit row's time: ISO 8601, UTC, to the second."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(at))


def detail_text(row: AuditRow) -> str:
    """The row's detail as one line to read: its fields as ``name: value``."""
    fields = row.as_json()["detail"]
    if not isinstance(fields, dict):
        return str(fields)
    return " · ".join(f"{key}: {value}" for key, value in fields.items() if value not in (None, "", []))
