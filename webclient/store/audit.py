"""The audit log: one row per attributed action (a prompt, an answer, a change, a Stop, a share), per session and
for the whole server, read back as pages and exports (CSV, JSON lines).

A session's actions reach it through its journal: an ``action`` record that names its person (``by``, see
`webclient.session.attribution`) becomes a row too, written in the same batch by the journal's writer, so the log
costs the streaming path nothing (protocol lines are not looked at). Sharing writes its rows the same way.
"""

from __future__ import annotations

import csv
import io
import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select

from webclient.store.database import Database
from webclient.store.schema import audit

PAGE = 500
"""Rows a page of the log shows (newest first); an export has them all."""


@dataclass(frozen=True, slots=True)
class AuditRow:
    id: int
    at: float
    session_id: str | None
    person_id: str | None
    person_name: str | None
    action: str
    detail: str
    """JSON: the action's arguments (a prompt's text, the option chosen, ...)."""

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "at": self.at,
            "session": self.session_id,
            "person": self.person_id,
            "name": self.person_name,
            "action": self.action,
            "detail": json.loads(self.detail),
        }


def from_action(session_id: str, body: str) -> dict[str, Any] | None:
    """The audit row of an ``action`` journal record, if it names who did it (else None: nothing to attribute)."""
    if '"by"' not in body:
        return None
    try:
        action = json.loads(body)
        by = action.pop("by")
        name = str(action.pop("action"))
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    if not isinstance(by, dict) or "id" not in by:
        return None
    at = by.get("at")
    return row(session_id, str(by["id"]), str(by.get("name") or by["id"]), name, action, at)


def row(
    session_id: str | None,
    person_id: str | None,
    person_name: str | None,
    action: str,
    detail: dict[str, Any],
    at: float | None = None,
) -> dict[str, Any]:
    """An audit row's values, as the writer takes them."""
    return {
        "at": float(at) if isinstance(at, (int, float)) else time.time(),
        "session_id": session_id,
        "person_id": person_id,
        "person_name": person_name,
        "action": action[:32],
        "detail": json.dumps(detail),
    }


async def read(engine: Database, session_id: str | None = None, limit: int | None = PAGE) -> list[AuditRow]:
    """The log (of one session, or of the whole server), newest first; ``limit`` None: every row."""
    query = select(audit).order_by(audit.c.id.desc())
    if session_id is not None:
        query = query.where(audit.c.session_id == session_id)
    if limit is not None:
        query = query.limit(limit)
    async with engine.connect() as connection:
        rows = (await connection.execute(query)).all()
    return [AuditRow(r.id, r.at, r.session_id, r.person_id, r.person_name, r.action, r.detail) for r in rows]


CSV_COLUMNS = ("id", "at", "time", "session", "person", "name", "action", "detail")


def as_csv(rows: Sequence[AuditRow]) -> str:
    """The rows as CSV (oldest first), with a header; a cell an office program would run as a formula is quoted
    with a leading apostrophe."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(CSV_COLUMNS)
    for r in reversed(rows):
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(r.at))
        cells = (r.id, f"{r.at:.3f}", stamp, r.session_id, r.person_id, r.person_name, r.action, r.detail)
        writer.writerow([_cell(cell) for cell in cells])
    return out.getvalue()


def as_json_lines(rows: Iterable[AuditRow]) -> str:
    """The rows as JSON lines, oldest first."""
    return "".join(json.dumps(r.as_json()) + "\n" for r in reversed(list(rows)))


def _cell(value: object) -> str:
    text = "" if value is None else str(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text
