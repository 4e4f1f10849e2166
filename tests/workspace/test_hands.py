"""The agent's hands through a real session: fs/* and terminal/* requests from a real agent process,
answered inside the workspace, and what the agent receives back."""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from tests.support.acp_schema import validate
from tests.support.probes import processes_with
from tests.support.servers import AGENTS, ServerFactory
from tests.support.urls import URLS
from tests.support.waiting import received, until
from webclient.acp.agent import AcpAgent
from webclient.render.panels import change_diff
from webclient.render.rendering import Renderer
from webclient.render.review import review_panel
from webclient.render.urls import Urls
from webclient.session.agent_entry import AgentEntry
from webclient.session.agent_spec import AgentSpec
from webclient.session.core import Session
from webclient.viewmodel.entries import FileChange, MessageEntry
from webclient.workspace.paths import FileAccess


@contextlib.asynccontextmanager
async def hands_session(
    tmp_path: Path, access: FileAccess = "read-write", terminals: bool = True
) -> AsyncIterator[tuple[Session, Path, Path]]:
    """A session on the scripted agent in ``tmp_path/ws``, with a secret file next to the workspace."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (tmp_path / "secret.txt").write_text("TOP-SECRET\n")
    record = tmp_path / "received.jsonl"
    spec = AgentSpec(
        AgentEntry(
            "agent",
            [sys.executable, str(AGENTS / "scripted_agent.py")],
            env={"RECORD_FILE": str(record)},
            file_access=access,
            terminals=terminals,
        ),
        workspace,
    )
    session = Session(spec, AcpAgent)
    session.start()
    try:
        await until(lambda: session.lifecycle.ready)
        yield session, workspace, record
    finally:
        await session.close()


async def run(session: Session, prompt: str, timeout: float = 10) -> str:
    """Run one prompt to its end; the agent's last message."""
    assert session.submit_prompt(prompt, uuid.uuid4().hex)
    await until(lambda: session.turns.turn_state == "idle", timeout)
    messages = [e for e in session.thread if isinstance(e, MessageEntry) and e.kind == "agent-message"]
    return messages[-1].text if messages else ""


# -- files ----------------------------------------------------------------------------------------

ESCAPES = [
    "/etc/passwd",
    "{outside}/secret.txt",
    "{ws}/../secret.txt",
    "{ws}/sub/../../secret.txt",
    "{ws}/link-out",
    "{ws}/dir-link/secret.txt",
    "/proc/self/environ",
    "secret.txt",
    "../secret.txt",
]


@pytest.mark.asyncio
@pytest.mark.parametrize("template", ESCAPES)
async def test_reads_outside_the_workspace_are_refused_with_a_reason(tmp_path: Path, template: str) -> None:
    async with hands_session(tmp_path) as (session, workspace, record):
        (workspace / "link-out").symlink_to(tmp_path / "secret.txt")
        (workspace / "dir-link").symlink_to(tmp_path)
        path = template.format(ws=workspace, outside=tmp_path)
        said = json.loads(await run(session, f"fs read {path}"))
        assert "result" not in said, said
        assert said["error"]["code"] == -32602
        assert len(said["error"]["message"]) > 20  # a sentence that says why
        assert "TOP-SECRET" not in record.read_text()


@pytest.mark.asyncio
@pytest.mark.parametrize("template", ["{outside}/evil.txt", "{ws}/../evil.txt", "{ws}/dir-link/evil.txt", "evil.txt"])
async def test_writes_outside_the_workspace_are_refused_and_create_nothing(tmp_path: Path, template: str) -> None:
    async with hands_session(tmp_path) as (session, workspace, _record):
        (workspace / "dir-link").symlink_to(tmp_path)
        before = sorted(p.name for p in tmp_path.iterdir())
        said = json.loads(await run(session, f"fs write {template.format(ws=workspace, outside=tmp_path)} pwned"))
        assert said["error"]["code"] == -32602
        assert sorted(p.name for p in tmp_path.iterdir()) == before
        assert not any(p.name == "evil.txt" for p in tmp_path.rglob("*"))


