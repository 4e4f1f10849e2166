"""A real server keeps the words of what was said, on both databases: a search finds a session by its prompt after
a restart, once (rebuilding the session does not record its words again), and deleting it from the index takes it
out of the store."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

from bs4 import BeautifulSoup

from tests.support.restarts import drive, stop, store_env
from tests.support.servers import Server, ServerFactory
from tests.support.urls import URLS


def found(server: Server, query: str) -> dict[str, list[str]]:
    """The index's search results: each session's id with its matching lines."""
    with server.http() as http:
        page = BeautifulSoup(http.get("/", params={"q": query}).text, "html.parser")
    return {
        str(row["data-session-id"]): [line.get_text() for line in row.select('[data-role="matches"] li')]
        for row in page.select("[data-session-id]")
    }


def test_a_search_finds_a_session_by_its_prompt_after_a_restart_and_only_once(
    start_server: ServerFactory, database_url: str, tmp_path: Path
) -> None:
    env = store_env(database_url, tmp_path)
    server = start_server(**env)
    session_id = asyncio.run(drive(server, ["where is the marmalade kept?", "and the toast"]))
    other = asyncio.run(drive(server, ["nothing about breakfast"]))
    assert found(server, "marmalade") == {session_id: ["where is the marmalade kept?"]}
    stop(server, signal.SIGTERM)

    again = start_server(**env)
    assert found(again, "marmalade") == {session_id: ["where is the marmalade kept?"]}
    assert found(again, "toast marmalade") == {session_id: ["where is the marmalade kept?", "and the toast"]}
    with again.http() as http:
        assert http.get(URLS.for_("session", session_id=session_id)).status_code == 200  # rebuilt from its journal
    assert found(again, "marmalade") == {session_id: ["where is the marmalade kept?"]}  # its words not kept twice
    assert set(found(again, "ok")) == {session_id, other}  # what the agent said: "ok"

    with again.http() as http:
        assert http.post(URLS.for_("delete_session", session_id=session_id)).status_code == 303
        assert http.get(URLS.for_("session", session_id=session_id)).status_code == 404
    assert found(again, "marmalade") == {}
    assert set(found(again, "ok")) == {other}
