"""The inotify instance the workspace watch holds: folders watched one at a time, events read as they come."""

from __future__ import annotations

import errno
import os
import select
from pathlib import Path

import pytest

from webclient.workspace import inotify
from webclient.workspace.inotify import Inotify


def events_within(instance: Inotify, seconds: float = 5) -> list[inotify.Event]:
    select.select([instance.fd], [], [], seconds)
    return instance.read()


def test_a_folder_watched_reports_its_entries_by_name_not_utf8_ones_included(tmp_path: Path) -> None:
    instance = Inotify()
    try:
        watch = instance.add_watch(tmp_path)
        assert instance.add_watch(tmp_path) == watch  # one watch per folder, however often it is asked
        assert instance.read() == []  # nothing yet, and no blocking
        (tmp_path / "made.txt").write_text("x\n")
        with open(os.path.join(os.fsencode(tmp_path), b"odd-\xff.txt"), "w"):
            pass
        (tmp_path / "sub").mkdir()
        seen = events_within(instance)
        while not any(event.name == b"sub" for event in seen):
            seen += events_within(instance)
        assert {event.watch for event in seen} == {watch}
        assert [e.name for e in seen if e.mask & inotify.IN_CREATE] == [b"made.txt", b"odd-\xff.txt", b"sub"]
        assert [e.name for e in seen if e.mask & inotify.IN_ISDIR] == [b"sub"]
        instance.rm_watch(watch)
        assert any(event.mask & inotify.IN_IGNORED for event in events_within(instance))
    finally:
        instance.close()
    assert instance.fd == -1


def test_a_folder_that_is_not_there_cannot_be_watched(tmp_path: Path) -> None:
    instance = Inotify()
    try:
        with pytest.raises(OSError) as gone:
            instance.add_watch(tmp_path / "gone")
        assert gone.value.errno == errno.ENOENT and gone.value.filename == str(tmp_path / "gone")
        (tmp_path / "a-file").write_text("")
        with pytest.raises(OSError) as not_a_folder:
            instance.add_watch(tmp_path / "a-file")
        assert not_a_folder.value.errno == errno.ENOTDIR
    finally:
        instance.close()


def test_the_kernels_limits_are_named_as_such() -> None:
    assert inotify.explain(OSError(errno.ENOSPC, "No space left on device")).startswith(
        "the system's limit on file watches was reached: "
    )
    assert inotify.explain(OSError(errno.ENOENT, "No such file or directory", "/w")) == (
        "[Errno 2] No such file or directory: '/w'"
    )
