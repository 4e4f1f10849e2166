"""What a test needs to see the environment a person's agent started with (``tests/agents/env_agent.py``)."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import httpx

from tests.support.servers import AGENTS
from tests.support.urls import URLS
from tests.support.waiting import records

ENV_AGENT = f"{sys.executable} {AGENTS / 'env_agent.py'}"
"""The scripted agent, reporting its environment to the file ``$ENV_REPORT`` names first."""


def started_with(report: Path, count: int, timeout: float = 15) -> list[dict[str, Any]]:
    """The environments of the first ``count`` agents started, as they reported them."""
    deadline = time.monotonic() + timeout
    while True:
        reported = records(report)
        if len(reported) >= count:
            return reported
        assert time.monotonic() < deadline, f"{len(reported)} of {count} agents reported their environment"
        time.sleep(0.1)


def new_session(client: httpx.Client) -> str:
    """Start a session of the server's agent as the person ``client`` is; its id."""
    response = client.post(URLS.for_("new_session"))
    assert response.status_code == 303, response.text
    return str(response.headers["location"]).rsplit("/", 1)[1]
