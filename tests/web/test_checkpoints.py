"""Checkpoints through the page: each prompt's message offers a restore of the files to before it (with what it would
change), and an edited resend, in a new agent session or a fork; refused during a turn and to a watcher; offered
again on a session rebuilt from its journal.

In process: the app through Starlette's TestClient (the store on), the page's socket through ``websocket_connect``, a
test agent that changes the files of its folder itself (tests/agents/checkpoint_agent.py).
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import sqlite3
import sys
import time
from pathlib import Path

from tests.support.live import AppFactory, InProcess, LiveSocket
from tests.support.servers import AGENTS
from tests.support.urls import URLS
from webclient.agents.checkpoint_stores import forget_stores, store_path
from webclient.config import Settings
from webclient.people.person import Person
from webclient.people.roles import Share
from webclient.session.checkpoints import summary_before
from webclient.session.core import Session
from webclient.viewmodel.entries import MessageEntry
from webclient.web.live import session_socket

CHECKPOINT_AGENT = f"{sys.executable} {AGENTS / 'checkpoint_agent.py'}"

PROMPTS = (
    "write a.txt one\nfirst",
    "write a.txt two\nwrite b.txt two\nsecond",
    "write c/d.txt three\ndelete b.txt\nthird",
)


def session_of(app: InProcess, path: str) -> Session:
    session: Session = app.client.app.state.sessions.get(path.rsplit("/", 1)[1])  # type: ignore[attr-defined]
    return session


def prompt_seqs(session: Session) -> list[int]:
    return [e.seq for e in session.thread if isinstance(e, MessageEntry) and e.kind == "user-message"]


def turn(page: LiveSocket, text: str) -> None:
    page.prompt(text)
    answered(page, f": {text.splitlines()[-1]}")  # the agent's answer names the prompt's last line


def answered(page: LiveSocket, answer: str) -> None:
    """Frames read until ``answer`` shows and the turn is over (in the answer's frame, or a later one)."""
    frame = page.until(answer)
    while 'data-turn-state="idle"' not in frame:
        frame = page.frame()


def three_turns(app: InProcess) -> tuple[str, Session]:
    (app.workspace / "a.txt").write_text("zero\n")
    path = app.new_session()
    with app.live(path) as page:
        page.until('data-agent-state="ready"')
        for text in PROMPTS:
            turn(page, text)
    return path, session_of(app, path)


def wait_for_the_first_snapshot(session: Session) -> None:
    """The snapshot taken as the agent starts runs in the background: waited for (at most a minute), not timed."""
    for _ in range(1200):
        if session.checkpoints.preparing is not None and session.checkpoints.preparing.done():
            return
        time.sleep(0.05)
    raise AssertionError("no snapshot was taken as the agent started")


def files(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): p.read_text() for p in sorted(folder.rglob("*")) if p.is_file()}


def preview(app: InProcess, session: Session, seq: int) -> str:
    response = app.client.get(URLS.for_("checkpoint", session_id=session.id, seq=seq))
    assert response.status_code == 200, response.text
    return response.text


def test_a_restore_puts_the_files_back_as_they_were_before_the_second_prompt(start_app: AppFactory) -> None:
    app = start_app(agent=CHECKPOINT_AGENT)
    path, session = three_turns(app)
    assert files(app.workspace) == {"a.txt": "two\n", "c/d.txt": "three\n"}
    first, second, third = prompt_seqs(session)
    page_html = app.client.get(path).text
    assert page_html.count('data-role="checkpoint"') == 3

    shown = preview(app, session, second)
    listed = re.findall(r'data-status="(\w+)"><span class="muted">[^<]*</span> <code>([^<]*)</code>', shown)
    assert listed == [("modified", "a.txt"), ("added", "c/d.txt")]  # b.txt came and went after it
    assert 'data-role="checkpoint-restore"' in shown and "disabled" not in shown

    with app.live(path) as page:
        page.send("restore_files", seq=str(second))
        page.until("Files restored to before this prompt")
    assert files(app.workspace) == {"a.txt": "one\n"}
    assert not (app.workspace / "c").exists()
    assert session.checkpoints.by_entry.keys() == {first, second, third}
    journal = [json.loads(body) for kind, _, body in stored_journal(app, session) if kind == "action"]
    restore = next(action for action in journal if action["action"] == "restore")
    assert restore["seq"] == second and restore["tree"] == session.checkpoints.by_entry[second].tree


