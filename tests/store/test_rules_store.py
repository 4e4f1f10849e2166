"""The permission rules in the store (`webclient.store.rules`), on SQLite and PostgreSQL: added with the id the
database gives, read back whole at start, deleted one at a time."""

from __future__ import annotations

import pytest

from webclient.people.rules import Rule, RuleBook
from webclient.store import rules
from webclient.store.store import Store

pytestmark = pytest.mark.asyncio


async def test_rules_are_kept_read_back_and_deleted(database_url: str) -> None:
    store = await Store.open_url(database_url)
    try:
        assert await rules.load_all(store.engine) == []
        mine = await rules.add(store.engine, Rule(0, "alice", "allow", "edit", path_pattern="src/*"), "alice")
        everyone = await rules.add(
            store.engine, Rule(0, None, "deny", "execute", command_pattern="rm *", workspace="/w", agent="demo"), "root"
        )
        session = await rules.add(store.engine, Rule(0, "alice", "ask", session_id="s1"), "alice")
        assert mine.id < everyone.id < session.id
        assert await rules.load_all(store.engine) == [mine, everyone, session]
        book = RuleBook(await rules.load_all(store.engine))
        assert book.for_person("alice") == [mine, everyone, session] and book.for_person("bob") == [everyone]
        assert await rules.delete_rule(store.engine, everyone.id)
        assert not await rules.delete_rule(store.engine, everyone.id)  # gone already
        assert await rules.load_all(store.engine) == [mine, session]
    finally:
        await store.close()
