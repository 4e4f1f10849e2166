"""People and their signed-in sessions on both databases (`webclient.store.people`, through `web.signins.SignIns`):
kept up to date, looked up by cookie, used, ended, expired, and token mode's mark."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from webclient.people.person import LOCAL, Person
from webclient.store import people as stored
from webclient.store.store import Store
from webclient.web.access.signins import SignIns, signin_id

ALICE = Person(id="alice", name="Alice", email="alice@example.com", groups=frozenset({"admins", "dev"}), admin=True)


@pytest.mark.asyncio
async def test_a_sign_in_names_its_person_until_it_ends_and_the_person_is_kept_as_said_last(store: Store) -> None:
    signins = SignIns(store.engine, days=1, recheck=0)  # as if another server shared the store
    cookie = await signins.start(ALICE, "oidc", "Firefox")
    fresh = SignIns(store.engine, days=1)  # nothing in memory: read from the store
    found = await fresh.person(cookie)
    assert found is not None and found[0] == ALICE and found[1] == signin_id(cookie)
    assert await fresh.person(cookie + "x") is None
    renamed = Person(id="alice", name="Alice A.", groups=frozenset({"dev"}))
    await signins.start(renamed, "oidc", "")
    [row] = await stored.everyone(store.engine, datetime.now(UTC))
    assert row.person == renamed and len(row.signins) == 2
    assert {s.user_agent for s in row.signins} == {"Firefox", None}
    assert await fresh.end(signin_id(cookie))
    assert await fresh.person(cookie) is None and await signins.person(cookie) is None
    assert not await fresh.end(signin_id(cookie))  # already gone


@pytest.mark.asyncio
async def test_an_expired_sign_in_names_nobody_and_a_used_one_lasts_from_its_use(store: Store) -> None:
    signins = SignIns(store.engine, days=1)
    cookie = await signins.start(ALICE, "oidc", "")
    key = signin_id(cookie)
    now = datetime.now(UTC)
    await stored.used(store.engine, key, ALICE.id, now - timedelta(days=2), now - timedelta(seconds=1))
    assert await SignIns(store.engine, days=1).person(cookie) is None
    assert await stored.everyone(store.engine, now) == [] or not (await stored.everyone(store.engine, now))[0].signins
    other = await signins.start(ALICE, "oidc", "")  # and the expired row is swept at the next sign-in
    rows = (await stored.everyone(store.engine, now))[0].signins
    assert [s.id for s in rows] == [signin_id(other)]


@pytest.mark.asyncio
async def test_a_new_token_ends_the_sign_ins_of_the_old_one_and_its_mark_is_no_sign_in(store: Store) -> None:
    old = SignIns(store.engine, days=1, key=b"old token's key")
    await old.for_token()
    cookie = await old.start(LOCAL, "token", "")
    again = SignIns(store.engine, days=1, key=b"old token's key")
    await again.for_token()  # the same token: nothing ends
    assert await again.person(cookie) is not None
    new = SignIns(store.engine, days=1, key=b"new token's key")
    await new.for_token()
    [row] = await stored.everyone(store.engine, datetime.now(UTC))
    assert row.person.id == LOCAL.id and row.signins == ()  # the mark is not listed
    assert await SignIns(store.engine, days=1, key=b"old token's key").person(cookie) is None