def test_edit_and_resend_starts_a_new_agent_session_told_the_earlier_turns(start_app: AppFactory) -> None:
    app = start_app(agent=CHECKPOINT_AGENT)
    path, session = three_turns(app)
    _, second, _ = prompt_seqs(session)
    shown = preview(app, session, second)
    assert 'name="summary"' in shown and "a new agent session starts" in shown  # the agent offers no fork
    with app.live(path) as page:
        page.send("edit_resend", seq=str(second), text="write e.txt edited\nresent", nonce="resend-1", summary="on")
        answered(page, ": resent")
    assert files(app.workspace) == {"a.txt": "one\n", "e.txt": "edited\n"}
    received = app.received()
    assert [m["method"] for m in received if m.get("method") in ("session/new", "session/fork")] == ["session/new"] * 2
    last = app.prompts_received()[-1]
    assert last.startswith("Earlier in this conversation") and "The person: write a.txt one first" in last
    assert "You: done in" in last and "second" not in last  # only what came before the branch point
    assert last.endswith("write e.txt edited\nresent")
    notices = [e.title for e in session.thread if getattr(e, "role", "") == "notice"]
    assert "Branch point: a new agent session, which starts without the later context" in notices
    texts = [e.text for e in session.thread if isinstance(e, MessageEntry) and e.kind == "user-message"]
    assert texts[:3] == list(PROMPTS)  # the earlier branch stays readable above the branch point


def test_edit_and_resend_continues_in_a_fork_when_the_agent_offers_one(start_app: AppFactory) -> None:
    app = start_app(agent=CHECKPOINT_AGENT, FORK="1")
    path, session = three_turns(app)
    _, second, _ = prompt_seqs(session)
    shown = preview(app, session, second)
    assert 'name="summary"' not in shown and "continues in a fork" in shown
    with app.live(path) as page:
        page.send("edit_resend", seq=str(second), text="resent in a fork", nonce="resend-2")
        page.until(": resent in a fork")
    fork = next(m for m in app.received() if m.get("method") == "session/fork")
    assert fork["params"]["sessionId"].startswith("s-")
    prompt = [m for m in app.received() if m.get("method") == "session/prompt"][-1]
    assert prompt["params"]["sessionId"].startswith("fork-")
    assert app.prompts_received()[-1] == "resent in a fork"
    assert files(app.workspace) == {"a.txt": "one\n"}
    app.client.portal.call(session.recorder.flush)  # type: ignore[union-attr]
    app.client.portal.call(app.client.app.state.sessions.let_go, session.id)  # type: ignore[attr-defined]
    app.client.get(path)
    rebuilt = session_of(app, path)
    assert rebuilt.agent.known_session_id == prompt["params"]["sessionId"]  # a Resume takes up the fork


def test_a_restore_is_refused_while_a_turn_runs(start_app: AppFactory) -> None:
    app = start_app(agent=CHECKPOINT_AGENT)
    (app.workspace / "a.txt").write_text("zero\n")
    path = app.new_session()
    with app.live(path) as page:
        page.until('data-agent-state="ready"')
        turn(page, "write a.txt one\nfirst")
        page.prompt("write a.txt two\nslow 30")
        page.until('data-turn-state="running"')
        session = session_of(app, path)
        first = prompt_seqs(session)[0]
        shown = preview(app, session, first)
        assert re.search(r'data-role="checkpoint-restore"[^>]* disabled title="The agent is working', shown)
        page.send("restore_files", seq=str(first))
        page.until("Files not restored")
        assert (app.workspace / "a.txt").read_text() == "two\n"
        page.send("cancel")
        answered(page, ": slow 30")
    assert not any(a["action"] == "restore" for a in actions(app, session))


