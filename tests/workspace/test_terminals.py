"""Tests for webclient.workspace.terminals: real commands on real pseudo-terminals, no mocks."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

import pytest

from tests.support.probes import descriptors_held
from tests.support.servers import live_members
from webclient.workspace.terminals import (
    ExitStatus,
    OutputBuffer,
    TerminalProcess,
    Terminals,
    TooManyTerminals,
    UnknownTerminal,
)

PYTHON = sys.executable
ENV = {"PATH": os.environ.get("PATH", os.defpath)}


def open_fds() -> list[tuple[str, str]]:
    """This process's terminal descriptors: pty ends and pidfds."""
    return descriptors_held(lambda target: target.startswith(("/dev/ptmx", "/dev/pts/", "anon_inode:[pidfd]")))


class Recorder:
    """Collects what a terminal reports, in order."""

    def __init__(self) -> None:
        self.events: list[tuple[str, bytes | ExitStatus]] = []

    def output(self, data: bytes) -> None:
        self.events.append(("output", data))

    def exit(self, status: ExitStatus) -> None:
        self.events.append(("exit", status))

    @property
    def data(self) -> bytes:
        return b"".join(item for kind, item in self.events if kind == "output" and isinstance(item, bytes))


async def start(
    command: str, *args: str, limit: int | None = None, recorder: Recorder | None = None, cwd: Path | None = None
) -> TerminalProcess:
    recorder = recorder or Recorder()
    return await TerminalProcess.start(
        command,
        args,
        cwd=cwd or Path.cwd(),
        env=ENV,
        output_byte_limit=limit,
        on_output=recorder.output,
        on_exit=recorder.exit,
    )


async def wait_until(predicate: object, timeout: float = 10) -> None:
    assert callable(predicate)
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.02)


@pytest.mark.asyncio
async def test_output_streams_while_the_command_runs() -> None:
    recorder = Recorder()
    script = "import time; print('first', flush=True); time.sleep(1); print('second')"
    process = await start(PYTHON, "-c", script, recorder=recorder)
    await wait_until(lambda: b"first" in recorder.data)
    assert process.exit_status is None
    assert process.output() == ("first\n", False, None)
    status = await process.wait_for_exit()
    assert status == ExitStatus(0, None)
    assert recorder.data == b"first\nsecond\n"
    assert recorder.events[-1] == ("exit", status)  # the exit comes after all output
    assert process.output() == ("first\nsecond\n", False, status)
    await process.release()


@pytest.mark.asyncio
async def test_all_output_arrives_before_exit_is_reported() -> None:
    recorder = Recorder()
    process = await start(
        PYTHON, "-c", "import sys; sys.stdout.write('x' * 999 + '\\n' * 1000 + 'end')", recorder=recorder
    )
    await process.wait_for_exit()
    assert recorder.data == b"x" * 999 + b"\n" * 1000 + b"end"
    assert [kind for kind, _ in recorder.events].count("exit") == 1 and recorder.events[-1][0] == "exit"
    await process.release()


@pytest.mark.asyncio
async def test_exit_code_and_signal_are_reported() -> None:
    failing = await start("sh", "-c", "exit 3")
    killed = await start("sh", "-c", "kill -KILL $$")
    assert await failing.wait_for_exit() == ExitStatus(3, None)
    assert await killed.wait_for_exit() == ExitStatus(None, "SIGKILL")
    assert killed.output()[2] == ExitStatus(None, "SIGKILL")
    await failing.release()
    await killed.release()


@pytest.mark.asyncio
async def test_stdout_and_stderr_are_a_terminal_and_stdin_is_not() -> None:
    script = (
        "import os, sys; print(sys.stdout.isatty(), sys.stderr.isatty(), sys.stdin.isatty(), os.get_terminal_size())"
    )
    process = await start(PYTHON, "-c", script)
    await process.wait_for_exit()
    assert process.output()[0] == "True True False os.terminal_size(columns=120, lines=40)\n"
    await process.release()


@pytest.mark.asyncio
async def test_stdin_is_at_end_of_file_so_cat_exits_at_once() -> None:
    started = time.monotonic()
    process = await start("cat")
    assert await asyncio.wait_for(process.wait_for_exit(), 5) == ExitStatus(0, None)
    assert time.monotonic() - started < 2
    await process.release()


@pytest.mark.asyncio
async def test_newlines_stay_newlines_and_stderr_is_interleaved() -> None:
    process = await start("sh", "-c", "printf 'a\\nb\\n'; printf 'err\\n' >&2; printf 'c\\n'")
    await process.wait_for_exit()
    text = process.output()[0]
    assert text == "a\nb\nerr\nc\n"
    assert "\r" not in text
    await process.release()


