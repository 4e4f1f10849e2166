"""Both databases the store runs on: SQLite in a tmp folder, and a throw-away PostgreSQL cluster (the ``postgresql``
fixture of tests/conftest.py, started once per test process). Each test gets a database of its own, so migrations
meet an empty one.
"""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from tests.support.postgres import Cluster
from tests.support.servers import migrated_store
from webclient.store.store import Store


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A URL as a user gives it (``WEBCLIENT_DATABASE_URL``) of an empty database of each kind; for a test of the
    opened `store`, which would migrate it first thing, or one marked ``migrated``, a copy of one already migrated
    (the same tables, without a second of Alembic per test)."""
    migrated = "store" in request.fixturenames or request.node.get_closest_marker("migrated") is not None
    if request.param == "sqlite":
        if migrated:
            shutil.copyfile(migrated_store(tmp_path / "migrated") / "webclient.sqlite3", tmp_path / "store.sqlite3")
        return f"sqlite+aiosqlite:///{tmp_path / 'store.sqlite3'}"
    cluster: Cluster = request.getfixturevalue("postgresql")
    return cluster.migrated_database() if migrated else cluster.new_database()


@pytest_asyncio.fixture
async def store(database_url: str) -> AsyncIterator[Store]:
    """The store on each database, opened (migrated) and closed after the test."""
    opened = await Store.open_url(database_url)
    try:
        yield opened
    finally:
        await opened.close()