def test_a_watcher_may_not_restore(start_app: AppFactory) -> None:
    app = start_app(agent=CHECKPOINT_AGENT)
    path, session = three_turns(app)
    _, second, _ = prompt_seqs(session)
    bob = Person(id="bob", name="Bob")
    session.owner, session.shares = "alice", [Share("person", "bob", "watch")]
    message = json.dumps({"action": "restore_files", "seq": str(second)})
    session_socket._handle_client_message(session, None, message, bob, None)  # type: ignore[arg-type]
    assert files(app.workspace) == {"a.txt": "two\n", "c/d.txt": "three\n"}
    assert not any(a["action"] == "restore" for a in actions(app, session))
    renderer = app.client.app.state.renderer  # type: ignore[attr-defined]
    entry = session.thread.entry(second)
    context = {"session": session, "entry": entry, "oob": None, "urls": URLS}
    assert 'data-role="checkpoint"' in renderer.page("_message.html", **context, watching=False)
    assert 'data-role="checkpoint"' not in renderer.page("_message.html", **context, watching=True)
    # A subagent's prompt numbered as one of the session's is not that prompt: it has no checkpoint.
    child = MessageEntry(seq=second, turn=1, kind="user-message", parts=["to a subagent"])
    child.scope = "sub-1-"
    assert 'data-role="checkpoint"' not in renderer.page("_message.html", **context | {"entry": child}, watching=False)


def test_a_session_rebuilt_from_its_journal_offers_its_checkpoints_again(start_app: AppFactory) -> None:
    app = start_app(agent=CHECKPOINT_AGENT)
    path, session = three_turns(app)
    first, second, third = prompt_seqs(session)
    trees = {seq: c.tree for seq, c in session.checkpoints.by_entry.items()}
    with app.live(path) as page:
        page.send("restore_files", seq=str(third))
        page.until("Files restored to before this prompt")
    assert files(app.workspace) == {"a.txt": "two\n", "b.txt": "two\n"}
    app.client.portal.call(session.recorder.flush)  # type: ignore[union-attr]
    manager = app.client.app.state.sessions  # type: ignore[attr-defined]
    app.client.portal.call(manager.let_go, session.id)  # type: ignore[union-attr]

    page_html = app.client.get(path).text  # rebuilt from the journal
    rebuilt = session_of(app, path)
    assert rebuilt is not session
    assert {seq: c.tree for seq, c in rebuilt.checkpoints.by_entry.items()} == trees
    assert page_html.count('data-role="checkpoint"') == 3 and "Files restored to before this prompt" in page_html
    shown = preview(app, rebuilt, first)
    assert "a.txt" in shown and "b.txt" in shown
    with app.live(path) as page:
        page.frame()  # the whole page, which shows the first restore's notice
        page.send("restore_files", seq=str(first))
        page.until("Files restored to before this prompt")
    assert files(app.workspace) == {"a.txt": "zero\n"}


def stored_journal(app: InProcess, session: Session) -> list[tuple[str, str, str]]:
    app.client.portal.call(session.recorder.flush)  # type: ignore[union-attr]
    with contextlib.closing(sqlite3.connect(app.data_dir / "webclient.sqlite3")) as db:
        rows = db.execute("SELECT kind, direction, body FROM journal WHERE session_id = ? ORDER BY seq", (session.id,))
        return [tuple(row) for row in rows]


def actions(app: InProcess, session: Session) -> list[dict[str, object]]:
    return [json.loads(body) for kind, _, body in stored_journal(app, session) if kind == "action"]


def test_a_session_rebuilt_after_a_restart_resends_in_a_new_agent_session(start_app: AppFactory) -> None:
    app = start_app(agent=CHECKPOINT_AGENT, WEBCLIENT_MAX_PROMPT_MB="0.0001")  # 104 bytes
    path, session = three_turns(app)
    _, second, _ = prompt_seqs(session)
    app.client.portal.call(session.recorder.flush)  # type: ignore[union-attr]
    app.client.portal.call(app.client.app.state.sessions.let_go, session.id)  # type: ignore[attr-defined]
    app.client.get(path)  # rebuilt from the journal, its agent not running
    rebuilt = session_of(app, path)
    assert rebuilt.lifecycle.agent_state == "stopped"
    with app.live(path) as page:
        page.frame()
        page.send("edit_resend", seq=str(second), text="x" * 200, nonce="too-long")
        page.until("Not resent")
        assert files(app.workspace) == {"a.txt": "two\n", "c/d.txt": "three\n"}  # refused before the restore
        page.send("edit_resend", seq=str(second), text="write e.txt edited\nresent", nonce="resend-3")
        answered(page, ": resent")
    assert files(app.workspace) == {"a.txt": "one\n", "e.txt": "edited\n"}
    assert rebuilt.lifecycle.agent_state == "ready"
    assert [a["action"] for a in actions(app, rebuilt)][-2:] == ["resend", "prompt"]