@pytest.mark.asyncio
async def test_a_write_inside_creates_folders_and_becomes_a_change_the_user_can_open(tmp_path: Path) -> None:
    async with hands_session(tmp_path) as (session, workspace, _record):
        (workspace / "old.txt").write_text("one\r\ntwo\r\n")
        said = json.loads(await run(session, f"fs write {workspace}/new/deep/a.txt hello"))
        assert said == {"result": {}}
        assert (workspace / "new/deep/a.txt").read_text() == "hello"
        said = json.loads(await run(session, f"fs read {workspace}/old.txt"))
        assert said["result"]["content"] == "one\ntwo\n"
        await run(session, f"fs write {workspace}/old.txt one changed")
        assert (workspace / "old.txt").read_bytes() == b"one changed"
        changes = [e for e in session.thread if isinstance(e, FileChange)]
        assert [(c.display_path, c.old_text, c.new_text) for c in changes] == [
            ("new/deep/a.txt", None, "hello"),
            ("old.txt", "one\ntwo\n", "one changed"),
        ]
        await until(lambda: len(session.changes.files()) == 2)
        assert {(str(c.path.relative_to(workspace)), c.status) for c in session.changes.files()} == {
            ("new/deep/a.txt", "added"),
            ("old.txt", "added"),  # it came after the session began
        }


@pytest.mark.asyncio
async def test_changes_made_directly_on_disk_are_listed_and_restored_files_drop_out(tmp_path: Path) -> None:
    workspace_files = tmp_path / "ws2"
    workspace_files.mkdir()
    (workspace_files / "keep.py").write_text("x = 1\n")
    (workspace_files / "gone.py").write_text("y = 2\n")
    spec = AgentSpec(AgentEntry("agent", [sys.executable, str(AGENTS / "scripted_agent.py")]), workspace_files)
    session = Session(spec, AcpAgent)
    session.start()
    try:
        await until(lambda: session.lifecycle.ready)
        (workspace_files / "keep.py").write_text("x = 2\n")
        (workspace_files / "gone.py").unlink()
        (workspace_files / "made.py").write_text("z = 3\n")
        (workspace_files / "node_modules").mkdir()
        (workspace_files / "node_modules" / "ignored.js").write_text("1")
        await until(lambda: len(session.changes.files()) == 3)
        by_name = {c.path.name: (c.status, c.added, c.removed) for c in session.changes.files()}
        assert by_name == {"keep.py": ("modified", 1, 1), "gone.py": ("deleted", 0, 1), "made.py": ("added", 1, 0)}
        (workspace_files / "keep.py").write_text("x = 1\n")
        await until(lambda: len(session.changes.files()) == 2)
    finally:
        await session.close()


@pytest.mark.asyncio
async def test_capabilities_follow_the_agents_settings_and_validate(tmp_path: Path) -> None:
    async with hands_session(tmp_path, access="read-only", terminals=False) as (session, workspace, record):
        said = json.loads(await run(session, f"fs write {workspace}/a.txt no"))
        assert said["error"]["code"] == -32601
        assert not (workspace / "a.txt").exists()
        initialize = next(m for m in received(record) if m.get("method") == "initialize")["params"]
        validate(initialize, "InitializeRequest")
        capabilities = initialize["clientCapabilities"]
        assert capabilities["fs"] == {"readTextFile": True, "writeTextFile": False}
        assert capabilities["terminal"] is False
        assert capabilities["_meta"]["terminal_output"] is True


# -- terminals ------------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_a_command_runs_in_the_workspace_and_its_output_reaches_agent_and_page(tmp_path: Path) -> None:
    async with hands_session(tmp_path) as (session, _workspace, _record):
        said = json.loads(await run(session, "run 3"))
        assert said == {"exit": {"exitCode": 0, "signal": None}, "lines": 3}
        term = session.thread.terminals.by_number(1)
        assert term is not None and term.exited and term.released and term.exit_code == 0
        assert term.screen.plain_text().split() == ["line", "0", "done", "line", "1", "done", "line", "2", "done"]
        assert any(run.style.fg == "green" for line in term.screen.screen() for run in line)


@pytest.mark.asyncio
@pytest.mark.parametrize("action", ["kill", "release"])
async def test_kill_and_release_leave_no_process_behind(tmp_path: Path, action: str) -> None:
    mark = f"mark-{uuid.uuid4().hex}"
    async with hands_session(tmp_path) as (session, _workspace, _record):
        assert session.submit_prompt(f"hold {mark} {action}", "n1")
        await until(lambda: len(processes_with(mark)) >= 2)
        await until(lambda: session.turns.turn_state == "idle")
        assert processes_with(mark) == []
        said = session.thread.entries[-1]
        assert isinstance(said, MessageEntry)
        if action == "kill":
            assert json.loads(said.text) == {"exitCode": None, "signal": "SIGTERM"}
        else:  # a released terminal is gone for the agent, but the page keeps showing it
            assert json.loads(said.text)["code"] == -32602
            term = session.thread.terminals.by_number(1)
            assert term is not None and term.released


