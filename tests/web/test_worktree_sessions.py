"""New session's "Work in a new worktree": the session works in a git worktree of its own on its own branch, shows
the branch and its diff, commits and discards (a driver's, never during a turn, on record), is rebuilt after a
restart, and its worktree goes with it when it is deleted, unless it holds uncommitted work."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import os
import re
import secrets
import subprocess
import time
from collections.abc import AsyncGenerator, Iterator, Sequence
from pathlib import Path

import pytest

from tests.support.live import AppFactory, LiveSocket, TestClient
from tests.support.people import SECRET_FILE, as_person
from tests.support.servers import SCRIPTED_AGENT, migrated_store
from tests.support.urls import URLS
from tests.workspace.test_worktrees import hostile, plain_git, repository
from webclient.agents.session_worktrees import RetiredWorktrees
from webclient.config import Settings
from webclient.proxy_proof import ProxyProof
from webclient.session.recorder import ACTION, JournalRow
from webclient.web.app import create_app
from webclient.workspace import worktrees


def new_worktree_session(client: TestClient, **form: str) -> str:
    """A new session in a worktree of the app's workspace: its id."""
    response = client.post(URLS.for_("new_session"), data={"worktree": "on", **form}, follow_redirects=False)
    assert response.status_code == 303, response.text[:800]
    return str(response.headers["location"]).rsplit("/", 1)[1]


@contextlib.contextmanager
def live(client: TestClient, session_id: str) -> Iterator[LiveSocket]:
    with client.websocket_connect(URLS.for_("socket", session_id=session_id)) as socket:
        yield LiveSocket(socket)


def agent_writes(client: TestClient, session_id: str, path: Path, text: str, *, resume: bool = False) -> None:
    """The agent writes ``path`` through the client (``fs/write_text_file``), in one turn (``resume``: its agent
    started again first)."""
    with live(client, session_id) as page:
        if resume:
            page.send("resume")
        page.until('data-agent-state="ready"')
        page.prompt(f"fs write {path} {text}")
        said = page.until('{"result"')  # the agent's message, after its turn ended (one frame)
        assert 'data-turn-state="idle"' in said


def test_a_session_in_a_worktree_writes_commits_and_shows_its_branch(start_app: AppFactory, tmp_path: Path) -> None:
    repo = repository(tmp_path / "repo")
    app = start_app(workspace=repo)
    session_id = new_worktree_session(app.client)
    worktree = app.data_dir / "worktrees" / session_id
    branch = f"webclient/{re.sub(r'[^A-Za-z0-9]', 'x', session_id)[:8]}-"
    assert (worktree / "notes.txt").read_text() == "first\n"
    assert branch in plain_git(repo, "branch", "--list", "webclient/*")

    page = app.client.get(URLS.for_("session", session_id=session_id)).text
    assert 'data-role="branch"' in page and branch in page
    assert 'data-action="show-worktree"' in page

    agent_writes(app.client, session_id, worktree / "notes.txt", "from-the-agent")
    assert (worktree / "notes.txt").read_text() == "from-the-agent"
    assert (repo / "notes.txt").read_text() == "first\n", "the main checkout is untouched"

    view = app.client.get(URLS.for_("worktree", session_id=session_id)).text
    assert 'data-role="uncommitted"' in view and 'data-path="notes.txt"' in view
    assert "from-the-agent" in view and "left to your own tools" in view
    assert 'data-role="commit-message">{&#34;result&#34;' in view, "the default: the agent's last message"

    done = app.client.post(
        URLS.for_("worktree_commit", session_id=session_id), data={"message": "Notes from the agent"},
        follow_redirects=False,
    )  # fmt: skip
    assert done.status_code == 303
    log = plain_git(repo, "log", "--format=%an|%cn|%s", "-1", plain_git(worktree, "branch", "--show-current").strip())
    assert log.strip() == "you|ACP web client|Notes from the agent"
    view = app.client.get(URLS.for_("worktree", session_id=session_id)).text
    assert 'data-role="clean"' in view and 'data-path="notes.txt"' in view, "the branch's diff since it started"
    assert "Committed" in app.client.get(URLS.for_("session", session_id=session_id)).text
    audit = app.client.get(URLS.for_("session_audit", session_id=session_id)).text
    assert "worktree-commit" in audit and "Notes from the agent" in audit and "worktree" in audit
    nothing = app.client.post(URLS.for_("worktree_commit", session_id=session_id), data={"message": "again"})
    assert nothing.status_code == 409 and "Nothing to commit" in nothing.text


