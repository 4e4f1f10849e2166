"""Tests for webclient.acp.process: real agent subprocesses (tests/agents/rawjson_*.py)."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import io
import json
import os
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import pytest

from tests.support.servers import AGENTS, ROOT, live_members
from tests.support.waiting import until
from webclient.acp.jsonrpc import MethodNotFound
from webclient.acp.peer import Peer
from webclient.acp.process import AgentProcess, AgentStartError, StderrLog, _Child, _for_loop

SCRIPT = [sys.executable, str(AGENTS / "rawjson_script.py")]


async def no_requests(method: str, params: Any) -> Any:
    raise MethodNotFound()


@pytest.mark.asyncio
async def test_stderr_flood_does_not_block_and_log_stays_bounded() -> None:
    log = StderrLog(max_bytes=100_000)
    process = await AgentProcess.spawn(SCRIPT, cwd=Path.cwd(), stderr_log=log)
    peer = Peer(process.stdout, process.stdin, on_request=no_requests, on_notification=lambda m, p: None)
    reading = asyncio.create_task(peer.run())
    assert await asyncio.wait_for(peer.request("stderr", {"bytes": 20_000_000}), 10) == {"ok": True}
    await peer.close()
    assert await process.shutdown() == 0
    await reading
    assert len(log.text()) == 100_000
    assert log.dropped_bytes == 20_000_000 - 100_000
    assert log.tail(2) == "e" * 1023 + "\n" + "e" * (20_000_000 % 1024)


@pytest.mark.asyncio
async def test_shutdown_of_cooperative_agent_is_quick_and_idempotent() -> None:
    process = await AgentProcess.spawn(SCRIPT, cwd=Path.cwd())
    started = time.monotonic()
    results = await asyncio.gather(process.shutdown(grace=5), process.shutdown(grace=5))
    assert list(results) == [0, 0]
    assert time.monotonic() - started < 2  # left on stdin EOF: no signals needed
    assert await process.shutdown() == 0 and process.returncode == 0


@pytest.mark.asyncio
async def test_shutdown_kills_agent_that_ignores_eof_and_sigterm_together_with_its_child() -> None:
    process = await AgentProcess.spawn([sys.executable, str(AGENTS / "rawjson_stubborn.py")], cwd=Path.cwd())
    announcement = json.loads(await asyncio.wait_for(process.stdout.readline(), 10))
    child = announcement["params"]["child"]
    assert announcement["params"]["pid"] == process.pid
    assert sorted(live_members(process.pid)) == sorted([process.pid, child])
    code = await asyncio.wait_for(process.shutdown(grace=0.3), 5)
    assert code == -signal.SIGKILL  # the real status: nothing reaped the agent behind asyncio's back
    assert live_members(process.pid) == []


@pytest.mark.asyncio
async def test_returncode_is_visible_after_the_agent_exits() -> None:
    process = await AgentProcess.spawn(SCRIPT, cwd=Path.cwd())
    assert process.returncode is None
    process.stdin.write(b'{"jsonrpc":"2.0","id":1,"method":"exit","params":{"code":7}}\n')
    assert await asyncio.wait_for(process.wait(), 5) == 7
    assert process.returncode == 7
    assert await process.shutdown() == 7


@pytest.mark.asyncio
async def test_environment_passes_through_and_is_merged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The server's environment reaches the agent, but for the server's own settings (``WEBCLIENT_*``: its token,
    the key people's secrets are kept with)."""
    monkeypatch.setenv("AGENT_TEST_INHERITED", "from-parent")
    monkeypatch.setenv("WEBCLIENT_TEST_SECRET", "the server's")
    names = ["AGENT_TEST_INHERITED", "AGENT_TEST_EXTRA", "WEBCLIENT_TEST_SECRET"]
    inherited = {"AGENT_TEST_INHERITED": "from-parent", "WEBCLIENT_TEST_SECRET": None}
    for env, expected in [
        (None, {**inherited, "AGENT_TEST_EXTRA": None}),
        ({"AGENT_TEST_EXTRA": "x"}, {**inherited, "AGENT_TEST_EXTRA": "x"}),
    ]:
        async with await AgentProcess.spawn(SCRIPT, cwd=tmp_path, env=env) as process:
            peer = Peer(process.stdout, process.stdin, on_request=no_requests, on_notification=lambda m, p: None)
            reading = asyncio.create_task(peer.run())
            result = await peer.request("env", {"names": names})
            await peer.close()
        await reading
        assert result == {"cwd": str(tmp_path), "vars": expected}


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["/nonexistent/dir/agent-x", "--flag"], "executable '/nonexistent/dir/agent-x' not found"),
        (["no-such-agent-webclient-test"], "executable 'no-such-agent-webclient-test' not found on PATH"),
        ([], "empty command"),
    ],
)
async def test_spawn_failure_raises_agent_start_error(argv: list[str], expected: str) -> None:
    with pytest.raises(AgentStartError) as caught:
        await AgentProcess.spawn(argv, cwd=Path.cwd())
    assert expected in str(caught.value)
    assert caught.value.argv == argv


