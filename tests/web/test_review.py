"""Keep and Undo on the hunks of Changes, through the app in this process and its page socket: an agent edits a file
in two places; the person undoes one hunk and keeps the other; a file changed meanwhile is refused, and so is a path
that is not a change of the session; the agent is told what was undone with the next prompt; a restart rebuilds it."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx
from bs4 import BeautifulSoup

from tests.support.live import AppFactory, InProcess
from tests.support.people import TEAM, as_person
from tests.support.restarts import until
from tests.support.servers import AGENTS, ServerFactory
from tests.support.team import new_session, page_socket, prompt, ready
from tests.support.urls import URLS
from webclient.config import Settings
from webclient.render.dom import review_reply_id
from webclient.web.app import create_app

REVIEW_AGENT = f"{sys.executable} {AGENTS / 'review_agent.py'}"
ORIGINAL = "".join(f"line {n}\n" for n in range(1, 21))
"""Twenty lines: the agent's two edits (the 2nd and the 19th line) are two hunks, far apart."""


def edited(lines: set[int]) -> str:
    return "".join(f"line {n}{' (edited)' if n in lines else ''}\n" for n in range(1, 21))


def wait_for(check: Callable[[], bool], seconds: float = 15) -> None:
    """Until ``check`` holds. One that fails an assertion counts as not yet: a file the agent has just written is on
    disk a moment before the session has it among its changes (its panel is a 404 until then)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            if check():
                return
            failed: AssertionError | None = None
        except AssertionError as error:
            failed = error
        if time.monotonic() >= deadline:
            raise AssertionError("not reached in time") from failed
        time.sleep(0.05)


def panel(app: InProcess, session_id: str, path: str = "notes.txt", since: str | None = None) -> str:
    url = URLS.for_("change_diff", session_id=session_id, path=path, since=since)
    response = app.client.get(url, headers={"hx-request": "true"})
    assert response.status_code == 200, response.text[:300]
    return response.text


def hunks(html: str) -> list[tuple[str, str]]:
    """(header, digest) of each hunk's Keep button on the panel."""
    buttons = BeautifulSoup(html, "html.parser").select('[data-action="review-keep"][data-scope="hunk"]')
    values = [json.loads(str(button["hx-vals"])) for button in buttons]
    return [(value["hunk"], value["digest"]) for value in values]


def test_undo_one_hunk_keep_the_other_and_the_agent_is_told(start_app: AppFactory) -> None:
    app = start_app(REVIEW_AGENT)
    notes = app.workspace / "notes.txt"
    notes.write_text(ORIGINAL)
    path = app.new_session()
    session_id = path.rsplit("/", 1)[1]
    with app.live(path) as page:
        page.until('data-agent-state="ready"')
        page.prompt("edit notes.txt")
        page.until("edited")
        assert notes.read_text() == edited({2, 19})
        wait_for(lambda: len(hunks(panel(app, session_id))) == 2)
        (first, digest), (second, _) = hunks(panel(app, session_id))

        page.send("review", verb="undo", scope="hunk", path="notes.txt", hunk=first, digest=digest)
        wait_for(lambda: notes.read_text() == edited({19}))
        wait_for(lambda: len(hunks(panel(app, session_id))) == 1)
        ((header, digest),) = hunks(panel(app, session_id))
        page.send("review", verb="keep", scope="hunk", path="notes.txt", hunk=header, digest=digest)
        wait_for(lambda: 'data-role="no-changes"' in panel(app, session_id))
        shown = panel(app, session_id)
        assert "Undone: line 2" in shown and "Kept: line 19" in shown
        assert notes.read_text() == edited({19})  # Keep writes nothing

        page.prompt("next")
        said = page.until("got:")
        assert "The person undid these changes of yours since your last turn: notes.txt (line 2)" in said
    texts = [m["params"]["prompt"] for m in app.received() if m.get("method") == "session/prompt"]
    assert [block["text"] for block in texts[-1]][0].startswith("The person undid these changes")
    assert [block["text"] for block in texts[-1]][-1] == "next"


