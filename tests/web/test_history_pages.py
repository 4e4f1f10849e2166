"""The index lists the store's sessions newest first a page at a time, finds them by the words of their transcripts,
archives and deletes them; against a real server whose store a fixture filled before it started."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest
from bs4 import BeautifulSoup, Tag

from tests.support.servers import Server, ServerFactory
from tests.support.urls import URLS
from webclient.session.agent_entry import AgentEntry
from webclient.session.agent_spec import AgentSpec
from webclient.store.store import Store

T0 = 1_700_000_000.0
SPEC = AgentSpec(AgentEntry("agent", ["stored-agent", "--acp"]), Path("/srv/stored project"))
HOSTILE = '<script>alert("title")</script> & <b>bold</b>'
WORDS = {
    "s05": [("user", "Why is the widget factory slow?"), ("agent", "Found it.\nThe factory makes every widget twice.")],
    "s07": [("user", "Rename the widget module"), ("agent", "Done.")],
    "s03": [("agent", "A <b>widget</b> & a factory, in markup")],
}


def fill(folder: Path) -> None:
    """30 stored sessions, s00 (oldest) to s29 (newest): odd ones ended, s03 titled by a hostile agent, s04 untitled;
    three said something about widgets."""

    async def go() -> None:
        store = await Store.open_url(f"sqlite:///{folder / 'webclient.sqlite3'}")
        try:
            for n in range(30):
                session_id = f"s{n:02}"
                recorder = store.open_journal(session_id, "stored", SPEC, T0 + 60 * n)
                title = HOSTILE if n == 3 else None if n == 4 else f"Session number {n}"
                recorder.state("ended" if n % 2 else "idle", title, "Stored Agent", n)
                for role, text in WORDS.get(session_id, []):
                    recorder.words(role, text)
        finally:
            await store.close()

    asyncio.run(go())


@pytest.fixture
def server(start_server: ServerFactory, tmp_path: Path) -> Server:
    folder = tmp_path / "data"
    folder.mkdir()
    fill(folder)
    return start_server(WEBCLIENT_DATA_DIR=str(folder))


def csrf_of(page: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', page)
    assert found is not None
    return found.group(1)


def soup(server: Server, url: str = "/", **headers: str) -> BeautifulSoup:
    response = server.http().get(url, headers=headers)
    assert response.status_code == 200, response.text
    return BeautifulSoup(response.text, "html.parser")


def rows(page: BeautifulSoup) -> list[Tag]:
    return page.select("[data-session-id]")


def ids(page: BeautifulSoup) -> list[str]:
    return [str(row["data-session-id"]) for row in rows(page)]


def test_the_index_lists_stored_sessions_newest_first_a_page_at_a_time(server: Server) -> None:
    first = soup(server)
    assert ids(first) == [f"s{n:02}" for n in range(29, 4, -1)]
    row = rows(first)[0]
    assert row.select_one(".history-title").get_text() == "Session number 29"  # type: ignore[union-attr]
    assert row.select_one(".history-title")["href"] == URLS.for_("session", session_id="s29")  # type: ignore[index]
    assert row.select_one('[data-role="state"]').get_text() == "Ended"  # type: ignore[union-attr]
    assert row.select_one('[data-role="turns"]').get_text() == "29 turns"  # type: ignore[union-attr]
    assert row.select_one('[data-role="workspace"]').get_text() == "/srv/stored project"  # type: ignore[union-attr]
    assert "stored" in row.select_one('[data-role="agent"]').get_text()  # type: ignore[union-attr]
    assert "Stored Agent" in row.select_one('[data-role="agent"]').get_text()  # type: ignore[union-attr]
    created = row.select_one('time[data-role="created"]')
    assert created is not None and created["datetime"] == "2023-11-14T22:42:20+00:00"
    # A stored session not live in this server: "ended" if it was ended, else "stopped" (the server stopped).
    assert rows(first)[1].select_one('[data-role="state"]').get_text() == "Stopped"  # type: ignore[union-attr]
    older = first.select_one('[data-role="pages"] a[rel="next"]')
    assert older is not None and older["href"] == "/?page=2"
    second = soup(server, str(older["href"]))
    assert ids(second) == ["s04", "s03", "s02", "s01", "s00"]
    assert second.select_one('[data-role="pages"] a[rel="next"]') is None
    assert ids(soup(server, "/?page=9")) == ids(second)  # past the end: the last page
    untitled, hostile = rows(second)[0], rows(second)[1]
    assert untitled.select_one(".history-title").get_text() == "Untitled"  # type: ignore[union-attr]
    assert hostile.select_one(".history-title").get_text() == HOSTILE  # type: ignore[union-attr]
    assert hostile.select("script, b") == []  # the agent's markup is text


def test_a_search_finds_the_sessions_that_said_every_word_and_marks_them_in_their_lines(server: Server) -> None:
    assert ids(soup(server, "/?q=widget")) == ["s07", "s05", "s03"]
    found = soup(server, "/?q=Widget+FACTORY")
    assert ids(found) == ["s05", "s03"]
    lines = rows(found)[0].select('[data-role="matches"] li')
    assert [line.get_text() for line in lines] == [
        "Why is the widget factory slow?",
        "The factory makes every widget twice.",
    ]
    assert [mark.get_text() for mark in lines[0].select("mark")] == ["widget", "factory"]
    hostile = rows(found)[1].select_one('[data-role="matches"] li')
    assert hostile is not None and hostile.get_text() == "A <b>widget</b> & a factory, in markup"
    assert hostile.select("b") == [] and [m.get_text() for m in hostile.select("mark")] == ["widget", "factory"]
    form = found.select_one('form[data-role="search"]')
    assert form is not None and form["method"] == "get"
    assert form.select_one('input[name="q"]')["value"] == "Widget FACTORY"  # type: ignore[index]
    assert ids(soup(server, "/?q=widget+gadget")) == []
    assert ids(soup(server, "/?q=%2C%3B+-")) == ids(soup(server))  # no word to look for: the list
    assert soup(server, "/?q=widget+gadget").select_one('[data-role="no-results"]') is not None


def test_htmx_gets_the_sessions_block_alone(server: Server) -> None:
    block = soup(server, "/?q=rename", **{"HX-Request": "true", "HX-Target": "history"})
    section = block.select_one("section#history")
    assert section is not None and block.select_one("main, form[data-role=search]") is None
    assert ids(block) == ["s07"]
    with server.http() as http:
        assert "HX-Target" in http.get("/?q=rename").headers["vary"]  # the page and the block, told apart


def test_archive_hides_a_session_until_the_archived_ones_are_shown(server: Server) -> None:
    http = server.http()
    index = http.get("/?q=widget").text
    response = http.post(
        URLS.for_("archive_session", session_id="s05"),
        data={"csrf": csrf_of(index), "archived": "1", "q": "widget", "page": "1"},
    )
    assert response.status_code == 303 and response.headers["location"] == "/?q=widget"
    assert ids(soup(server, "/?q=widget")) == ["s07", "s03"]
    assert "s05" not in ids(soup(server))
    shown = soup(server, "/?q=widget&archived=1")
    assert ids(shown) == ["s07", "s05", "s03"]
    assert rows(shown)[1].select_one('[data-role="archived"]') is not None
    assert rows(shown)[1].select_one('[data-action="unarchive"]') is not None
    http.post(URLS.for_("archive_session", session_id="s05"), data={"csrf": csrf_of(index), "archived": "0"})
    assert ids(soup(server, "/?q=widget")) == ["s07", "s05", "s03"]
    assert (
        http.post(
            URLS.for_("archive_session", session_id="nope"), data={"csrf": csrf_of(index), "archived": "1"}
        ).status_code
        == 404
    )


def test_delete_asks_first_then_the_session_and_its_words_are_gone(server: Server) -> None:
    http = server.http()
    link = rows(soup(server, "/?q=widget"))[0].select_one('[data-action="delete"]')
    assert link is not None
    confirm = soup(server, str(link["href"]))
    assert confirm.select_one("[data-session-id]")["data-session-id"] == "s07"  # type: ignore[index]
    assert ids(soup(server, "/?q=widget")) == ["s07", "s05", "s03"]  # asking deleted nothing
    form = confirm.select_one("form")
    assert form is not None
    data = {str(i["name"]): str(i.get("value", "")) for i in form.select("input")}
    response = http.post(str(form["action"]), data=data)
    assert response.status_code == 303 and response.headers["location"] == "/?q=widget"
    assert ids(soup(server, "/?q=widget")) == ["s05", "s03"]
    assert "s07" not in ids(soup(server, "/?page=1"))
    assert (
        http.post(URLS.for_("delete_session", session_id="s07"), data=data).status_code == 303
    )  # sent again: still gone


def test_deleting_a_live_session_stops_it_and_forgets_it(server: Server) -> None:
    http = server.http()
    response = http.post(URLS.for_("new_session"), data={"csrf": csrf_of(http.get("/").text)})
    session_id = response.headers["location"].rsplit("/", 1)[1]
    assert ids(soup(server))[0] == session_id  # the newest
    assert http.get(URLS.for_("session", session_id=session_id)).status_code == 200
    assert (
        http.post(
            URLS.for_("delete_session", session_id=session_id), data={"csrf": csrf_of(http.get("/").text)}
        ).status_code
        == 303
    )
    assert session_id not in ids(soup(server))
    assert http.get(URLS.for_("session", session_id=session_id)).status_code == 404


def test_without_a_store_the_index_lists_the_live_sessions(start_server: ServerFactory) -> None:
    server = start_server(WEBCLIENT_STORE="off")
    http = server.http()
    session_id = http.post(URLS.for_("new_session")).headers["location"].rsplit("/", 1)[1]
    index = soup(server)
    assert ids(index) == [session_id]
    assert index.select_one('form[data-role="search"]') is None
    assert index.select_one('[data-action="archive"]') is None
    assert http.post(URLS.for_("archive_session", session_id=session_id), data={"archived": "1"}).status_code == 404
