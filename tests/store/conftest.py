"""Both databases the store runs on: SQLite in a tmp folder, and a throw-away PostgreSQL cluster (the ``postgresql``
fixture of tests/conftest.py, started once per test process). Each test gets a database of its own, so migrations
meet an empty one.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from tests.support.postgres import Cluster
from webclient.store.store import Store


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A URL as a user gives it (``WEBCLIENT_DATABASE_URL``) of an empty database of each kind."""
    if request.param == "sqlite":
        return f"sqlite+aiosqlite:///{tmp_path / 'store.sqlite3'}"
    cluster: Cluster = request.getfixturevalue("postgresql")
    return cluster.new_database()


@pytest_asyncio.fixture
async def store(database_url: str) -> AsyncIterator[Store]:
    """The store on each database, opened (migrated) and closed after the test."""
    opened = await Store.open_url(database_url)
    try:
        yield opened
    finally:
        await opened.close()