def test_an_undo_of_a_file_changed_meanwhile_is_refused_and_one_outside_the_changes_too(start_app: AppFactory) -> None:
    app = start_app(REVIEW_AGENT)
    notes = app.workspace / "notes.txt"
    notes.write_text(ORIGINAL)
    (app.workspace.parent / "secret.txt").write_text("secret\n")
    path = app.new_session()
    session_id = path.rsplit("/", 1)[1]
    with app.live(path) as page:
        page.until('data-agent-state="ready"')
        page.prompt("edit notes.txt")
        page.until("edited")
        wait_for(lambda: len(hunks(panel(app, session_id))) == 2)
        (first, digest), _ = hunks(panel(app, session_id))
        notes.write_text(edited({2, 19}) + "a line the person added\n")
        page.send("review", verb="undo", scope="hunk", path="notes.txt", hunk=first, digest=digest)
        refused = page.until("Not undone")
        assert notes.read_text().endswith("a line the person added\n")
        # Said to this page alone, in the file's panel (kept across its reloads), not in the session's thread.
        reply = BeautifulSoup(refused, "html.parser").find(id=review_reply_id("notes.txt", "session"))
        assert reply is not None and reply["hx-swap-oob"] == "innerHTML"
        assert "changed since the page showed it" in reply.get_text()
        slot = BeautifulSoup(panel(app, session_id), "html.parser").find(id=review_reply_id("notes.txt", "session"))
        assert slot is not None and slot.has_attr("hx-preserve") and not slot.get_text(strip=True)
        assert "Not undone" not in app.client.get(path).text

        for outside in ("../secret.txt", str(app.workspace.parent / "secret.txt"), "/etc/passwd"):
            page.send("review", verb="undo", scope="file", path=outside, digest=digest)
            assert "is not among this session's changes" in page.until("Not undone")
        assert (app.workspace.parent / "secret.txt").read_text() == "secret\n"