@pytest.mark.asyncio
async def test_environment_gets_terminal_variables_and_no_pager() -> None:
    process = await TerminalProcess.start(
        "sh",
        ["-c", 'echo "$TERM $COLUMNS $LINES $PAGER $GIT_PAGER $MINE"'],
        cwd=Path.cwd(),
        env={**ENV, "MINE": "yes", "GIT_PAGER": "less"},
        output_byte_limit=None,
        on_output=lambda data: None,
        on_exit=lambda status: None,
    )
    await process.wait_for_exit()
    assert process.output()[0] == "xterm-256color 120 40 cat less yes\n"
    await process.release()


@pytest.mark.asyncio
async def test_command_runs_in_cwd_and_command_line_is_quoted(tmp_path: Path) -> None:
    process = await start("sh", "-c", "pwd", cwd=tmp_path)
    assert process.command_line == "sh -c pwd"
    await process.wait_for_exit()
    assert process.output()[0] == f"{tmp_path}\n"
    await process.release()
    quoted = await start("echo", "it's here")
    assert quoted.command_line == "echo 'it'\"'\"'s here'"
    await quoted.release()


@pytest.mark.parametrize("limit", range(0, 40))
def test_output_buffer_cuts_at_character_boundaries(limit: int) -> None:
    text = "é日本🎉xé" * 4
    buffer = OutputBuffer(limit)
    data = text.encode()
    for index in range(0, len(data), 5):  # chunks that split characters
        buffer.append(data[index : index + 5])
    kept = buffer.text()
    assert len(kept.encode()) <= limit
    assert len(kept.encode()) >= limit - 3
    assert not kept.startswith("\ufffd")
    assert text.endswith(kept)
    assert buffer.truncated


def test_output_buffer_holds_back_an_incomplete_character_until_finished() -> None:
    buffer = OutputBuffer(None)
    buffer.append("ok é".encode()[:-1])
    assert buffer.text() == "ok "
    buffer.finish()
    assert buffer.text() == "ok \ufffd"
    assert not buffer.truncated
    exact = OutputBuffer(3)
    exact.append(b"abc")
    assert (exact.text(), exact.truncated) == ("abc", False)


@pytest.mark.asyncio
async def test_output_byte_limit_with_multibyte_characters_at_the_cut() -> None:
    full = "é日本🎉" * 50 + "end"
    process = await start(PYTHON, "-c", f"import sys; sys.stdout.write({full!r})", limit=101)
    await process.wait_for_exit()
    text, truncated, status = process.output()
    assert truncated and status == ExitStatus(0, None)
    assert 98 <= len(text.encode()) <= 101
    assert not text.startswith("\ufffd")
    assert full.endswith(text)
    await process.release()


@pytest.mark.asyncio
async def test_missing_command_is_a_clear_error() -> None:
    with pytest.raises(FileNotFoundError, match="no-such-command-here.*not found on PATH"):
        await start("no-such-command-here", "x")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        await start("./no/such/script")
    with pytest.raises(FileNotFoundError, match="empty command"):
        await start("")
    with pytest.raises(NotADirectoryError, match="not a directory"):
        await start("true", cwd=Path("/no/such/dir"))


@pytest.mark.asyncio
async def test_command_that_is_not_executable_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "script").write_text("echo hi\n")
    with pytest.raises(PermissionError, match="not executable"):
        await start("./script", cwd=tmp_path)


@pytest.mark.asyncio
async def test_kill_stops_the_whole_process_group_and_keeps_the_terminal() -> None:
    fds = open_fds()
    process = await start("sh", "-c", "echo started; sleep 100 & sleep 100")
    await wait_until(lambda: len(live_members(process.pid)) == 3)  # sh and both sleeps
    started = time.monotonic()
    await process.kill()
    assert time.monotonic() - started < 2  # sleep dies on SIGTERM: no wait for SIGKILL
    assert live_members(process.pid) == []
    assert await process.wait_for_exit() == ExitStatus(None, "SIGTERM")
    assert process.output() == ("started\n", False, ExitStatus(None, "SIGTERM"))
    await process.kill()  # again: nothing left to kill, no error
    await process.release()
    assert open_fds() == fds


@pytest.mark.asyncio
async def test_kill_escalates_to_sigkill_when_sigterm_is_ignored() -> None:
    process = await start("sh", "-c", "trap '' TERM; echo ready; while :; do sleep 0.1; done")
    await wait_until(lambda: "ready" in process.output()[0])
    await process.kill()
    assert live_members(process.pid) == []
    assert process.exit_status == ExitStatus(None, "SIGKILL")
    await process.release()


@pytest.mark.asyncio
async def test_background_child_holding_the_pty_does_not_block_wait_and_dies_on_release() -> None:
    process = await start("sh", "-c", "sleep 100 & echo parent done")
    status = await asyncio.wait_for(process.wait_for_exit(), 5)
    assert status == ExitStatus(0, None)
    assert process.output()[0] == "parent done\n"
    assert len(live_members(process.pid)) == 1  # the background sleep
    await process.kill()
    assert live_members(process.pid) == []
    await process.release()