@pytest.mark.asyncio
async def test_spawn_of_non_executable_file_raises_agent_start_error(tmp_path: Path) -> None:
    script = tmp_path / "agent.sh"
    script.write_text("#!/bin/sh\n")
    with pytest.raises(AgentStartError, match="agent.sh' is not executable"):
        await AgentProcess.spawn([str(script)], cwd=tmp_path)


@pytest.mark.asyncio
async def test_spawn_in_missing_directory_raises_agent_start_error(tmp_path: Path) -> None:
    with pytest.raises(AgentStartError, match="working directory .* does not exist"):
        await AgentProcess.spawn(SCRIPT, cwd=tmp_path / "missing")


def test_stderr_log_keeps_the_last_bytes_and_counts_the_rest() -> None:
    log = StderrLog(max_bytes=10)
    pieces: list[str] = []
    remove = log.add_listener(pieces.append)
    log.append("one\n")
    log.append("two\n")
    log.append("three\n")
    assert (log.text(), log.dropped_bytes) == ("two\nthree\n", 4)
    assert log.tail(1) == "three"
    remove()
    log.append("x" * 25)
    assert (log.text(), log.dropped_bytes) == ("x" * 10, 4 + 10 + 15)
    assert pieces == ["one\n", "two\n", "three\n"]


def test_an_agent_dies_with_the_process_that_started_it_even_without_the_watchdog() -> None:
    """PR_SET_PDEATHSIG, the second line of defence: it reaches the agent itself (not its children, which is
    what the watchdog is for)."""
    stubborn = str(AGENTS / "rawjson_stubborn.py")
    owner = (
        "import asyncio, json, sys\n"
        "from pathlib import Path\n"
        "from webclient.acp.process import AgentProcess\n"
        "async def main():\n"
        f"    agent = await AgentProcess.spawn([sys.executable, {stubborn!r}], cwd=Path.cwd())\n"
        "    await agent.stdout.readline()  # started: it no longer writes, so no SIGPIPE can stop it\n"
        "    print(agent.pid, flush=True)\n"
        "    await asyncio.sleep(60)\n"
        "asyncio.run(main())\n"
    )
    process = subprocess.Popen([sys.executable, "-c", owner], cwd=ROOT, stdout=subprocess.PIPE)
    assert process.stdout is not None
    agent = int(process.stdout.readline())
    try:
        assert live_members(agent) != []
        process.kill()
        process.wait()
        deadline = time.monotonic() + 5
        while agent in live_members(agent):
            assert time.monotonic() < deadline, "the agent outlived the process that started it"
            time.sleep(0.05)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(agent, signal.SIGKILL)  # its child, which only the watchdog would stop
        process.stdout.close()


