"""A session page's socket starts from what the page holds (`webclient.web.live.page_holds`): its first frame is only
what changed since the page was rendered; a page whose stamp is unknown gets the whole window (the resync).

In process: the app through Starlette's TestClient, the page's socket through ``websocket_connect``."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator

import pytest

from tests.support import live
from tests.support.live import AppFactory, InProcess, LiveSocket
from webclient.session.core import Session
from webclient.viewmodel.content import TextBlock


class PageSocket(LiveSocket):
    """A page's socket whose first frame is not read on connect (a page with a stamp may get none)."""

    def __init__(self, socket: live.TestSocket) -> None:
        self.socket = socket
        self.unread = []
        self.nonce = ""


def socket_path(page: str) -> str:
    """The socket's path and query as the page names it (its ``ws-connect``)."""
    found = re.search(r'ws-connect="ws://[^/"]+([^"]+)"', page)
    assert found is not None, page[:500]
    return html.unescape(found.group(1))


def session_of(app: InProcess, path: str) -> Session:
    session = app.client.app.state.sessions.get(path.rsplit("/", 1)[1])  # type: ignore[attr-defined]
    assert session is not None
    return session


def add_notices(app: InProcess, session: Session, count: int, prefix: str = "notice") -> None:
    """``count`` entries added to the thread on the app's own event loop (as the agent's adapter adds them)."""

    def add() -> None:
        for number in range(count):
            session.thread.add_notice("info", f"{prefix} {number}")

    app.client.portal.call(add)  # type: ignore[union-attr]


@pytest.fixture
def app(start_app: AppFactory) -> Iterator[InProcess]:
    yield start_app()


def ready_session(app: InProcess) -> str:
    """A new session whose agent is ready and whose thread has a turn."""
    path = app.new_session()
    with app.live(path) as page:
        page.until('data-agent-state="ready"')
        page.prompt("hello")
        page.until('data-turn-state="idle"')
    return path


def test_the_first_frame_after_a_page_load_carries_only_what_changed_since(app: InProcess) -> None:
    path = ready_session(app)
    session = session_of(app, path)
    page = app.client.get(path).text
    assert 'id="entry-1"' in page and "page=" in socket_path(page)
    add_notices(app, session, 2, prefix="since the render")
    with app.client.websocket_connect(socket_path(page)) as connected:
        first = PageSocket(connected).frame()
    assert "since the render 0" in first and "since the render 1" in first
    assert 'id="entry-1"' not in first and 'id="thread"' not in first  # nothing the page holds, no resync
    assert len(first) < 3000, len(first)


def test_a_page_whose_stamp_is_unknown_or_used_gets_the_whole_window(app: InProcess) -> None:
    path = ready_session(app)
    page = app.client.get(path).text
    with app.client.websocket_connect(socket_path(page)):
        pass  # the stamp is taken by its first socket: a reconnect may have missed frames
    for url in (socket_path(page), socket_path(page).replace("page=", "page=unknown")):
        with app.client.websocket_connect(url) as connected:
            resync = PageSocket(connected).frame()
        assert 'id="thread"' in resync and 'id="entry-1"' in resync


def test_a_message_growing_after_the_render_sends_what_it_gained(app: InProcess) -> None:
    path = ready_session(app)
    session = session_of(app, path)
    page = app.client.get(path).text
    with app.client.websocket_connect(socket_path(page)) as connected:
        socket = PageSocket(connected)
        socket.prompt("stream 3")
        frames = ""
        while "w2" not in frames or 'data-turn-state="idle"' not in frames:
            frames += socket.frame()
    assert 'id="entry-1"' not in frames and 'id="thread"' not in frames
    assert len(session.thread) > 2


def add_long_message(app: InProcess, session: Session, paragraphs: int) -> int:
    """A finished agent message of ``paragraphs`` numbered paragraphs (about 100 characters each); its seq."""

    def add() -> int:
        text = "\n\n".join(f"Paragraph {number:05d} " + "lorem ipsum " * 7 for number in range(paragraphs))
        session.thread.append_message("agent-message", TextBlock(text))
        session.thread.end_turn()
        last = session.thread.last
        assert last is not None
        return last.seq

    seq: int = app.client.portal.call(add)  # type: ignore[union-attr]
    return seq


def test_a_long_message_shows_its_end_and_its_earlier_part_on_request(app: InProcess) -> None:
    path = ready_session(app)
    session = session_of(app, path)
    seq = add_long_message(app, session, 2500)  # 250 kB
    page = app.client.get(path).text
    assert "Paragraph 02499" in page and "Paragraph 00000" not in page and "Paragraph 01000" not in page
    assert len(page) < 200_000, len(page)
    control = re.search(r'data-action="message-earlier" ws-send hx-vals="([^"]+)"', page)
    assert control is not None and "Show the earlier part" in page
    asked = json.loads(html.unescape(control.group(1)))
    assert asked["action"] == "message_earlier" and asked["seq"] == seq
    with app.client.websocket_connect(socket_path(page)) as connected:
        socket = PageSocket(connected)
        socket.send("message_earlier", seq=seq, before=asked["before"])
        part = socket.until(f'id="entry-{seq}-md-cut-{asked["before"]}" hx-swap-oob="outerHTML"')
        assert "Paragraph 01000" in part and "Paragraph 00000" not in part
        before = re.search(r'"before": (\d+)', part)
        assert before is not None and int(before.group(1)) < asked["before"]
        socket.send("message_earlier", seq=seq, before=int(before.group(1)))
        start = socket.until("Paragraph 0")
    assert "Paragraph 00000" in start and "Show the earlier part" not in start


