"""The permission rules the store keeps (table ``rules``): all of them read at start into the server's
`webclient.people.rules.RuleBook`, then added and deleted one at a time as people set them."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, cast

from sqlalchemy import delete, insert, select

from webclient.people.rules import Decision, Rule
from webclient.store.database import Database
from webclient.store.schema import rules

_FIELDS = ("tool_kind", "path_pattern", "command_pattern", "session_id", "workspace", "agent")


def _rule(row: Any) -> Rule:
    return Rule(
        id=row.id,
        owner=row.owner,
        decision=cast(Decision, row.decision),
        **{name: getattr(row, name) for name in _FIELDS},
    )


async def load_all(engine: Database) -> list[Rule]:
    """Every rule, oldest first (a server holds them all in memory: there are few, and a question cannot wait)."""
    async with engine.connect() as connection:
        result = await connection.execute(select(rules).order_by(rules.c.id))
        return [_rule(row) for row in result]


async def add(engine: Database, rule: Rule, created_by: str) -> Rule:
    """Keep ``rule`` (its ``id`` is ignored) as ``created_by`` set it; returns it with the id the store gave it."""
    values = {name: getattr(rule, name) for name in _FIELDS}
    async with engine.begin() as connection:
        result = await connection.execute(
            insert(rules).values(
                owner=rule.owner, decision=rule.decision, created=datetime.now(UTC), created_by=created_by, **values
            )
        )
        new_id = result.inserted_primary_key[0] if result.inserted_primary_key else None
    assert isinstance(new_id, int)
    return Rule(id=new_id, owner=rule.owner, decision=rule.decision, **values)


async def delete_rule(engine: Database, rule_id: int) -> bool:
    """Forget rule ``rule_id``; False if there was none (who may delete it is the caller's to check)."""
    async with engine.begin() as connection:
        result = await connection.execute(delete(rules).where(rules.c.id == rule_id))
        return bool(result.rowcount)