def processes_with(argument: str) -> list[int]:
    """Live processes with ``argument`` on their command line."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        with contextlib.suppress(OSError):
            command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            if argument.encode() in command and state not in ("Z", "X"):
                found.append(int(pid))
    return found


@pytest.mark.asyncio
async def test_a_start_cancelled_midway_leaves_no_agent_behind(tmp_path: Path) -> None:
    """Agents are started from a thread of their own (a fork on the event loop stopped every session): a caller
    cancelled meanwhile must not leave an agent that nobody owns."""
    marker = str(tmp_path / "cancelled-start")
    spawning = asyncio.create_task(
        AgentProcess.spawn([sys.executable, "-c", "import time; time.sleep(30)", marker], cwd=tmp_path)
    )
    await asyncio.sleep(0)  # the start is under way in its thread
    spawning.cancel()
    with pytest.raises(asyncio.CancelledError):
        await spawning
    await until(lambda: processes_with(marker) == [])


@pytest.mark.asyncio
@pytest.mark.parametrize("turns", range(1, 7))
async def test_a_start_cancelled_while_its_pipes_are_attached_leaves_no_pipe_open(tmp_path: Path, turns: int) -> None:
    """A session stopped while its agent starts (the server shutting down) cancels the start wherever it is: after
    the first pipe was attached, its transport was left for the garbage collector (a `ResourceWarning`, an error in
    this suite) and the agent ran on. Cancelled after 1 to 6 turns of the loop: during, between and after the three
    attaches."""
    marker = str(tmp_path / f"cancelled-attach-{turns}")
    popen = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(30)", marker],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    attaching = asyncio.create_task(_Child.attach(popen))
    for _ in range(turns):
        await asyncio.sleep(0)
    attaching.cancel()
    try:
        child = await attaching
    except asyncio.CancelledError:
        pass
    else:  # attached before the cancel came: closed as an agent's are
        child.close()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ResourceWarning)
        gc.collect()
    popen.wait(timeout=5)  # killed, so reaped at once


class _ProbedPipe(io.FileIO):
    """A pipe's read end that notes, as it is closed, whether its descriptor was still open: closed by someone else
    first, the number was free for another thread to be given before this close took it again."""

    still_open: bool | None = None

    def close(self) -> None:
        if not self.closed:
            try:
                os.fstat(self.fileno())
                self.still_open = True
            except OSError:
                self.still_open = False
        super().close()


@pytest.mark.parametrize("loop_kind", ["uvloop", "asyncio"])
def test_each_end_of_an_agents_pipes_is_closed_once_whichever_loop_runs(loop_kind: str) -> None:
    # uvloop gave libuv the file's own descriptor, then closed the file too (MagicStack/uvloop#763): under load an
    # agent's start in the spawner's thread had its new pipe closed in between, and failed with EBADF.
    import uvloop

    async def scenario() -> tuple[bool | None, bool | None]:
        loop = asyncio.get_running_loop()
        read_fd, write_fd = os.pipe()
        read_end, write_end = _ProbedPipe(read_fd, "rb"), _ProbedPipe(write_fd, "wb")
        reading, _ = await loop.connect_read_pipe(asyncio.Protocol, _for_loop(loop, read_end))
        writing, _ = await loop.connect_write_pipe(asyncio.Protocol, _for_loop(loop, write_end))
        reading.close()
        writing.close()
        await asyncio.sleep(0.05)  # the transports' own closing, a turn of the loop later
        return read_end.still_open, write_end.still_open

    run = uvloop.run if loop_kind == "uvloop" else asyncio.run
    run(asyncio.sleep(0))  # what a loop of this kind keeps open once it ran (uvloop's own, until collected)
    gc.collect()
    before = len(os.listdir("/proc/self/fd"))
    assert run(scenario()) == (True, True)
    gc.collect()
    assert len(os.listdir("/proc/self/fd")) == before  # and nothing left open