def test_the_earlier_part_is_sent_only_of_a_long_message_the_page_holds(app: InProcess) -> None:
    path = ready_session(app)
    session = session_of(app, path)
    seq = add_long_message(app, session, 2500)
    add_notices(app, session, 40)  # the message is out of the page's window
    page = app.client.get(path).text
    assert f'id="entry-{seq}"' not in page
    with app.client.websocket_connect(socket_path(page)) as connected:
        socket = PageSocket(connected)
        socket.send("message_earlier", seq=seq, before=100_000)
        socket.send("message_earlier", seq=1, before=3)  # the prompt: not a long message
        socket.prompt("after")  # a frame that would carry an answer to either
        frames = socket.until("after")
    assert "Paragraph" not in frames and "cut-" not in frames


def test_a_page_holds_about_the_last_turns_and_loads_earlier_ones_as_asked(app: InProcess) -> None:
    path = ready_session(app)
    session = session_of(app, path)
    add_notices(app, session, 100)
    last = session.thread.last
    assert last is not None
    page = app.client.get(path).text
    assert page.count('data-role="notice"') == 30 and f'id="entry-{last.seq}"' in page
    first = last.seq - 29
    assert f'id="entry-{first - 1}"' not in page and f'"before": {first}' in page  # the "Show earlier" sentinel
    with app.client.websocket_connect(socket_path(page)) as connected:
        socket = PageSocket(connected)
        socket.send("earlier", before=first)
        earlier = socket.until("afterend:#thread-start")
    assert earlier.count('data-role="notice"') == 30 and f'id="entry-{first - 30}"' in earlier
    assert f'"before": {first - 30}' in earlier


def test_a_link_to_an_old_entry_opens_the_page_around_it(app: InProcess) -> None:
    path = ready_session(app)
    session = session_of(app, path)
    add_notices(app, session, 100)
    last = session.thread.last
    assert last is not None
    page = app.client.get(path, params={"at": 40}).text
    assert 'id="entry-40"' in page and 'id="entry-30"' in page and f'id="entry-{last.seq}"' not in page
    assert 'data-action="show-earlier"' in page and '"before": 30' in page
    assert 'data-action="show-later"' in page and '"after": 59' in page
    with app.client.websocket_connect(socket_path(page)) as connected:
        socket = PageSocket(connected)
        add_notices(app, session, 1, prefix="newest")  # not appended below entry 59: the page lacks those between
        socket.send("later", after=59)
        later = socket.until("beforebegin:#thread-end")
        assert 'id="entry-60"' in later and 'id="entry-89"' in later and 'id="entry-90"' not in later
        assert '"after": 89' in later and "newest 0" not in later
        socket.send("later", after=89)
        end = socket.until("beforebegin:#thread-end")
        assert f'id="entry-{last.seq}"' in end and "newest 0" in end and 'data-action="show-later"' not in end
        add_notices(app, session, 1, prefix="appended")  # the page holds the end again: new entries are appended
        assert "beforeend:#thread" in socket.until("appended 0")


def test_a_link_to_a_dropped_or_recent_entry_opens_the_page_at_its_nearest(app: InProcess) -> None:
    path = ready_session(app)
    session = session_of(app, path)
    add_notices(app, session, 50)
    newest = app.client.get(path).text
    assert app.client.get(path, params={"at": 50}).text.count('data-role="notice"') == 30  # in the newest window
    assert 'data-action="show-later"' not in newest
    oldest = app.client.get(path, params={"at": 0}).text  # not a seq: the newest window
    assert 'data-action="show-later"' not in oldest
    first = app.client.get(path, params={"at": 1}).text
    assert 'id="entry-1"' in first and 'data-action="show-earlier"' not in first


def test_a_page_of_long_answers_holds_fewer_entries_and_stays_small(app: InProcess) -> None:
    path = ready_session(app)
    session = session_of(app, path)
    seqs = [add_long_message(app, session, 2500) for _ in range(5)]  # 250 kB each, shown by their last 100 kB
    page = app.client.get(path).text
    assert [f'id="entry-{seq}"' in page for seq in seqs] == [False, False, False, True, True]
    assert f'"before": {seqs[3]}' in page and len(page) < 300_000, len(page)
    with app.client.websocket_connect(socket_path(page)) as connected:
        socket = PageSocket(connected)
        socket.send("earlier", before=seqs[3])
        earlier = socket.until("afterend:#thread-start")
    assert f'id="entry-{seqs[2]}"' in earlier and f'id="entry-{seqs[0]}"' not in earlier and len(earlier) < 300_000


def test_a_page_too_far_behind_or_let_go_of_gets_the_resync(app: InProcess) -> None:
    path = ready_session(app)
    session = session_of(app, path)
    behind = app.client.get(path).text
    add_notices(app, session, 1001)  # more changes than a record notes: it keeps none
    with app.client.websocket_connect(socket_path(behind)) as connected:
        assert 'id="thread"' in PageSocket(connected).frame()
    stamps = app.client.app.state.page_stamps  # type: ignore[attr-defined]
    oldest = app.client.get(path).text
    for _ in range(stamps.MAX):  # pages that never connect: the oldest record goes past the bound
        app.client.get(path)
    assert len(stamps) == stamps.MAX
    with app.client.websocket_connect(socket_path(oldest)) as connected:
        assert 'id="thread"' in PageSocket(connected).frame()