def test_a_watcher_sees_the_review_without_buttons_and_what_they_send_changes_nothing(
    start_server: ServerFactory, tmp_path: Path
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    notes = workspace / "notes.txt"
    notes.write_text(ORIGINAL)
    server = start_server(agent=REVIEW_AGENT, workspace=workspace, **TEAM)
    session_id = new_session(server, "alice", ["admins"])
    url = URLS.for_("change_diff", session_id=session_id, path="notes.txt")

    def panel_of(name: str, groups: list[str]) -> str:
        headers = {**as_person(name, groups), "hx-request": "true"}
        return httpx.get(server.url + url, headers=headers).text

    async def edit_then_watch() -> None:
        async with page_socket(server, session_id, "alice", ["admins"]) as (alice, nonce):
            await ready(alice)
            await prompt(alice, "edit notes.txt", nonce)
            await until(alice, "edited")
        share = {"kind": "person", "grantee": "bob", "role": "watch"}
        headers = {**as_person("alice", ["admins"]), "Origin": server.url}
        answer = httpx.post(server.url + URLS.for_("add_share", session_id=session_id), data=share, headers=headers)
        assert answer.status_code == 303
        wait_for(lambda: len(hunks(panel_of("alice", ["admins"]))) == 2)
        (header, digest), _ = hunks(panel_of("alice", ["admins"]))
        watched = panel_of("bob", [])
        assert watched.count('data-role="review-hunk"') == 2 and 'data-action="review-undo"' not in watched
        async with page_socket(server, session_id, "bob") as (bob, _):
            for scope in ("hunk", "file", "all"):
                values = {"verb": "undo", "scope": scope, "path": "notes.txt", "hunk": header, "digest": digest}
                await bob.send(json.dumps({"action": "review", **values}))
            await asyncio.sleep(1)

    asyncio.run(edit_then_watch())
    assert notes.read_text() == edited({2, 19})
    assert len(hunks(panel_of("alice", ["admins"]))) == 2


def test_the_review_is_rebuilt_after_a_restart(start_app: AppFactory) -> None:
    app = start_app(REVIEW_AGENT)
    notes = app.workspace / "notes.txt"
    notes.write_text(ORIGINAL)
    path = app.new_session()
    session_id = path.rsplit("/", 1)[1]
    with app.live(path) as page:
        page.until('data-agent-state="ready"')
        page.prompt("edit notes.txt")
        page.until("edited")
        wait_for(lambda: len(hunks(panel(app, session_id))) == 2)
        (first, digest), _ = hunks(panel(app, session_id))
        page.send("review", verb="keep", scope="hunk", path="notes.txt", hunk=first, digest=digest)
        wait_for(lambda: len(hunks(panel(app, session_id))) == 1)
    before = panel(app, session_id)
    app.client.__exit__(None, None, None)  # the server stops; a new one starts on the same store
    with type(app.client)(
        create_app(Settings.from_env(os.environ)), base_url="http://127.0.0.1", headers=dict(app.client.headers)
    ) as client:
        again = InProcess(client, app.record_file, app.workspace, app.data_dir)
        wait_for(lambda: len(hunks(panel(again, session_id))) == 1)
        after = panel(again, session_id)
    assert "Kept: line 2" in after
    assert hunks(after) == hunks(before)


def test_undo_all_writes_every_file_back_and_keep_all_of_a_file_leaves_it_as_it_is(start_app: AppFactory) -> None:
    app = start_app(REVIEW_AGENT)
    notes, other = app.workspace / "notes.txt", app.workspace / "other.txt"
    notes.write_text(ORIGINAL)
    other.write_text(ORIGINAL)
    path = app.new_session()
    session_id = path.rsplit("/", 1)[1]
    with app.live(path) as page:
        page.until('data-agent-state="ready"')
        page.prompt("edit notes.txt")
        page.until("edited")
        page.prompt("edit other.txt")
        wait_for(lambda: other.read_text() == edited({2, 19}))
        wait_for(lambda: len(hunks(panel(app, session_id, "other.txt"))) == 2)
        (_, digest), _ = hunks(panel(app, session_id, "other.txt"))
        page.send("review", verb="keep", scope="file", path="other.txt", digest=digest)
        wait_for(lambda: 'data-role="no-changes"' in panel(app, session_id, "other.txt"))

        listing = app.client.get(URLS.for_("changes", session_id=session_id), headers={"hx-request": "true"}).text
        (button,) = BeautifulSoup(listing, "html.parser").select('[data-action="review-undo-all"]')
        page.send(**json.loads(str(button["hx-vals"])))
        wait_for(lambda: notes.read_text() == ORIGINAL)
        assert other.read_text() == edited({2, 19})  # kept: Undo all leaves it
        page.prompt("next")
        said = page.until("got:")
        assert "notes.txt (line 2), notes.txt (line 19)" in said and "other.txt" not in said


def test_since_the_last_prompt_undo_goes_back_to_the_prompt_and_keep_folds_there_rebuilt_after_a_restart(
    start_app: AppFactory,
) -> None:
    app = start_app(REVIEW_AGENT)
    notes = app.workspace / "notes.txt"
    notes.write_text(ORIGINAL)
    path = app.new_session()
    session_id = path.rsplit("/", 1)[1]
    twice = ORIGINAL.replace("line 2\n", "line 2 (edited) (edited)\n").replace(
        "line 19\n", "line 19 (edited) (edited)\n"
    )
    with app.live(path) as page:
        page.until('data-agent-state="ready"')
        page.prompt("edit notes.txt")
        page.until("edited")
        wait_for(lambda: len(hunks(panel(app, session_id))) == 2)
        page.prompt("edit notes.txt")  # the second prompt: its baseline is the file edited once
        wait_for(lambda: notes.read_text() == twice)
        wait_for(lambda: len(hunks(panel(app, session_id, since="prompt"))) == 2)
        listing = app.client.get(URLS.for_("changes", session_id=session_id, since="prompt")).text
        (counts,) = BeautifulSoup(listing, "html.parser").select('.change[data-path="notes.txt"] .counts')
        assert counts.get_text(" ", strip=True) == "+2 −2"  # the lines since the prompt, as the session's list counts
        (first, digest), _ = hunks(panel(app, session_id, since="prompt"))
        page.send("review", verb="undo", scope="hunk", path="notes.txt", hunk=first, digest=digest, since="prompt")
        wait_for(lambda: notes.read_text() == twice.replace("line 2 (edited) (edited)", "line 2 (edited)"))
        wait_for(lambda: len(hunks(panel(app, session_id, since="prompt"))) == 1)
        ((second, digest),) = hunks(panel(app, session_id, since="prompt"))
        page.send("review", verb="keep", scope="hunk", path="notes.txt", hunk=second, digest=digest, since="prompt")
        wait_for(lambda: 'data-role="no-changes"' in panel(app, session_id, since="prompt"))
        assert len(hunks(panel(app, session_id))) == 2  # since the session began: both lines still differ
        listing = app.client.get(URLS.for_("changes", session_id=session_id, since="prompt")).text
        assert "No files changed since the last prompt." in listing
    app.client.__exit__(None, None, None)  # the server stops; a new one starts on the same store
    with type(app.client)(
        create_app(Settings.from_env(os.environ)), base_url="http://127.0.0.1", headers=dict(app.client.headers)
    ) as client:
        again = InProcess(client, app.record_file, app.workspace, app.data_dir)
        wait_for(lambda: len(hunks(panel(again, session_id))) == 2)
        assert 'data-role="no-changes"' in panel(again, session_id, since="prompt")


def test_undo_of_a_new_file_removes_it_and_of_a_deleted_one_writes_it_back(start_app: AppFactory) -> None:
    app = start_app(REVIEW_AGENT)
    gone = app.workspace / "gone.txt"
    gone.write_text(ORIGINAL)
    path = app.new_session()
    session_id = path.rsplit("/", 1)[1]
    with app.live(path) as page:
        page.until('data-agent-state="ready"')
        gone.unlink()
        (app.workspace / "new.txt").write_text("a new file\n")

        def listing() -> str:
            return app.client.get(URLS.for_("changes", session_id=session_id)).text

        wait_for(lambda: "new.txt" in listing() and "gone.txt" in listing())
        (button,) = BeautifulSoup(listing(), "html.parser").select('[data-action="review-undo-all"]')
        page.send(**json.loads(str(button["hx-vals"])))
        wait_for(lambda: gone.exists() and not (app.workspace / "new.txt").exists())
        assert gone.read_text() == ORIGINAL
        wait_for(lambda: "No files changed yet." in listing())


def test_the_changes_list_says_when_a_repetitive_files_counts_are_estimated(start_app: AppFactory) -> None:
    app = start_app(REVIEW_AGENT)
    repeated, lines = "x" * 70 + "\n", 500 * 1024 // 71
    (app.workspace / "same.txt").write_text(repeated * lines)
    (app.workspace / "notes.txt").write_text(ORIGINAL)
    path = app.new_session()
    session_id = path.rsplit("/", 1)[1]
    with app.live(path) as page:
        page.until('data-agent-state="ready"')
        (app.workspace / "same.txt").write_text("".join("y\n" if n % 100 == 0 else repeated for n in range(lines)))
        page.prompt("edit notes.txt")
        page.until("edited")

        def listing() -> BeautifulSoup:
            url = URLS.for_("changes", session_id=session_id)
            return BeautifulSoup(app.client.get(url, headers={"hx-request": "true"}).text, "html.parser")

        wait_for(lambda: len(listing().select(".change")) == 2)
        counts = {str(item["data-path"]): item.select_one(".counts") for item in listing().select(".change")}
    assert counts["same.txt"] is not None and counts["same.txt"].has_attr("data-estimated")
    assert counts["same.txt"].get_text(" ", strip=True).startswith("≈ +73")
    assert counts["notes.txt"] is not None and not counts["notes.txt"].has_attr("data-estimated")