@pytest.mark.asyncio
async def test_ending_the_session_leaves_no_process_behind(tmp_path: Path) -> None:
    mark = f"mark-{uuid.uuid4().hex}"
    async with hands_session(tmp_path) as (session, _workspace, _record):
        assert session.submit_prompt(f"hold {mark} wait", "n1")
        await until(lambda: len(processes_with(mark)) >= 2)
    await until(lambda: processes_with(mark) == [])


@pytest.mark.process
def test_stopping_the_server_leaves_no_process_behind(start_server: ServerFactory) -> None:
    mark = f"mark-{uuid.uuid4().hex}"
    server = start_server(process=True)
    with server.http() as http:
        location = http.post(URLS.for_("new_session")).headers["location"]
        server.wait_received(lambda m: m.get("method") == "session/new")
        deadline = time.monotonic() + 10
        while not any(m.get("method") == "session/prompt" for m in server.received()):
            assert time.monotonic() < deadline, "the prompt never reached the agent"
            http.post(f"{location}/prompt", data={"prompt": f"hold {mark} wait", "nonce": uuid.uuid4().hex})
            time.sleep(0.1)
    deadline = time.monotonic() + 10
    while len(processes_with(mark)) < 2:
        assert time.monotonic() < deadline, "the command never started"
        time.sleep(0.05)
    server.process.terminate()
    server.process.wait(timeout=15)
    deadline = time.monotonic() + 5
    while processes_with(mark):
        assert time.monotonic() < deadline, f"left behind: {processes_with(mark)}"
        time.sleep(0.05)


@pytest.mark.asyncio
async def test_changes_to_non_utf8_and_binary_files_are_shown_as_such(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "latin.txt").write_bytes("café crème\r\nà bientôt\r\n".encode("cp1252"))
    (workspace / "blob.bin").write_bytes(b"\x00\x01\x02" * 100)
    session = Session(
        AgentSpec(AgentEntry("agent", [sys.executable, str(AGENTS / "scripted_agent.py")]), workspace), AcpAgent
    )
    session.start()
    try:
        await until(lambda: session.lifecycle.ready)
        (workspace / "latin.txt").write_bytes("café noir\r\nà bientôt\r\n".encode("cp1252"))
        (workspace / "blob.bin").write_bytes(b"\x00\x03" * 100)
        await until(lambda: len(session.changes.files()) == 2)
        latin = change_diff(session, "latin.txt")
        assert latin is not None and latin.diff is not None
        assert (latin.diff.added, latin.diff.removed) == (1, 1)
        html = Renderer().page(
            "_change_panel.html",
            session=session,
            panel=review_panel(session, "latin.txt"),
            url="/x",
            urls=Urls(),
            diff_mode="unified",
            may_review=True,
        )
        rows = [row.get_text() for row in BeautifulSoup(html, "html.parser").select("tr")]
        assert "1café crème" in rows and "1café noir" in rows
        blob = change_diff(session, "blob.bin")
        assert blob is not None and blob.diff is None and blob.error is not None
        assert "not a text file" in blob.error
    finally:
        await session.close()


@pytest.mark.asyncio
async def test_a_terminal_runs_in_the_folder_that_was_checked_even_if_it_becomes_a_symlink(tmp_path: Path) -> None:
    """A thread swaps the terminal's cwd for a symlink to a folder outside, over and over, while the agent starts
    `pwd -P` there 200 times: each command runs inside the workspace or is refused, never outside."""
    workspace, outside = tmp_path / "ws", tmp_path / "outside"
    workspace.mkdir()
    outside.mkdir()
    sub, parked = workspace / "sub", workspace / "parked"
    sub.mkdir()
    stop = threading.Event()

    def swap() -> None:
        while not stop.is_set():
            os.rename(sub, parked)
            os.symlink(outside, sub)
            time.sleep(0.0005)
            os.unlink(sub)
            os.rename(parked, sub)
            time.sleep(0.0005)

    spec = AgentSpec(AgentEntry("agent", [sys.executable, str(AGENTS / "terminal_agent.py")]), workspace)
    session = Session(spec, AcpAgent)
    session.start()
    swapper = threading.Thread(target=swap, daemon=True)
    try:
        await until(lambda: session.lifecycle.ready)
        swapper.start()
        seen = json.loads(await run(session, f"cwd-race 200 {sub}", timeout=90))
    finally:
        stop.set()
        swapper.join()
        await session.close()
    ran = [where for where in seen if where != "refused"]
    escaped = [where for where in ran if not Path(where).is_relative_to(workspace)]
    print(f"cwd race: {len(seen)} attempts, {len(ran)} ran, {len(escaped)} outside the workspace")
    assert len(seen) == 200 and ran, seen
    assert escaped == []
