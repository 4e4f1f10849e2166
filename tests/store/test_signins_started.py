"""OpenID sign-ins under way, kept in the store (`webclient.web.access.started_signins`), on SQLite and PostgreSQL:
taken once, by whichever instance asks first; expired or past the bound, gone."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from webclient.store import signins_started as stored
from webclient.store.store import Store
from webclient.web.access.oidc import Pending, binding_digest
from webclient.web.access.started_signins import InStore

PENDING = Pending("verifier-" + "v" * 70, "nonce", "https://proxy.example/signin/oidc/callback", "/?page=2", "b" * 64)


@pytest.mark.asyncio
async def test_a_started_sign_in_is_taken_once_by_whichever_instance_asks_first(store: Store) -> None:
    first, second = InStore(store.engine), InStore(store.engine)  # two instances, one store
    await first.keep("state-1", PENDING)
    taken = await asyncio.gather(first.take("state-1"), second.take("state-1"))
    assert sorted(taken, key=lambda p: p is None) == [PENDING, None]
    assert await second.take("state-1") is None and await second.take("no-such-state") is None


@pytest.mark.asyncio
async def test_an_expired_sign_in_cannot_be_finished_and_is_forgotten_with_the_oldest_past_the_bound(
    store: Store,
) -> None:
    now = datetime.now(UTC)
    values = {"binding": binding_digest("x"), "verifier": "v", "nonce": "n", "redirect_uri": "r", "next_path": "/"}
    await stored.keep(store.engine, {"state": "old", **values, "expires": now - timedelta(seconds=1)}, now, 10)
    assert await stored.take(store.engine, "old", now) is None
    for n in range(5):
        later = {"state": f"s{n}", **values, "expires": now + timedelta(seconds=n + 1)}
        await stored.keep(store.engine, later, now, 3)
    kept = [n for n in range(5) if await stored.take(store.engine, f"s{n}", now) is not None]
    assert kept == [2, 3, 4]  # the three that expire last; the expired one went at the first keep after it