@pytest.mark.asyncio
async def test_release_while_running_kills_the_group_and_forgets_the_id() -> None:
    fds = open_fds()
    terminals = Terminals()
    exits: list[tuple[str, ExitStatus]] = []
    terminal_id = await terminals.create(
        "sh",
        ["-c", "sleep 100 & sleep 100"],
        cwd=Path.cwd(),
        env=ENV,
        output_byte_limit=None,
        on_output=lambda tid, data: None,
        on_exit=lambda tid, status: exits.append((tid, status)),
    )
    assert terminal_id.startswith("term-")
    pid = terminals.get(terminal_id).pid
    await wait_until(lambda: len(live_members(pid)) == 3)
    await terminals.release(terminal_id)
    assert live_members(pid) == []
    assert exits == [(terminal_id, ExitStatus(None, "SIGTERM"))]
    with pytest.raises(UnknownTerminal, match="unknown terminal 'term-"):
        terminals.get(terminal_id)
    with pytest.raises(UnknownTerminal):
        await terminals.release(terminal_id)
    assert len(terminals) == 0
    assert open_fds() == fds


@pytest.mark.asyncio
async def test_close_kills_every_terminal() -> None:
    fds = open_fds()
    terminals = Terminals()
    outputs: list[tuple[str, bytes]] = []
    ids = [
        await terminals.create(
            "sh",
            ["-c", f"echo {n}; sleep 100 & sleep 100"],
            cwd=Path.cwd(),
            env=ENV,
            output_byte_limit=None,
            on_output=lambda tid, data: outputs.append((tid, data)),
            on_exit=lambda tid, status: None,
        )
        for n in range(3)
    ]
    assert len(set(ids)) == 3
    pids = [terminals.get(terminal_id).pid for terminal_id in ids]
    await wait_until(lambda: all(len(live_members(pid)) == 3 for pid in pids))
    await terminals.close()
    assert all(live_members(pid) == [] for pid in pids)
    assert {tid for tid, _ in outputs} == set(ids)
    for terminal_id in ids:
        with pytest.raises(UnknownTerminal):
            terminals.get(terminal_id)
    assert open_fds() == fds


@pytest.mark.asyncio
async def test_too_many_terminals_is_refused_until_one_is_released() -> None:
    terminals = Terminals(max_terminals=2)

    async def create() -> str:
        return await terminals.create(
            "true",
            [],
            cwd=Path.cwd(),
            env=ENV,
            output_byte_limit=None,
            on_output=lambda tid, data: None,
            on_exit=lambda tid, status: None,
        )

    first = await create()
    await create()
    with pytest.raises(TooManyTerminals, match="already has 2 terminals"):
        await create()
    await terminals.release(first)
    await create()
    await terminals.close()


@pytest.mark.asyncio
async def test_a_failing_listener_does_not_stop_the_terminal() -> None:
    def broken(data: bytes) -> None:
        raise RuntimeError("listener bug")

    process = await TerminalProcess.start(
        "sh",
        ["-c", "echo one; echo two"],
        cwd=Path.cwd(),
        env=ENV,
        output_byte_limit=None,
        on_output=broken,
        on_exit=lambda status: None,
    )
    assert await process.wait_for_exit() == ExitStatus(0, None)
    assert process.output()[0] == "one\ntwo\n"
    await process.release()


@pytest.mark.asyncio
async def test_create_after_close_is_refused() -> None:
    terminals = Terminals()
    await terminals.close()
    with pytest.raises(OSError, match="session is closing"):
        await terminals.create(
            "true",
            [],
            cwd=Path.cwd(),
            env=ENV,
            output_byte_limit=None,
            on_output=lambda tid, data: None,
            on_exit=lambda tid, status: None,
        )


def processes_with(argument: str) -> list[int]:
    """Live processes with ``argument`` on their command line."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if argument.encode() in command and state not in ("Z", "X"):
            found.append(int(pid))
    return found


@pytest.mark.asyncio
@pytest.mark.parametrize("command", [PYTHON, "no-such-command-anywhere"])
async def test_a_start_cancelled_midway_leaves_no_command_and_no_pty_behind(tmp_path: Path, command: str) -> None:
    """A command starts from the spawner's thread (a fork on the event loop stopped every session for 20-40 ms): a
    caller cancelled meanwhile leaves nothing running, and no pty open, whether the command started or not."""
    fds = open_fds()
    marker = str(tmp_path / "cancelled-start")
    starting = asyncio.create_task(start(command, "-c", "import time; time.sleep(30)", marker))
    await asyncio.sleep(0)  # the start is under way in its thread
    starting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await starting
    await wait_until(lambda: processes_with(marker) == [] and open_fds() == fds)
