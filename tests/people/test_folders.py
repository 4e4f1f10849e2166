"""A person's folders are theirs: a new session in another person's folder, or in a folder that holds one, is refused
with a sentence saying whose it is; a share to drive opens a session's folder to the one it is shared with; an admin
may, on the record; the owners outlive a restart. Through the real server (trusted-header mode, people named by the
test as the proxy), for both layouts: a shared root whose folders belong to who started there first, and
``workspace = "/srv/projects/{person}"``."""

from __future__ import annotations

import html
import json
import time
from pathlib import Path

import httpx

from tests.support.own_server import launch, stop
from tests.support.people import TEAM, person_client
from tests.support.servers import AGENTS, SCRIPTED_AGENT, Server, ServerFactory
from tests.support.urls import URLS
from webclient.people.person import LOCAL
from webclient.session.person_folders import person_folder

ADMINS = ["admins"]


def cwd_line(folder: Path) -> str:
    """The session page's line naming the folder it works in."""
    return f'<code class="cwd" title="{folder}">{folder}</code>'


def start_in(server: Server, name: str, workspace: Path | str, groups: list[str] | None = None) -> httpx.Response:
    """``name`` starts a session in ``workspace`` (as the index's form sends it)."""
    return person_client(server, name, groups or []).post(URLS.for_("new_session"), data={"workspace": str(workspace)})


def started(answer: httpx.Response) -> str:
    assert answer.status_code == 303, html.unescape(answer.text)[:2000]
    return str(answer.headers["location"]).rsplit("/", 1)[1]


def refused(answer: httpx.Response, *words: str) -> None:
    """Refused on the index with a reason that has ``words`` (400, the typed folder kept in the form)."""
    said = html.unescape(answer.text)
    assert answer.status_code == 400, (answer.status_code, answer.headers.get("location"))
    assert all(word in said for word in words), (words, said[said.find("workspace") - 200 :][:1500])


def share(server: Server, owner: str, session_id: str, grantee: str, role: str) -> None:
    answer = person_client(server, owner).post(
        URLS.for_("add_share", session_id=session_id), data={"kind": "person", "grantee": grantee, "role": role}
    )
    assert answer.status_code == 303, answer.text[:300]


