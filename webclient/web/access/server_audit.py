"""Rows of the server's audit log for what belongs to no session: signing in and out, an admin's Revoke, and the
permission rules made and deleted (a session's own actions reach the log through its journal, `webclient.store.audit`).

Each is written with the journal's next batch, as the rest of the log; without a store nothing is kept.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from starlette.types import Scope

    from webclient.people.person import Person
    from webclient.people.rules import Rule


def record(scope: Scope, who: Person, action: str, detail: dict[str, Any], session_id: str | None = None) -> None:
    """One row: ``who`` did ``action`` (``detail`` its arguments)."""
    from webclient.store import audit  # here: SQLAlchemy is imported only when a store is used

    app = scope.get("app")
    store = getattr(app.state, "store", None) if app is not None else None
    if store is not None:
        store.add_audit(audit.row(session_id, who.id, who.label, action, detail))


def rule_detail(rule: Rule) -> dict[str, Any]:
    """A rule as its audit row keeps it: its id, decision, what it matches and where."""
    return {
        "rule": rule.id,
        "decision": rule.decision,
        "what": rule.what,
        "where": rule.where,
        "everyone": rule.for_everyone or None,
    }
