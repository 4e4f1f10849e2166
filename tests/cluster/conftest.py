"""One PostgreSQL cluster per test process for the instances that share it (`tests.support.postgres`)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.postgres import Cluster, running_cluster


@pytest.fixture(scope="session")
def postgresql() -> Iterator[Cluster]:
    with running_cluster("webclient-cluster-pg-") as cluster:
        yield cluster
