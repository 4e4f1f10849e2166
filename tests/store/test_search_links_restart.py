"""A search's hit links to its entry (``?at=N#entry-N``) before and after a restart: the rebuild from the journal
numbers the thread's entries (the demo agent's messages, cards, plan) as the live session did when the turn ended."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import httpx
import pytest
from bs4 import BeautifulSoup

from tests.support.restarts import drive, stop
from tests.support.servers import Server, ServerFactory
from tests.support.urls import URLS


def hits_and_entries(server: Server, query: str) -> list[tuple[str, str]]:
    """Each hit of the search for ``query``: its link, and the text of the entry the page it opens holds under the
    link's fragment ("" when it holds none)."""
    with httpx.Client(base_url=server.url, headers=server.headers, timeout=60) as http:
        index = BeautifulSoup(http.get(URLS.for_("index", q=query)).text, "html.parser")
        found = []
        for link in index.select('[data-role="matches"] a[data-role="match"]'):
            href = str(link["href"])
            path, _, fragment = href.partition("#")
            page = BeautifulSoup(http.get(path).text, "html.parser")
            entry = page.find(id=fragment) if fragment else None
            found.append((href, entry.get_text(" ") if entry is not None else ""))
    return found


@pytest.mark.process
def test_a_hit_leads_to_its_entry_in_the_live_session_and_in_the_one_rebuilt_after_a_restart(
    start_server: ServerFactory, tmp_path: Path
) -> None:
    env = {"WEBCLIENT_DATA_DIR": str(tmp_path / "data")}
    first = start_server(agent=None, **env)
    session_id = asyncio.run(drive(first, ["markdown", "tour", "plan", "markdown"]))
    live = hits_and_entries(first, "showcase")
    assert len(live) >= 2  # the answer of the first turn and of the last
    for href, text in live:
        assert href.startswith(f"/sessions/{session_id}?at=") and "#entry-" in href
        assert "showcase" in text.lower(), (href, text[:200])
    stop(first, signal.SIGTERM)

    second = start_server(agent=None, **env)
    assert hits_and_entries(second, "showcase") == live  # rebuilt from the journal: the same entries, the same text