def test_discard_asks_first_then_puts_the_worktree_back(start_app: AppFactory, tmp_path: Path) -> None:
    app = start_app(workspace=repository(tmp_path / "repo"))
    session_id = new_worktree_session(app.client)
    worktree = app.data_dir / "worktrees" / session_id
    (worktree / "notes.txt").write_text("changed\n")
    (worktree / "stray.txt").write_text("stray\n")
    url = URLS.for_("worktree_discard", session_id=session_id)
    unconfirmed = app.client.post(url, data={})
    assert unconfirmed.status_code == 400 and "confirm" in unconfirmed.text
    assert (worktree / "stray.txt").exists()
    assert app.client.post(url, data={"confirm": "yes"}, follow_redirects=False).status_code == 303
    assert (worktree / "notes.txt").read_text() == "first\n"
    assert not (worktree / "stray.txt").exists()


def test_commit_and_discard_are_refused_during_a_turn(start_app: AppFactory, tmp_path: Path) -> None:
    app = start_app(workspace=repository(tmp_path / "repo"))
    session_id = new_worktree_session(app.client)
    (app.data_dir / "worktrees" / session_id / "new.txt").write_text("new\n")
    with live(app.client, session_id) as page:
        page.until('data-agent-state="ready"')
        page.prompt("slow")
        page.until('data-turn-state="running"')
        refused = app.client.post(URLS.for_("worktree_commit", session_id=session_id), data={"message": "now"})
        assert refused.status_code == 409 and "A turn is running" in refused.text
        refused = app.client.post(URLS.for_("worktree_discard", session_id=session_id), data={"confirm": "yes"})
        assert refused.status_code == 409 and "A turn is running" in refused.text
        page.send("cancel")
        page.until('data-turn-state="idle"')
    assert (app.data_dir / "worktrees" / session_id / "new.txt").exists()


