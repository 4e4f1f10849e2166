"""Whose sessions a person sees, on both databases: their own, those a share names them or a group of theirs in,
one a link opens (never listed); an admin all."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest
import pytest_asyncio
from sqlalchemy import insert

from tests.store.test_history import SPEC, T0
from webclient.people.person import Person
from webclient.store.schema import shares
from webclient.store.store import Store

ALICE, BOB = Person("alice"), Person("bob", groups=frozenset({"dev"}))
ADMIN = Person("root", admin=True)


@pytest_asyncio.fixture
async def store(database_url: str) -> AsyncIterator[Store]:
    opened = await Store.open_url(database_url)
    try:
        for n, (session_id, owner) in enumerate([("a1", "alice"), ("a2", "alice"), ("b1", "bob"), ("old", None)]):
            recorder = opened.open_journal(session_id, "mine", SPEC, T0 + 60 * n, owner)
            recorder.words("user", "zebra crossing")
        await opened.flush()
        yield opened
    finally:
        await opened.close()


async def share(store: Store, session_id: str, kind: str, grantee: str) -> None:
    row = {"session_id": session_id, "kind": kind, "grantee": grantee, "role": "watch"}
    async with store.engine.begin() as connection:
        await connection.execute(insert(shares).values(**row, created=datetime.now(UTC), created_by="alice"))


async def listed(store: Store, viewer: Person) -> tuple[set[str], set[str]]:
    """What ``viewer``'s history and search list."""
    history, found = await store.history(viewer=viewer), await store.search("zebra", viewer=viewer)
    return {s.id for s in history.sessions}, {s.id for s in found.sessions}


@pytest.mark.asyncio
async def test_a_person_sees_their_own_and_shared_sessions_and_an_admin_all(store: Store) -> None:
    assert await listed(store, ALICE) == ({"a1", "a2"}, {"a1", "a2"})
    assert await listed(store, BOB) == ({"b1"}, {"b1"})
    assert await listed(store, ADMIN) == ({"a1", "a2", "b1", "old"},) * 2
    assert (await store.history(viewer=BOB)).total == 1  # the count is filtered too (the pages)
    await share(store, "a1", "group", "dev")
    await share(store, "a2", "person", "bob")
    await share(store, "b1", "link", "t0ken")
    assert await listed(store, BOB) == ({"a1", "a2", "b1"},) * 2
    assert await listed(store, ALICE) == ({"a1", "a2"},) * 2  # a link lists nothing
    assert not await store.visible("b1", ALICE) and await store.visible("b1", ALICE, link="t0ken")
    assert not await store.visible("b1", ALICE, link="wrong") and await store.visible("old", ADMIN)
    assert not await store.visible("old", ALICE) and not await store.visible("nosuch", ALICE)
    row = await store.session_row("a1")
    assert row is not None and row.owner == "alice"