def test_under_a_shared_root_a_folder_is_whoever_started_there_first_and_a_restart_keeps_it(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    for folder in ("alice", "bob/sub", "carol"):
        (root / folder).mkdir(parents=True)
    (root / "bob" / ".env").write_text("BOB_SECRET=1")
    data = {"WEBCLIENT_DATA_DIR": str(tmp_path / "data"), **TEAM}
    server = launch(root, SCRIPTED_AGENT, **data)
    try:
        bobs = started(start_in(server, "bob", root / "bob"))
        refused(start_in(server, "alice", root / "bob"), f"{root / 'bob'} is bob's folder")
        refused(start_in(server, "alice", root / "bob" / "sub"), "is bob's folder")
        refused(start_in(server, "alice", root), f"holds bob's folder {root / 'bob'}")
        refused(start_in(server, "alice", ""), "holds bob's folder")  # the agent's default folder is the root
        alices = started(start_in(server, "alice", root / "alice"))
        refused(start_in(server, "bob", root / "alice"), "is alice's folder")
        started(start_in(server, "bob", root / "bob" / "sub"))  # inside his own
        # Alice's own session does not show Bob's files: the file view, the @ menu.
        alice = person_client(server, "alice")
        shown = html.unescape(
            alice.get(URLS.for_("file", session_id=alices), params={"path": str(root / "bob" / ".env")}).text
        )
        assert "outside the workspace" in shown and "BOB_SECRET" not in shown
        assert "No file matches" in alice.get(URLS.for_("mentions", session_id=alices), params={"q": ".env"}).text
        (root / "bob" / "plan.md").write_text("bob's")  # nor his changes: only hers are listed
        (root / "alice" / "hers.md").write_text("alice's")
        deadline = time.monotonic() + 20
        while "hers.md" not in (changes := alice.get(URLS.for_("changes", session_id=alices)).text):
            assert time.monotonic() < deadline, changes
            time.sleep(0.2)
        assert "plan.md" not in changes and ".env" not in changes
    finally:
        stop(server)

    server = launch(root, SCRIPTED_AGENT, **data)  # the same store: the owners are kept
    try:
        refused(start_in(server, "alice", root / "bob"), "is bob's folder")
        share(server, "bob", bobs, "alice", "watch")  # watching lets no one start an agent there
        refused(start_in(server, "alice", root / "bob"), "is bob's folder")
        share(server, "bob", bobs, "alice", "drive")
        started(start_in(server, "alice", root / "bob"))  # his session's folder, shared with her to drive
        refused(start_in(server, "alice", root), "holds bob's folder")  # still not the root that holds it
        refused(start_in(server, "carol", root / "bob"), "is bob's folder")  # shared with alice, not with carol
        admins = started(start_in(server, "root", root / "bob", ADMINS))  # an admin may, on the record
        log = person_client(server, "root", ADMINS).get(URLS.for_("audit"), params={"format": "jsonl"}).text
        rows = [json.loads(line) for line in log.splitlines() if line.strip()]
        assert any(
            row["action"] == "other-folder" and row["session"] == admins and row["detail"]["whose"] == "bob"
            for row in rows
        ), rows
    finally:
        stop(server)


CONFIG = f"""
[agents.scripted]
command = "{__import__("sys").executable}"
args = ["{AGENTS / "scripted_agent.py"}"]
"""


def test_with_person_in_the_workspace_each_person_works_in_a_folder_of_their_own(
    start_server: ServerFactory, tmp_path: Path
) -> None:
    root = tmp_path / "projects"
    config = tmp_path / "agents.toml"
    config.write_text(CONFIG + f'workspace = "{root}/{{person}}"\n')
    server = start_server(agent=None, WEBCLIENT_CONFIG=str(config), **TEAM)
    alices = started(start_in(server, "alice", ""))  # the default folder: hers, made now
    page = person_client(server, "alice").get(URLS.for_("session", session_id=alices)).text
    assert cwd_line(root / "alice") in page and (root / "alice").is_dir()
    bobs = started(start_in(server, "bob", ""))
    assert (root / "bob").is_dir()
    refused(start_in(server, "alice", root / "bob"), "another person's folder", f"yours is {root / 'alice'}")
    refused(start_in(server, "alice", root), "holds other people's folders")
    started(start_in(server, "alice", root / "alice"))
    # A hostile id gets one folder of its own inside the root, never another's or the root's parent.
    for hostile in ("../bob", "..", "bob/../alice", ".hidden", "a%2Fb"):
        started(start_in(server, hostile, ""))
    made = sorted(path.name for path in root.iterdir())
    assert made == sorted(["%2E.", "%2E.%2Fbob", "%2Ehidden", "a%252Fb", "alice", "bob", "bob%2F..%2Falice"]), made
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(["agents.toml", "projects", *_servers(tmp_path)])
    share(server, "bob", bobs, "alice", "drive")
    started(start_in(server, "alice", root / "bob"))  # a session shared with her to drive opens its folder
    refused(start_in(server, "carol", root / "bob"), "another person's folder")


def _servers(tmp_path: Path) -> list[str]:
    """What the server fixture itself keeps in ``tmp_path`` (the agent's record of what it received)."""
    return [path.name for path in tmp_path.iterdir() if path.name.startswith(("received-", "workspace-"))]


def test_person_in_the_single_agents_settings_and_in_token_mode(tmp_path: Path) -> None:
    """``--workspace`` and ``WEBCLIENT_EXTRA_ROOTS`` may name ``{person}`` too; token mode's one person has a folder
    of its own there (``webclient%3Atoken``), which no team's person can have."""
    each = tmp_path / "projects" / "{person}"
    shared = {"WEBCLIENT_EXTRA_ROOTS": str(tmp_path / "notes" / "{person}")}
    each.parent.mkdir()  # where the test's agent keeps what it received
    team = {**shared, **TEAM, "WEBCLIENT_DATA_DIR": str(tmp_path / "data")}
    server = launch(each, SCRIPTED_AGENT, **team)
    try:
        alices = started(start_in(server, "alice", ""))
        page = person_client(server, "alice").get(URLS.for_("session", session_id=alices)).text
        assert cwd_line(tmp_path / "projects" / "alice") in page
        assert (tmp_path / "notes" / "alice").is_dir()
        refused(start_in(server, "bob", tmp_path / "notes" / "alice"), "another person's folder")
        admins = started(start_in(server, "root", tmp_path / "projects" / "alice", ADMINS))
    finally:
        stop(server)
    server = launch(each, SCRIPTED_AGENT, **team)  # after a restart both may be resumed where they were
    try:
        for session_id in (alices, admins):
            page = html.unescape(
                person_client(server, "root", ADMINS).get(URLS.for_("session", session_id=session_id)).text
            )
            assert "Resume" in page and "cannot be resumed" not in page, page[page.find("resumed") - 300 :][:600]
    finally:
        stop(server)
    server = launch(each, SCRIPTED_AGENT, **shared)  # token mode
    try:
        answer = server.http().post(URLS.for_("new_session"), data={"workspace": ""}, headers={"Origin": server.url})
        assert answer.status_code == 303, answer.text[:500]
        operators = person_folder(LOCAL.id)  # token mode's person, whose id no team's sign-in may have
        assert (tmp_path / "projects" / operators).is_dir() and (tmp_path / "notes" / operators).is_dir()
    finally:
        stop(server)
