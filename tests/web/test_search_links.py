"""A search's hit links to the entry it was said in (``/sessions/ID?at=N#entry-N``), and following it opens the
session's page on the window around that entry, however far back: for a session live in the server, and for one
rebuilt from its journal after a restart.

In process: the app through Starlette's TestClient (the store on), the page's socket through ``websocket_connect``.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from bs4 import BeautifulSoup

from tests.support.live import AppFactory, InProcess
from tests.support.urls import URLS
from webclient.session.agent_entry import AgentEntry
from webclient.session.agent_spec import AgentSpec
from webclient.session.core import Session
from webclient.session.shown import Shown
from webclient.store.store import Store
from webclient.viewmodel.content import TextBlock
from webclient.viewmodel.entries import MessageEntry
from webclient.viewmodel.thread import Thread
from webclient.web.live.live_view import LiveView


def hit_links(app: InProcess, query: str) -> dict[str, list[tuple[str, str]]]:
    """The index's search for ``query``: each session's hits, as (link, line shown)."""
    response = app.client.get(URLS.for_("index", q=query))
    assert response.status_code == 200, response.text[:500]
    page = BeautifulSoup(response.text, "html.parser")
    return {
        str(row["data-session-id"]): [
            (str(link["href"]), link.get_text()) for link in row.select('[data-role="matches"] a[data-role="match"]')
        ]
        for row in page.select("[data-session-id]")
    }


def followed(app: InProcess, link: str) -> BeautifulSoup:
    """The page a hit's link opens (its fragment stays in the browser)."""
    response = app.client.get(link.split("#", 1)[0])
    assert response.status_code == 200, response.text[:500]
    return BeautifulSoup(response.text, "html.parser")


def add_notices(app: InProcess, session: Session, count: int) -> None:
    """``count`` entries after the turn, added on the app's own event loop (as the agent's adapter adds them)."""

    def add() -> None:
        for number in range(count):
            session.thread.add_notice("info", f"later notice {number}")

    app.client.portal.call(add)  # type: ignore[union-attr]


def test_a_hit_in_a_live_session_links_to_its_entry_and_the_link_opens_the_page_on_it(start_app: AppFactory) -> None:
    app = start_app()
    path = app.new_session()
    with app.live(path) as page:
        page.until('data-agent-state="ready"')
        page.prompt("stream 5")
        page.until('data-turn-state="idle"')
        page.prompt("hello")
        page.until('data-turn-state="idle"')
    session = app.client.app.state.sessions.get(path.rsplit("/", 1)[1])  # type: ignore[attr-defined]
    answer = next(e for e in session.thread if isinstance(e, MessageEntry) and "w4" in e.text)
    add_notices(app, session, 2 * LiveView.WINDOW)  # the answer is far above the page's newest entries

    (hits,) = hit_links(app, "w4").values()
    assert hits == [(f"{path}?at={answer.seq}#entry-{answer.seq}", "w0 w1 w2 w3 w4")]
    opened = followed(app, hits[0][0])
    entry = opened.select_one(f"#entry-{answer.seq}")
    assert entry is not None and "w4" in entry.get_text()
    last = session.thread.last
    assert last is not None and opened.select_one(f"#entry-{last.seq}") is None  # the window around it, not the end
    assert opened.select_one('[data-action="show-later"]') is not None

    # The prompt of the turn is an entry of its own, and its hit links to it; hits show in the order they were said.
    (both,) = hit_links(app, "stream w4").values()
    prompt = f"{path}?at={answer.seq - 1}#entry-{answer.seq - 1}"
    assert both == [(prompt, "stream 5"), (f"{path}?at={answer.seq}#entry-{answer.seq}", "w0 w1 w2 w3 w4")]


SPEC = AgentSpec(AgentEntry("stored", ["stored-agent"]), Path("/srv/project"))


def fill(folder: Path, turns: int) -> dict[int, int]:
    """A stored session ``long`` of ``turns`` turns recorded as a live one records them (`Shown`): each a prompt that
    says ``markerNNNN``, then a notice (so entries are not numbered as turns); each turn's prompt's entry number."""

    async def go() -> dict[int, int]:
        store = await Store.open_url(f"sqlite:///{folder / 'webclient.sqlite3'}")
        try:
            recorder = store.open_journal("long", "stored", SPEC, 1_700_000_000.0)
            shown = Shown(Thread(), recorder)
            prompts = {}
            for turn in range(turns):
                shown.turn_started([TextBlock(f"prompt number {turn}: marker{turn:04}")])
                prompts[turn] = len(shown.thread)
                shown.notice("info", f"a notice in turn {turn}")
                shown.turn_ended(stopped=False)
            recorder.state("idle", "A long session", "Stored", turns)
            return prompts
        finally:
            await store.close()

    return asyncio.run(go())


def test_a_hit_in_a_session_rebuilt_from_its_journal_opens_the_page_on_its_entry(
    start_app: AppFactory, tmp_path: Path
) -> None:
    folder = tmp_path / "data"
    folder.mkdir()
    prompts = fill(folder, 300)
    app = start_app(WEBCLIENT_DATA_DIR=str(folder))  # a server started on the store: the session is not live in it
    assert "long" not in app.client.app.state.sessions.sessions  # type: ignore[attr-defined]

    seq = prompts[17]
    assert seq == 1 + 17 * 2
    assert hit_links(app, "marker0017") == {
        "long": [(f"/sessions/long?at={seq}#entry-{seq}", "prompt number 17: marker0017")]
    }
    opened = followed(app, f"/sessions/long?at={seq}")  # rebuilds the session from its journal
    entry = opened.select_one(f"#entry-{seq}")
    assert entry is not None and "marker0017" in entry.get_text()
    assert opened.select_one(f"#entry-{prompts[299]}") is None
    # Rebuilt, the session is live in the server now: its hits still lead to their entries.
    assert hit_links(app, "marker0018")["long"][0][0] == f"/sessions/long?at={seq + 2}#entry-{seq + 2}"
    entry = followed(app, f"/sessions/long?at={seq + 2}").select_one(f"#entry-{seq + 2}")
    assert entry is not None and "marker0018" in entry.get_text()