def test_a_folder_that_is_not_a_repository_is_refused(start_app: AppFactory, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    app = start_app(workspace=plain)
    response = app.client.post(URLS.for_("new_session"), data={"worktree": "on"}, follow_redirects=False)
    assert response.status_code == 400
    assert "not in a git repository" in response.text
    assert not (app.data_dir / "worktrees").exists() or not any((app.data_dir / "worktrees").iterdir())


def test_deleting_removes_a_clean_worktree_and_keeps_a_dirty_one(start_app: AppFactory, tmp_path: Path) -> None:
    repo = repository(tmp_path / "repo")
    app = start_app(workspace=repo)
    clean, dirty = new_worktree_session(app.client), new_worktree_session(app.client)
    (app.data_dir / "worktrees" / dirty / "work.txt").write_text("uncommitted\n")
    view = app.client.get(URLS.for_("worktree", session_id=dirty)).text
    assert "deleting the session keeps this worktree" in view
    confirm = app.client.get(URLS.for_("confirm_delete", session_id=dirty)).text
    assert 'data-role="worktree-kept"' in confirm and "uncommitted work (1 file)" in confirm
    assert 'data-role="worktree-kept"' not in app.client.get(URLS.for_("confirm_delete", session_id=clean)).text
    for session_id in (clean, dirty):
        assert app.client.post(URLS.for_("delete_session", session_id=session_id), follow_redirects=False).status_code
    assert not (app.data_dir / "worktrees" / clean).exists()
    assert (app.data_dir / "worktrees" / dirty / "work.txt").exists(), "uncommitted work is kept"
    listed = plain_git(repo, "worktree", "list")
    assert clean not in listed and dirty in listed
    assert len(plain_git(repo, "branch", "--format=%(refname)", "--list", "webclient/*").split()) == 2, "both stay"


def test_a_hostile_repository_config_runs_nothing(start_app: AppFactory, tmp_path: Path) -> None:
    repo = repository(tmp_path / "repo")
    marker = tmp_path / "ran"
    hostile(repo, marker)
    app = start_app(workspace=repo)
    session_id = new_worktree_session(app.client)
    (app.data_dir / "worktrees" / session_id / "notes.txt").write_text("changed\n")
    assert app.client.get(URLS.for_("worktree", session_id=session_id)).status_code == 200
    commit = URLS.for_("worktree_commit", session_id=session_id)
    assert app.client.post(commit, data={"message": "m"}, follow_redirects=False).status_code == 303
    assert app.client.post(URLS.for_("delete_session", session_id=session_id)).status_code == 200
    assert not marker.exists()


@contextlib.contextmanager
def app_on(env: dict[str, str]) -> Iterator[TestClient]:
    """One start of the app on ``env`` (its data folder outlives it: the next start is a restart)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("WEBCLIENT_AGENT", raising=False)
        for name, value in env.items():
            patch.setenv(name, value)
        headers = {"Authorization": f"token {env['WEBCLIENT_TOKEN']}"}
        with TestClient(create_app(Settings.from_env(os.environ)), base_url="http://127.0.0.1", headers=headers) as c:
            yield c
        gc.unfreeze()


def restartable(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """A repository, a data folder with a migrated store, and the environment of an app on them that `app_on` can
    start again on the same store."""
    repo = repository(tmp_path / "repo")
    data = migrated_store(tmp_path / "data")
    env = {
        "WEBCLIENT_TOKEN": secrets.token_urlsafe(16), "WEBCLIENT_DATA_DIR": str(data), "WEBCLIENT_DEMO_REMOTE": "off",
        "WEBCLIENT_WORKSPACE": str(repo), "WEBCLIENT_AGENT": SCRIPTED_AGENT, "DEMO_AGENT_SPEED": "0",
    }  # fmt: skip
    return repo, data, env


def test_a_worktree_session_is_rebuilt_after_a_restart(tmp_path: Path) -> None:
    repo, data, env = restartable(tmp_path)
    with app_on(env) as client:
        session_id = new_worktree_session(client)
        worktree = data / "worktrees" / session_id
        agent_writes(client, session_id, worktree / "notes.txt", "before-the-restart")
        before = client.get(URLS.for_("worktree", session_id=session_id)).text
        branch = re.search(r'data-branch="([^"]+)"', before)
        assert branch is not None
    with app_on(env) as client:
        page = client.get(URLS.for_("session", session_id=session_id)).text
        assert branch.group(1) in page and 'data-role="branch"' in page
        assert 'data-role="resume-refused"' not in page, "its own worktree is still its to work in"
        after = client.get(URLS.for_("worktree", session_id=session_id)).text
        assert "before-the-restart" in after and branch.group(1) in after
        done = client.post(
            URLS.for_("worktree_commit", session_id=session_id), data={"message": "After"}, follow_redirects=False
        )
        assert done.status_code == 303
        agent_writes(client, session_id, worktree / "more.txt", "resumed", resume=True)  # it works there again
    assert subprocess.run(["git", "-C", str(repo), "log", "-1", "--format=%s", branch.group(1)],
                          capture_output=True, text=True, check=True).stdout.strip() == "After"  # fmt: skip


def test_only_a_driver_from_this_site_commits_or_discards(tmp_path: Path) -> None:
    repo = repository(tmp_path / "repo")
    settings = Settings(
        agent=SCRIPTED_AGENT,
        workspace=repo,
        data_dir=migrated_store(tmp_path / "data"),
        demo_remote=False,
        auth="trusted-header",
        trusted_proxies=("127.0.0.1",),  # type: ignore[arg-type]
        proxy_proof=ProxyProof(secret_file=SECRET_FILE),
    )
    origin = {"Origin": "http://localhost", "Sec-Fetch-Site": "same-origin"}
    alice, bob, carol = ({**as_person(name), **origin} for name in ("alice", "bob", "carol"))
    with TestClient(create_app(settings), base_url="http://localhost", client=("127.0.0.1", 50000)) as client:
        made = client.post(URLS.for_("new_session"), data={"worktree": "on"}, headers=alice, follow_redirects=False)
        assert made.status_code == 303, made.text
        session_id = made.headers["location"].rsplit("/", 1)[1]
        (tmp_path / "data" / "worktrees" / session_id / "new.txt").write_text("alice's\n")
        share = {"kind": "person", "grantee": "bob", "role": "watch"}
        assert client.post(URLS.for_("add_share", session_id=session_id), data=share, headers=alice).status_code < 400
        commit = URLS.for_("worktree_commit", session_id=session_id)
        discard = URLS.for_("worktree_discard", session_id=session_id)
        assert client.get(URLS.for_("worktree", session_id=session_id), headers=bob).status_code == 200
        assert (
            'data-role="commit-form"' not in client.get(URLS.for_("worktree", session_id=session_id), headers=bob).text
        )
        assert client.post(commit, data={"message": "bob's"}, headers=bob).status_code == 403
        assert client.post(discard, data={"confirm": "yes"}, headers=bob).status_code == 403
        assert client.post(commit, data={"message": "carol's"}, headers=carol).status_code == 404
        elsewhere = {**alice, "Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}
        assert client.post(discard, data={"confirm": "yes"}, headers=elsewhere).status_code == 403
        assert (tmp_path / "data" / "worktrees" / session_id / "new.txt").exists()
        done = client.post(commit, data={"message": "alice's"}, headers=alice, follow_redirects=False)
        assert done.status_code == 303
    branch = f"webclient/{re.sub('[^A-Za-z0-9]', 'x', session_id)[:8]}-agent"
    log = plain_git(repo, "log", "-1", "--format=%an <%ae>|%s", branch)
    assert log.strip() == "alice <alice@webclient>|alice's"  # no e-mail header here: the id stands in


def test_a_folder_inside_the_repository_is_where_the_agent_starts_in_the_worktree(
    start_app: AppFactory, tmp_path: Path
) -> None:
    repo = repository(tmp_path / "repo")
    (repo / "src").mkdir()
    (repo / "src" / "main.txt").write_text("main\n")
    plain_git(repo, "add", "src")
    plain_git(repo, "commit", "--quiet", "-m", "src")
    app = start_app(workspace=repo)
    session_id = new_worktree_session(app.client, workspace=str(repo / "src"))
    inside = app.data_dir / "worktrees" / session_id / "src"
    agent_writes(app.client, session_id, inside / "main.txt", "changed")
    started = [message for message in app.received() if message.get("method") == "session/new"]
    assert started[0]["params"]["cwd"] == str(inside)
    assert (repo / "src" / "main.txt").read_text() == "main\n"
    view = app.client.get(URLS.for_("worktree", session_id=session_id)).text
    assert 'data-path="src/main.txt"' in view


def test_the_retention_removes_the_clean_worktrees_of_the_sessions_it_deletes_and_keeps_a_dirty_one(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    repo, data, env = restartable(tmp_path)
    with app_on(env) as client:
        clean, dirty = new_worktree_session(client), new_worktree_session(client)
        (data / "worktrees" / dirty / "work.txt").write_text("uncommitted\n")
    assert (data / "worktrees" / clean).is_dir()
    # Started again, keeping sessions a tenth of a second, the limits applied at start and every tenth of a second.
    shorter = {**env, "WEBCLIENT_KEEP_DAYS": str(0.1 / 86400), "WEBCLIENT_RETENTION_SECONDS": "0.1"}
    with caplog.at_level("WARNING"), app_on(shorter) as client:
        deadline = time.monotonic() + 30
        while (data / "worktrees" / clean).exists() or "has uncommitted work and is kept" not in caplog.text:
            assert time.monotonic() < deadline, "the retention did not let go of the worktrees"
            time.sleep(0.05)
        assert client.get(URLS.for_("session", session_id=clean)).status_code == 404
    assert (data / "worktrees" / dirty / "work.txt").read_text() == "uncommitted\n", "uncommitted work is kept"
    listed = plain_git(repo, "worktree", "list")
    assert clean not in listed and dirty in listed
    assert f"session {dirty} deleted: its worktree" in caplog.text
    assert len(plain_git(repo, "branch", "--format=%(refname)", "--list", "webclient/*").split()) == 2, "both stay"


def test_the_retention_removes_only_the_sessions_own_folder_whatever_its_journal_names(tmp_path: Path) -> None:
    repo = repository(tmp_path / "repo")
    settings = Settings(data_dir=tmp_path / "data")
    elsewhere = worktrees.add(repo, tmp_path / "elsewhere", "webclient/elsewhere")  # a clean worktree, not ours

    async def journal_of(session_id: str) -> AsyncGenerator[Sequence[JournalRow], None]:
        yield [(ACTION, "user", json.dumps({"action": "worktree", **elsewhere.journalled()}))]

    retired = RetiredWorktrees(settings, journal_of)
    asyncio.run(retired.deleting(["s1"]))
    retired.deleted(["s1"])
    assert elsewhere.path.is_dir() and str(elsewhere.path) in plain_git(repo, "worktree", "list")
