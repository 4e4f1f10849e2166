"""One file watch for the whole server: many sessions, several workspaces, and watching that fails visibly."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from tests.support.servers import ServerFactory
from tests.support.urls import URLS
from tests.support.waiting import until
from webclient.workspace.changes import ChangeTracker
from webclient.workspace.watcher import WorkspaceWatcher


def inotify_instances(pid: int) -> int:
    """How many inotify instances process `pid` holds (each is one ``anon_inode:inotify`` descriptor)."""
    count = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            count += os.readlink(f"/proc/{pid}/fd/{fd}") == "anon_inode:inotify"
        except OSError:
            continue
    return count


@pytest.mark.slow
def test_130_sessions_share_one_watch_and_the_last_one_still_sees_changes(start_server: ServerFactory) -> None:
    """A user may hold 128 inotify instances in all: one per session stopped watching at about 125 sessions."""
    server = start_server(process=True)
    sessions = 130
    with server.http() as http:
        locations = [http.post(URLS.for_("new_session")).headers["location"] for _ in range(sessions)]
        deadline = time.monotonic() + 60
        while sum(m.get("method") == "session/new" for m in server.received()) < sessions:
            assert time.monotonic() < deadline, "not every agent started"
            time.sleep(0.2)
        time.sleep(1.5)  # every session's baseline is taken before its agent starts; let the watch settle
        (server.workspace / "made-on-disk.txt").write_text("hello\n")
        deadline = time.monotonic() + 10
        while 'data-path="made-on-disk.txt"' not in http.get(f"{locations[-1]}/changes").text:
            assert time.monotonic() < deadline, "the last session never saw the change"
            time.sleep(0.1)
        held = inotify_instances(server.process.pid)
        print(f"{sessions} sessions: the server holds {held} inotify instances")
        assert held <= 2


@pytest.mark.asyncio
async def test_changes_are_routed_to_the_sessions_whose_folders_hold_them_and_survive_a_rewatch(
    tmp_path: Path,
) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    watcher = WorkspaceWatcher()
    a = ChangeTracker([first], lambda: None, watcher)
    b = ChangeTracker([second], lambda: None, watcher)
    nested = ChangeTracker([first / "sub"], lambda: None, watcher)
    try:
        await a.start()
        await until(lambda: watcher.watched == (first,))
        await b.start()  # a second folder: the watch is replaced, the old one runs until the new one is in place
        (first / "during.txt").write_text("written while the watch is replaced\n")
        await until(lambda: [c.path.name for c in a.files()] == ["during.txt"])
        await until(lambda: watcher.watched == (first, second))
        (first / "sub").mkdir()
        await nested.start()  # inside a watched folder: nothing to replace
        assert watcher.watched == (first, second)
        (second / "b.txt").write_text("b\n")
        (first / "sub" / "deep.txt").write_text("deep\n")
        await until(lambda: [c.path.name for c in b.files()] == ["b.txt"])
        await until(lambda: [c.path.name for c in nested.files()] == ["deep.txt"])
        await until(lambda: sorted(c.path.name for c in a.files()) == ["deep.txt", "during.txt"])
        assert [c.path.name for c in b.files()] == ["b.txt"]
        assert a.not_watching is None and b.not_watching is None
    finally:
        for tracker in (a, b, nested):
            await tracker.close()
    assert watcher.watched == ()
    await watcher.close()


@pytest.mark.asyncio
async def test_a_tracker_that_cannot_watch_says_why_and_looks_at_the_disk_when_asked(tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    watcher = WorkspaceWatcher()
    tracker = ChangeTracker([gone], lambda: None, watcher)
    try:
        await tracker.start()
        assert tracker.not_watching == "its folder does not exist"
        gone.mkdir()
        (gone / "new.txt").write_text("new\n")
        await tracker.look_if_not_watching()
        assert [(c.path.name, c.status) for c in tracker.files()] == [("new.txt", "added")]
        # The next change of subscribers tries again, and now the folder is there to watch.
        other = ChangeTracker([gone], lambda: None, watcher)
        await other.start()
        await until(lambda: tracker.not_watching is None)
        (gone / "later.txt").write_text("later\n")
        await until(lambda: sorted(c.path.name for c in tracker.files()) == ["later.txt", "new.txt"])
        await other.close()
    finally:
        await tracker.close()
        await watcher.close()


def test_the_changes_view_says_when_it_is_not_watching_and_looks_when_opened(start_server: ServerFactory) -> None:
    server = start_server()
    server.workspace.rmdir()  # a workspace folder that is gone cannot be watched
    with server.http() as http:
        location = http.post(URLS.for_("new_session")).headers["location"]
        deadline = time.monotonic() + 10
        while 'data-role="not-watching"' not in (page := http.get(f"{location}/changes").text):
            assert time.monotonic() < deadline, "the Changes view never said it is not watching"
            time.sleep(0.1)
        assert "Not watching the workspace (its folder does not exist)" in page
        server.workspace.mkdir()
        (server.workspace / "back.txt").write_text("back\n")
        assert 'data-path="back.txt"' in http.get(f"{location}/changes").text


@pytest.mark.slow  # waits out the watch's rebuild, seconds
@pytest.mark.asyncio
async def test_a_file_name_that_is_not_utf8_does_not_stop_watching_for_other_sessions(tmp_path: Path) -> None:
    """watchfiles cannot report such a name and ends its watch: the shared watch must come back by itself."""
    hostile, other = tmp_path / "hostile", tmp_path / "other"
    hostile.mkdir()
    other.mkdir()
    watcher = WorkspaceWatcher()
    a = ChangeTracker([hostile], lambda: None, watcher)
    b = ChangeTracker([other], lambda: None, watcher)
    try:
        await a.start()
        await b.start()
        await until(lambda: watcher.watched == (hostile, other))
        (hostile / "ready.txt").write_text("in place\n")
        await until(lambda: [c.path.name for c in a.files()] == ["ready.txt"])
        with open(os.path.join(os.fsencode(hostile), b"bad-\xff-name.txt"), "w") as bad:
            bad.write("odd name\n")
        await asyncio.sleep(0.5)
        (other / "after.txt").write_text("written after the odd name\n")
        await until(lambda: [c.path.name for c in b.files()] == ["after.txt"], timeout=10)
        (other / "later.txt").write_text("and later\n")
        await until(lambda: sorted(c.path.name for c in b.files()) == ["after.txt", "later.txt"], timeout=10)
        await until(lambda: b.not_watching is None, timeout=10)
    finally:
        for tracker in (a, b):
            await tracker.close()
        await watcher.close()


@pytest.mark.asyncio
async def test_200_workspaces_started_at_once_are_watched_by_one_instance(tmp_path: Path) -> None:
    """A watch replaced at each new workspace held an instance per replacement under way: 128 (the limit) at 200."""
    folders = [tmp_path / f"w{n:03}" for n in range(200)]
    for folder in folders:
        (folder / "src").mkdir(parents=True)
    watcher = WorkspaceWatcher()
    trackers = [ChangeTracker([folder], lambda: None, watcher) for folder in folders]
    before = inotify_instances(os.getpid())  # the test process's own, if any
    try:
        await asyncio.gather(*(tracker.start() for tracker in trackers))
        assert inotify_instances(os.getpid()) <= before + 1
        await until(lambda: len(watcher.watched) == 200)
        assert inotify_instances(os.getpid()) == before + 1
        for folder in (folders[0], folders[-1]):
            (folder / "src" / "new.txt").write_text("new\n")
        await until(lambda: [c.path.name for c in trackers[-1].files()] == ["new.txt"])
        await until(lambda: [c.path.name for c in trackers[0].files()] == ["new.txt"])
        assert all(not tracker.files() for tracker in trackers[1:-1])
        assert all(tracker.not_watching is None for tracker in trackers)
    finally:
        for tracker in trackers:
            await tracker.close()
    assert watcher.watched == () and inotify_instances(os.getpid()) == before
    await watcher.close()


@pytest.mark.asyncio
async def test_folders_made_and_moved_after_the_watch_are_watched_and_what_leaves_is_seen_gone(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "tree" / "deeper").mkdir(parents=True)
    (outside / "tree" / "deeper" / "brought.txt").write_text("brought in\n")
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "old" / "inner").mkdir(parents=True)
    (workspace / "old" / "inner" / "kept.txt").write_text("in the baseline\n")
    watcher = WorkspaceWatcher()
    tracker = ChangeTracker([workspace], lambda: None, watcher)
    try:
        await tracker.start()
        await until(lambda: watcher.watched == (workspace,))
        made = workspace / "a" / "b" / "c"
        made.mkdir(parents=True)  # written into before its watch can be in place
        (made / "quick.txt").write_text("quick\n")
        (outside / "tree").rename(workspace / "tree")  # a folder moved in, with what it holds
        await until(lambda: {c.path.name for c in tracker.files()} == {"quick.txt", "brought.txt"})
        (made / "later.txt").write_text("later\n")  # the new folder is watched now
        (workspace / "tree" / "deeper" / "brought.txt").write_text("changed\n")
        (workspace / "old").rename(outside / "old")  # a folder moved away: its file is gone from here
        expected = {("quick.txt", "added"), ("brought.txt", "added"), ("later.txt", "added"), ("kept.txt", "deleted")}
        await until(lambda: {(c.path.name, c.status) for c in tracker.files()} == expected)
        (outside / "old" / "inner" / "after.txt").write_text("written where it went\n")
        (workspace / "last.txt").write_text("last\n")
        await until(lambda: "last.txt" in {c.path.name for c in tracker.files()})
        assert "after.txt" not in {c.path.name for c in tracker.files()}  # its watch went with it
    finally:
        await tracker.close()
        await watcher.close()


@pytest.mark.asyncio
async def test_a_watched_folder_that_is_deleted_says_so_and_is_watched_again_when_it_is_back(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    watcher = WorkspaceWatcher()
    tracker = ChangeTracker([workspace], lambda: None, watcher)
    try:
        await tracker.start()
        await until(lambda: watcher.watched == (workspace,))
        workspace.rmdir()
        await until(lambda: tracker.not_watching == "its folder does not exist")
        workspace.mkdir()
        (workspace / "back.txt").write_text("back\n")
        await until(lambda: tracker.not_watching is None)  # looked for again after RETRY_SECONDS
        await until(lambda: [c.path.name for c in tracker.files()] == ["back.txt"])
    finally:
        await tracker.close()
        await watcher.close()