def test_a_prompt_whose_checkpoint_fails_goes_anyway_and_says_so(start_app: AppFactory) -> None:
    app = start_app(agent=CHECKPOINT_AGENT)
    path = app.new_session()
    session = session_of(app, path)
    store = session.checkpoints.store
    assert store is not None
    with app.live(path) as page:
        page.until('data-agent-state="ready"')
        wait_for_the_first_snapshot(session)
        shutil.rmtree(store.git_dir)
        store.git_dir.write_text("not a folder")  # no store can be made there
        turn(page, "write a.txt one\nfirst")
        store.git_dir.unlink()
        store.timeout = 1e-9  # too slow: from now on none is taken
        turn(page, "write a.txt two\nsecond")
        turn(page, "write a.txt three\nthird")
    notices = [e for e in session.thread if getattr(e, "role", "") == "notice" and e.title == "No checkpoint"]
    assert len(notices) == 2 and "no more are taken" in notices[1].detail
    assert session.checkpoints.by_entry == {}
    assert app.prompts_received() == [
        "write a.txt one\nfirst",
        "write a.txt two\nsecond",
        "write a.txt three\nthird",
    ]
    assert 'data-role="checkpoint"' not in app.client.get(path).text


def test_the_store_goes_with_the_session(start_app: AppFactory) -> None:
    app = start_app(agent=CHECKPOINT_AGENT)
    path, session = three_turns(app)
    store = session.checkpoints.store
    assert store is not None and store.git_dir.is_dir()
    assert store.git_dir.parent == app.data_dir / "checkpoints"
    csrf = re.search(r'name="csrf" value="([^"]+)"', app.client.get("/").text)
    assert csrf is not None
    answer = app.client.post(URLS.for_("delete_session", session_id=session.id), data={"csrf": csrf.group(1)})
    assert answer.status_code in (200, 303)
    assert not store.git_dir.exists()
    assert files(app.workspace) == {"a.txt": "two\n", "c/d.txt": "three\n"}  # the folder itself is the person's


def test_the_summary_names_each_earlier_prompt_and_the_agents_last_answer_to_it(start_app: AppFactory) -> None:
    app = start_app(agent=CHECKPOINT_AGENT)
    _, session = three_turns(app)
    _, _, third = prompt_seqs(session)
    told = summary_before(session.thread, third)
    assert told.splitlines()[0] == "Earlier in this conversation (a summary; what came after was undone):"
    assert "The person: write a.txt one first\nYou: done in" in told and ": second" in told and "third" not in told
    assert summary_before(session.thread, third, limit=200).count("The person:") == 1  # the latest within the bound
    assert summary_before(session.thread, prompt_seqs(session)[0]) == ""


def test_the_stores_of_sessions_the_retention_deleted_go_too(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path)
    kept, gone = store_path(settings, "kept"), store_path(settings, "gone")
    for path in (kept, gone):
        (path / "objects").mkdir(parents=True)
    forget_stores(settings)(["gone", "never-had-one"])
    assert kept.is_dir() and not gone.exists()
    assert store_path(settings, "../x").parent == tmp_path / "checkpoints"  # an id never leaves the folder


def test_the_first_snapshot_is_taken_as_the_agent_starts_and_the_first_checkpoint_is_the_folder_at_its_prompt(
    start_app: AppFactory,
) -> None:
    """The folder is snapshotted before any prompt (the first prompt then waits only for what changed since); a file
    written after that snapshot and before the prompt is in the prompt's checkpoint all the same."""
    app = start_app(agent=CHECKPOINT_AGENT)
    (app.workspace / "a.txt").write_text("zero\n")
    path = app.new_session()
    session = session_of(app, path)
    store = session.checkpoints.store
    assert store is not None
    with app.live(path) as page:
        page.until('data-agent-state="ready"')
        wait_for_the_first_snapshot(session)
        assert store.index.exists() and prompt_seqs(session) == []
        (app.workspace / "later.txt").write_text("after the first snapshot\n")
        turn(page, PROMPTS[0])
    (first,) = prompt_seqs(session)
    listed = re.findall(
        r'data-status="(\w+)"><span class="muted">[^<]*</span> <code>([^<]*)</code>', preview(app, session, first)
    )
    assert listed == [("modified", "a.txt")]  # later.txt was there when the prompt went
    with app.live(path) as page:
        page.send("restore_files", seq=str(first))
        page.until("Files restored to before this prompt")
    assert files(app.workspace) == {"a.txt": "zero\n", "later.txt": "after the first snapshot\n"}
