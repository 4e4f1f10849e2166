"""Tests for webclient.workspace.paths and the open in webclient.workspace.no_follow: real files, real symlinks,
FIFOs and sockets in tmp_path; no mocks.

The escape corpus tries every way out of the workspace we know of, reading and writing, and proves after each
attempt that nothing outside changed (the tree beside the workspace is snapshotted before and after).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import socket
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.probes import descriptors_held
from webclient.workspace.no_follow import read_file, write_file_atomic
from webclient.workspace.paths import FileTooLarge, PathRefused, Workspace, show

SECRET = b"SECRET outside the workspace\n"
# New files an escape might try to create outside tmp_path; each test checks they never appear.
STRAY = f"acp-webclient-test-{secrets.token_hex(8)}"
STRAY_FILES = [Path("/etc") / STRAY, Path("/tmp") / STRAY, Path("/tmp") / STRAY / "x"]


@dataclass
class Layout:
    base: Path
    ws: Path
    out: Path


@pytest.fixture
def layout(tmp_path: Path) -> Iterator[Layout]:
    """tmp_path/ws is the workspace; everything else in tmp_path is outside and must stay untouched."""
    base = tmp_path
    ws, out = base / "ws", base / "outside"
    (ws / "sub").mkdir(parents=True)
    (ws / "inner").mkdir()
    (ws / "a.txt").write_text("inside\n")
    (ws / "sub" / "b.txt").write_text("inside b\n")
    (out / "sub").mkdir(parents=True)
    (out / "secret.txt").write_bytes(SECRET)
    (out / "sub" / "b.txt").write_bytes(SECRET)
    (base / "ws-evil").mkdir()
    (base / "ws-evil" / "x").write_bytes(SECRET)
    (base / "wsx").write_bytes(SECRET)
    links = {
        "link_file": out / "secret.txt",
        "link_rel": Path("../outside/secret.txt"),
        "link_dir": out,
        "chain1": ws / "chain2",
        "chain2": Path("chain3"),
        "chain3": out / "secret.txt",
        "loop": Path("loop"),
        "loop_a": Path("loop_b"),
        "loop_b": Path("loop_a"),
        "dangling": out / "new.txt",
        "dangling_dir": out / "newdir",
        "link_evil": Path("../ws-evil"),
        "inner/up": out / "sub",
        "link_parent": Path(".."),
        "link_root": Path("/"),
        "link_proc": Path(f"/proc/self/root{out}/secret.txt"),
        "link_zero": Path("/dev/zero"),
        "link_inside": Path("sub/b.txt"),
    }
    for name, target in links.items():
        (ws / name).symlink_to(target)
    os.mkfifo(ws / "fifo")
    yield Layout(base, ws, out)
    for stray in STRAY_FILES:
        assert not stray.exists(), f"an escape created {stray}"


def snapshot(layout: Layout) -> dict[str, tuple[str, bytes | str, int]]:
    """Everything beside the workspace: type, contents or link target, and permission bits."""
    seen: dict[str, tuple[str, bytes | str, int]] = {}
    for dirpath, dirnames, filenames in os.walk(layout.base):
        dirnames[:] = [d for d in dirnames if Path(dirpath, d) != layout.ws]
        for name in dirnames + filenames:
            path = Path(dirpath, name)
            st = path.lstat()
            key = str(path.relative_to(layout.base))
            if stat.S_ISLNK(st.st_mode):
                seen[key] = ("link", os.readlink(path), 0)
            elif stat.S_ISREG(st.st_mode):
                seen[key] = ("file", path.read_bytes(), stat.S_IMODE(st.st_mode))
            else:
                seen[key] = ("other", b"", stat.S_IMODE(st.st_mode))
    return seen


def fill(template: str, layout: Layout) -> str:
    return template.format(ws=layout.ws, out=layout.out, base=layout.base, stray=STRAY)


# What must happen: REFUSED, both refused; INSIDE, an odd but ordinary name inside (nothing to read, the write
# lands inside); MISSING, nothing to read there and nothing may be created there.
REFUSED, INSIDE, MISSING = "refused", "inside", "missing"

ESCAPES = [
    # `..` in many forms
    pytest.param("{ws}/../../../../../../../etc/passwd", REFUSED, id="dotdot-etc-passwd"),
    pytest.param("{ws}/../outside/secret.txt", REFUSED, id="dotdot-sibling"),
    pytest.param("{ws}/sub/../../outside/secret.txt", REFUSED, id="dotdot-nested"),
    pytest.param("{ws}/new/../../outside/secret.txt", REFUSED, id="dotdot-through-missing"),
    pytest.param("{ws}/./sub/./../.././outside/./secret.txt", REFUSED, id="dotdot-with-dots"),
    pytest.param("{ws}//..//outside//secret.txt", REFUSED, id="dotdot-double-slashes"),
    pytest.param("{ws}/..", REFUSED, id="dotdot-trailing"),
    pytest.param("{ws}/sub/../..", REFUSED, id="dotdot-trailing-nested"),
    pytest.param("{ws}/../ws-evil/x", REFUSED, id="dotdot-prefix-sibling"),
    pytest.param("{ws}/../{stray}", REFUSED, id="dotdot-new-file"),
    # absolute paths elsewhere
    pytest.param("/etc/passwd", REFUSED, id="abs-etc-passwd"),
    pytest.param("/etc/shadow", REFUSED, id="abs-etc-shadow"),
    pytest.param("/etc/{stray}", REFUSED, id="abs-etc-new"),
    pytest.param("/tmp/{stray}", REFUSED, id="abs-tmp-other"),
    pytest.param("/tmp/{stray}/x", REFUSED, id="abs-tmp-other-nested"),
    pytest.param("{out}/secret.txt", REFUSED, id="abs-outside"),
    pytest.param("{out}/new.txt", REFUSED, id="abs-outside-new"),
    pytest.param("/", REFUSED, id="abs-root"),
    pytest.param("{base}/ws-evil/x", REFUSED, id="prefix-sibling"),
    pytest.param("{ws}-evil/new.txt", REFUSED, id="prefix-sibling-new"),
    pytest.param("{ws}x", REFUSED, id="prefix-file"),
    # relative paths
    pytest.param("a.txt", REFUSED, id="relative"),
    pytest.param("./a.txt", REFUSED, id="relative-dot"),
    pytest.param("../outside/secret.txt", REFUSED, id="relative-dotdot"),
    pytest.param("~/x", REFUSED, id="relative-tilde"),
    pytest.param("~root/.bashrc", REFUSED, id="relative-tilde-user"),
    pytest.param(" /etc/passwd", REFUSED, id="relative-leading-space"),
    # symlinks planted inside the workspace
    pytest.param("{ws}/link_file", REFUSED, id="symlink-file"),
    pytest.param("{ws}/link_rel", REFUSED, id="symlink-file-relative"),
    pytest.param("{ws}/link_dir/secret.txt", REFUSED, id="symlink-dir"),
    pytest.param("{ws}/link_dir/new.txt", REFUSED, id="symlink-dir-new-file"),
    pytest.param("{ws}/link_dir/newdir/deeper/new.txt", REFUSED, id="symlink-dir-new-folders"),
    pytest.param("{ws}/chain1", REFUSED, id="symlink-chain"),
    pytest.param("{ws}/loop", REFUSED, id="symlink-loop"),
    pytest.param("{ws}/loop_a", REFUSED, id="symlink-loop-pair"),
    pytest.param("{ws}/loop/x.txt", REFUSED, id="symlink-loop-below"),
    pytest.param("{ws}/dangling", REFUSED, id="symlink-dangling"),
    pytest.param("{ws}/dangling_dir/new.txt", REFUSED, id="symlink-dangling-dir"),
    pytest.param("{ws}/inner/up/../secret.txt", REFUSED, id="symlink-then-dotdot"),
    pytest.param("{ws}/link_evil/x", REFUSED, id="symlink-prefix-sibling"),
    pytest.param("{ws}/link_parent/outside/secret.txt", REFUSED, id="symlink-parent"),
    pytest.param("{ws}/link_root/etc/passwd", REFUSED, id="symlink-to-root"),
    pytest.param("{ws}/link_proc", REFUSED, id="symlink-through-proc"),
    pytest.param("{ws}/link_zero", REFUSED, id="symlink-dev-zero"),
    # /proc and /dev
    pytest.param("/proc/self/environ", REFUSED, id="proc-environ"),
    pytest.param("/proc/self/root{out}/secret.txt", REFUSED, id="proc-root"),
    pytest.param("/proc/self/root{ws}/a.txt", REFUSED, id="proc-root-into-workspace"),
    pytest.param("/proc/self/cwd/pyproject.toml", REFUSED, id="proc-cwd"),
    pytest.param("/proc/self/fd/0", REFUSED, id="proc-fd"),
    pytest.param("/dev/zero", REFUSED, id="dev-zero"),
    pytest.param("/dev/null", REFUSED, id="dev-null"),
    pytest.param("/dev/stdin", REFUSED, id="dev-stdin"),
    # not regular files inside
    pytest.param("{ws}/fifo", REFUSED, id="fifo"),
    pytest.param("{ws}/sub", REFUSED, id="directory"),
    pytest.param("{ws}", REFUSED, id="root-itself"),
    pytest.param("{ws}/", REFUSED, id="root-trailing-slash"),
    pytest.param("{ws}/a.txt/..", REFUSED, id="file-then-dotdot"),
    pytest.param("{ws}/fifo/x.txt", MISSING, id="fifo-as-folder"),
    pytest.param("{ws}/a.txt/x.txt", MISSING, id="file-as-folder"),
    # malformed strings
    pytest.param("", REFUSED, id="empty"),
    pytest.param("{ws}/a.txt\0.png", REFUSED, id="nul"),
    pytest.param("\0", REFUSED, id="nul-only"),
    pytest.param("{ws}/\0/../../outside/secret.txt", REFUSED, id="nul-then-dotdot"),
    pytest.param("{ws}/" + "a/" * 2100 + "x", REFUSED, id="too-long"),
    pytest.param("{ws}/" + "a" * 256, REFUSED, id="long-component"),
    pytest.param("{ws}/" + "é" * 128, REFUSED, id="long-component-utf8"),
    pytest.param("{ws}/\udcff.txt", REFUSED, id="lone-surrogate-escape"),
    pytest.param("{ws}/\ud800", REFUSED, id="lone-surrogate-high"),
    pytest.param("{ws}/\udcff/../../outside/secret.txt", REFUSED, id="lone-surrogate-dotdot"),
    # unicode lookalikes: either refused or an ordinary (odd) name inside the workspace
    pytest.param("{ws}\u2215..\u2215outside\u2215secret.txt", REFUSED, id="lookalike-division-slash"),
    pytest.param("{ws}\uff0f..\uff0foutside\uff0fsecret.txt", REFUSED, id="lookalike-fullwidth-slash"),
    pytest.param("{ws}/\uff0e\uff0e/outside/secret.txt", INSIDE, id="lookalike-fullwidth-dots"),
    pytest.param("{ws}/\u2025/outside/secret.txt", INSIDE, id="lookalike-two-dot-leader"),
    pytest.param("{ws}/.\u200b./outside/secret.txt", INSIDE, id="lookalike-zero-width-space"),
    pytest.param("{ws}/..\u0338/outside/secret.txt", INSIDE, id="lookalike-combining-mark"),
]

# Writes are not even attempted on these: a regression must not be able to damage the machine.
SYSTEM_FILES = {"/etc/passwd", "/etc/shadow", "/proc/self/environ", "/dev/zero", "/dev/stdin", "/proc/self/fd/0", "/"}

NOT_STRINGS = [None, 42, 4.2, True, ["/etc/passwd"], {"path": "/etc/passwd"}, b"/etc/passwd", Path("/etc/passwd")]


def test_escape_corpus_is_large() -> None:
    assert len(ESCAPES) >= 50


@pytest.mark.timeout(10)
@pytest.mark.parametrize(("template", "expected"), ESCAPES)
def test_escape_read_reads_nothing_outside(layout: Layout, template: str, expected: str) -> None:
    ws = Workspace([layout.ws])
    before = snapshot(layout)
    path = fill(template, layout)
    with pytest.raises((PathRefused, FileNotFoundError)) as caught:
        ws.read_bytes(path, max_bytes=1 << 20)
    if expected == REFUSED:
        assert caught.type is PathRefused
        assert str(caught.value).endswith(".") and "\n" not in str(caught.value)
    assert snapshot(layout) == before


@pytest.mark.timeout(10)
@pytest.mark.parametrize(("template", "expected"), ESCAPES)
def test_escape_write_writes_nothing_outside(layout: Layout, template: str, expected: str) -> None:
    path = fill(template, layout)
    if path in SYSTEM_FILES:
        pytest.skip("not written even as an attempt")
    ws = Workspace([layout.ws])
    before = snapshot(layout)
    if expected in (REFUSED, MISSING):
        with pytest.raises(PathRefused):
            ws.write_bytes_atomic(path, b"PWNED")
    else:
        written = ws.write_bytes_atomic(path, b"harmless")
        assert written.is_relative_to(layout.ws) and written.read_bytes() == b"harmless"
    assert snapshot(layout) == before


@pytest.mark.parametrize("value", NOT_STRINGS, ids=lambda value: type(value).__name__)
def test_non_string_path_is_refused(layout: Layout, value: object) -> None:
    ws = Workspace([layout.ws])
    before = snapshot(layout)
    with pytest.raises(PathRefused, match="must be a string"):
        ws.read_bytes(value, max_bytes=100)
    with pytest.raises(PathRefused, match="must be a string"):
        ws.write_bytes_atomic(value, b"PWNED")
    assert snapshot(layout) == before


@pytest.mark.parametrize(
    ("template", "message"),
    [
        ("a.txt", "ACP requires absolute paths"),
        ("", "empty"),
        ("{ws}/a\0b", "NUL"),
        ("{ws}/\udcff", "not valid UTF-8"),
        ("{ws}/" + "a" * 300, "longer than 255 bytes"),
        ("{ws}/" + "a/" * 2100, "too long"),
        ("/etc/passwd", "outside the workspace"),
        ("{ws}/link_dir/secret.txt", "a symlink leads outside the workspace"),
        ("{ws}/loop", "symlink loop"),
        ("{ws}/sub", "is a directory"),
        ("{ws}/fifo", "named pipe"),
    ],
)
def test_refusal_message_says_why(layout: Layout, template: str, message: str) -> None:
    with pytest.raises(PathRefused, match=message):
        Workspace([layout.ws]).check(fill(template, layout))


def test_refusal_message_shortens_and_escapes_the_path(layout: Layout) -> None:
    with pytest.raises(PathRefused) as caught:
        Workspace([layout.ws]).check("/etc/" + "\x1b[31m" * 500)
    message = str(caught.value)
    assert len(message) < 400 and "\x1b" not in message and "\\x1b" in message
    assert show("/ws/a.txt") == "/ws/a.txt"
    assert show("/ws/\x00") == "'/ws/\\x00'"


@pytest.mark.parametrize("access", ["read-only", "none"])
def test_write_refused_without_write_access(layout: Layout, access: str) -> None:
    ws = Workspace([layout.ws], access)  # type: ignore[arg-type]
    with pytest.raises(PathRefused, match="may only read" if access == "read-only" else "turned off"):
        ws.write_bytes_atomic(str(layout.ws / "a.txt"), b"changed")
    with pytest.raises(PathRefused):
        ws.write_bytes_atomic(str(layout.ws / "new.txt"), b"new")
    assert (layout.ws / "a.txt").read_text() == "inside\n"
    assert not (layout.ws / "new.txt").exists()


def test_read_only_access_reads_and_none_refuses(layout: Layout) -> None:
    assert Workspace([layout.ws], "read-only").read_bytes(str(layout.ws / "a.txt"), max_bytes=100)[1] == b"inside\n"
    with pytest.raises(PathRefused, match="file access is turned off for this agent"):
        Workspace([layout.ws], "none").read_bytes(str(layout.ws / "a.txt"), max_bytes=100)


def test_invalid_access_or_no_roots_is_a_programming_error(layout: Layout) -> None:
    with pytest.raises(ValueError, match="access"):
        Workspace([layout.ws], "all")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="root"):
        Workspace([])


# -- what works ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "template",
    ["{ws}/a.txt", "{ws}//a.txt", "/{ws}/a.txt", "{ws}/./a.txt", "{ws}/sub/../a.txt", "{ws}/sub/./../a.txt"],
)
def test_read_inside_in_many_spellings(layout: Layout, template: str) -> None:
    resolved, data = Workspace([layout.ws]).read_bytes(fill(template, layout), max_bytes=100)
    assert (resolved, data) == (layout.ws / "a.txt", b"inside\n")


def test_write_creates_nested_folders(layout: Layout) -> None:
    ws = Workspace([layout.ws])
    written = ws.write_bytes_atomic(str(layout.ws / "new" / "deeper" / "file.txt"), b"hello")
    assert written == layout.ws / "new" / "deeper" / "file.txt"
    assert written.read_bytes() == b"hello"
    assert sorted(p.name for p in (layout.ws / "new" / "deeper").iterdir()) == ["file.txt"]  # no temp file left


@pytest.mark.parametrize(("before", "after"), [(0o751, 0o751), (0o400, 0o400), (0o4755, 0o755), (0o2775, 0o775)])
def test_write_replaces_and_keeps_permission_bits(layout: Layout, before: int, after: int) -> None:
    target = layout.ws / "script.sh"
    target.write_text("old")
    target.chmod(before)
    Workspace([layout.ws]).write_bytes_atomic(str(target), b"new")
    assert target.read_bytes() == b"new"
    assert stat.S_IMODE(target.stat().st_mode) == after  # set-id bits dropped, as a kernel write drops them
    assert sorted(p.name for p in layout.ws.iterdir() if p.name.endswith(".tmp")) == []


def test_symlink_inside_workspace_is_followed(layout: Layout) -> None:
    ws = Workspace([layout.ws])
    assert ws.read_bytes(str(layout.ws / "link_inside"), max_bytes=100) == (layout.ws / "sub" / "b.txt", b"inside b\n")
    assert ws.write_bytes_atomic(str(layout.ws / "link_inside"), b"via link") == layout.ws / "sub" / "b.txt"
    assert (layout.ws / "link_inside").is_symlink()
    assert (layout.ws / "sub" / "b.txt").read_bytes() == b"via link"


def test_extra_roots_are_part_of_the_workspace(layout: Layout) -> None:
    extra = layout.base / "extra"
    extra.mkdir()
    (extra / "notes.md").write_text("notes")
    (layout.ws / "to_extra").symlink_to(extra / "notes.md")
    ws = Workspace([layout.ws, extra])
    assert ws.read_bytes(str(extra / "notes.md"), max_bytes=100)[1] == b"notes"
    assert ws.read_bytes(str(layout.ws / "to_extra"), max_bytes=100)[1] == b"notes"
    written = ws.write_bytes_atomic(str(extra / "new" / "file.txt"), b"x")
    assert ws.relative(written) == "extra/new/file.txt"
    assert ws.relative(layout.ws / "sub" / "b.txt") == "sub/b.txt"
    assert ws.relative(extra) == "extra"
    assert ws.relative(layout.out / "secret.txt") == str(layout.out / "secret.txt")


def test_root_given_through_a_symlink(layout: Layout) -> None:
    (layout.base / "ws_alias").symlink_to(layout.ws)
    ws = Workspace([layout.base / "ws_alias"])
    assert ws.roots == (layout.ws,)
    assert ws.check(str(layout.base / "ws_alias" / "a.txt")) == layout.ws / "a.txt"
    assert ws.relative(layout.base / "ws_alias" / "sub" / "b.txt") == "sub/b.txt"
    with pytest.raises(PathRefused):
        ws.check(str(layout.base / "ws_alias" / "link_file"))


def test_contains_resolves_symlinks(layout: Layout) -> None:
    ws = Workspace([layout.ws])
    assert ws.contains(layout.ws / "a.txt")
    assert ws.contains(layout.ws / "not-yet")
    assert ws.contains(layout.ws)
    assert not ws.contains(layout.ws / "link_dir" / "secret.txt")
    assert not ws.contains(layout.base / "ws-evil" / "x")


def test_missing_file_names_the_path_asked(layout: Layout) -> None:
    path = str(layout.ws / "sub" / "missing.txt")
    with pytest.raises(FileNotFoundError) as caught:
        Workspace([layout.ws]).read_bytes(path, max_bytes=100)
    assert caught.value.filename == path
    with pytest.raises(FileNotFoundError):
        Workspace([layout.ws]).read_bytes(str(layout.ws / "a.txt" / "below"), max_bytes=100)


def test_read_limit(layout: Layout) -> None:
    ws = Workspace([layout.ws])
    assert ws.read_bytes(str(layout.ws / "a.txt"), max_bytes=7)[1] == b"inside\n"
    with pytest.raises(FileTooLarge, match="too large") as caught:
        ws.read_bytes(str(layout.ws / "a.txt"), max_bytes=6)
    assert isinstance(caught.value, OSError) and caught.value.size == 7


def test_write_through_a_file_is_refused(layout: Layout) -> None:
    with pytest.raises(PathRefused, match="is a file, not a folder"):
        Workspace([layout.ws]).write_bytes_atomic(str(layout.ws / "a.txt" / "x.txt"), b"x")
    assert (layout.ws / "a.txt").read_text() == "inside\n"


@pytest.mark.timeout(10)
def test_socket_and_device_inside_are_refused(layout: Layout) -> None:
    ws = Workspace([layout.ws])
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(layout.ws / "sock"))
        with pytest.raises(PathRefused, match="socket"):
            ws.read_bytes(str(layout.ws / "sock"), max_bytes=100)
        with pytest.raises(PathRefused, match="socket"):
            ws.write_bytes_atomic(str(layout.ws / "sock"), b"x")
    if os.geteuid() != 0:
        return  # only root may make device nodes
    os.mknod(layout.ws / "zero", stat.S_IFCHR | 0o666, os.makedev(1, 5))
    with pytest.raises(PathRefused, match="device"):
        ws.read_bytes(str(layout.ws / "zero"), max_bytes=100)
    with pytest.raises(PathRefused, match="device"):
        ws.write_bytes_atomic(str(layout.ws / "zero"), b"x")
    assert stat.S_ISCHR((layout.ws / "zero").lstat().st_mode)


def files_held(layout: Layout) -> list[tuple[str, str]]:
    """What this process holds open of the layout, its folders and the system files the escapes aim at."""
    ancestors = {str(folder) for folder in layout.base.parents}
    return descriptors_held(
        lambda target: target.startswith((str(layout.base), "/etc", "/proc", "/dev/zero")) or target in ancestors
    )


def test_no_file_descriptor_leaks(layout: Layout) -> None:
    ws = Workspace([layout.ws])
    before = files_held(layout)
    attempts = [fill(p.values[0], layout) for p in ESCAPES] + [str(layout.ws / "a.txt"), str(layout.ws / "x/y.txt")]
    for _ in range(3):
        for path in attempts:
            with contextlib.suppress(PathRefused, OSError):
                ws.read_bytes(path, max_bytes=3)
            if path not in SYSTEM_FILES:
                with contextlib.suppress(PathRefused, OSError):
                    ws.write_bytes_atomic(path, b"")
    assert files_held(layout) == before


# -- the open itself: a swap between check and open ----------------------------------------------------
# The race cannot be timed in a test, so the check runs first and the swap happens before the open
# (webclient.workspace.no_follow); this is the order of events an attacker would have to win.


def swap_for_symlink(path: Path, target: Path) -> None:
    path.rename(path.with_name(path.name + ".moved"))
    path.symlink_to(target)


def test_read_refuses_folder_swapped_for_symlink(layout: Layout) -> None:
    ws = Workspace([layout.ws])
    path = str(layout.ws / "sub" / "b.txt")
    resolved = ws.check(path)
    swap_for_symlink(layout.ws / "sub", layout.out / "sub")
    with pytest.raises(PathRefused, match="changed while it was being opened"):
        read_file(ws.roots, resolved, path, max_bytes=100)


@pytest.mark.parametrize("name", ["b.txt", "newdir/new.txt"])
def test_write_refuses_folder_swapped_for_symlink(layout: Layout, name: str) -> None:
    ws = Workspace([layout.ws])
    path = str(layout.ws / "sub" / name)
    resolved = ws.check(path, write=True)
    swap_for_symlink(layout.ws / "sub", layout.out / "sub")
    before = snapshot(layout)
    with pytest.raises(PathRefused, match="changed while it was being opened"):
        write_file_atomic(ws.roots, resolved, path, b"PWNED")
    assert snapshot(layout) == before


def test_write_refuses_missing_folder_that_appears_as_symlink(layout: Layout) -> None:
    ws = Workspace([layout.ws])
    path = str(layout.ws / "later" / "deeper" / "new.txt")
    resolved = ws.check(path, write=True)
    (layout.ws / "later").symlink_to(layout.out)
    before = snapshot(layout)
    with pytest.raises(PathRefused):
        write_file_atomic(ws.roots, resolved, path, b"PWNED")
    assert snapshot(layout) == before


def test_file_swapped_for_symlink_is_neither_read_nor_written_through(layout: Layout) -> None:
    ws = Workspace([layout.ws])
    path = str(layout.ws / "a.txt")
    resolved = ws.check(path, write=True)
    swap_for_symlink(layout.ws / "a.txt", layout.out / "secret.txt")
    before = snapshot(layout)
    with pytest.raises(PathRefused):
        read_file(ws.roots, resolved, path, max_bytes=100)
    with pytest.raises(PathRefused):
        write_file_atomic(ws.roots, resolved, path, b"PWNED")
    assert snapshot(layout) == before
    assert (layout.ws / "a.txt").is_symlink()


@pytest.mark.timeout(10)
def test_file_swapped_for_fifo_does_not_block(layout: Layout) -> None:
    ws = Workspace([layout.ws])
    path = str(layout.ws / "a.txt")
    resolved = ws.check(path)
    (layout.ws / "a.txt").unlink()
    os.mkfifo(layout.ws / "a.txt")
    with pytest.raises(PathRefused, match="named pipe"):
        read_file(ws.roots, resolved, path, max_bytes=100)


def test_root_swapped_for_symlink(layout: Layout) -> None:
    ws = Workspace([layout.ws])
    path = str(layout.ws / "sub" / "b.txt")
    resolved = ws.check(path, write=True)
    swap_for_symlink(layout.ws, layout.out)
    with pytest.raises(PathRefused):
        read_file(ws.roots, resolved, path, max_bytes=100)
    with pytest.raises(PathRefused):
        write_file_atomic(ws.roots, resolved, path, b"PWNED")
    assert (layout.out / "sub" / "b.txt").read_bytes() == SECRET


def test_the_servers_own_files_are_refused_inside_a_root_as_written_and_through_a_symlink(tmp_path: Path) -> None:
    data, config = tmp_path / "data", tmp_path / "agents.toml"
    (data / "homes" / "bob").mkdir(parents=True)
    (data / "secret.key").write_bytes(b"KEY")
    config.write_text("[agents]")
    (tmp_path / "notes.txt").write_text("mine")
    (tmp_path / "key-link").symlink_to(data / "secret.key")
    (tmp_path / "data-link").symlink_to(data)
    workspace = Workspace([tmp_path], hidden=[data, config])
    for path in (
        data / "secret.key",
        data / "homes" / "bob" / "x",
        config,
        tmp_path / "key-link",
        tmp_path / "data-link" / "secret.key",
        data,
    ):
        with pytest.raises(PathRefused, match="the server's own"):
            workspace.check(str(path))
        with pytest.raises(PathRefused, match="the server's own"):
            workspace.write_bytes_atomic(str(path), b"planted")
        assert not workspace.contains(path) and workspace.hides(path)
    assert (data / "secret.key").read_bytes() == b"KEY" and config.read_text() == "[agents]"
    assert not (data / "homes" / "bob" / "x").exists()
    assert workspace.read_bytes(str(tmp_path / "notes.txt"), max_bytes=100)[1] == b"mine"
    assert workspace.read_only().hides(config) and workspace.read_only().access == "read-only"


def test_a_root_given_inside_a_hidden_folder_is_the_agents_and_nothing_else_of_it(tmp_path: Path) -> None:
    data = tmp_path / "data"
    worktree = data / "worktrees" / "s1"
    worktree.mkdir(parents=True)
    (data / "store.sqlite3").write_text("the store")
    (worktree / "link").symlink_to(data / "store.sqlite3")
    workspace = Workspace([worktree], hidden=[data])
    assert workspace.check(str(worktree / "notes.txt"), write=True) == worktree.resolve() / "notes.txt"
    assert workspace.contains(worktree)
    with pytest.raises(PathRefused):
        workspace.check(str(worktree / "link"))
    with pytest.raises(PathRefused):
        workspace.check(str(worktree / ".." / ".." / "store.sqlite3"))
    assert Workspace([tmp_path], hidden=[data]).hides(worktree / "notes.txt"), "a root above it: still hidden"
