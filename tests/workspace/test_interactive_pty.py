"""A command a person drives (webclient.workspace.interactive_pty): its pty is its controlling terminal, keystrokes
reach it, a resize reaches it as SIGWINCH, the output kept is bounded, and closing stops its whole process group."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.support.servers import live_processes
from tests.support.waiting import until
from webclient.workspace.interactive_pty import OUTPUT_LIMIT, InteractivePty

ASK = r"""
import os, signal, subprocess, sys
signal.signal(signal.SIGWINCH, lambda *_: print("size", *os.get_terminal_size(0), flush=True))
child = subprocess.Popen(["sleep", "300"])
os.close(os.open("/dev/tty", os.O_RDWR))  # fails unless the pty is the controlling terminal
print("child", child.pid, "ready", flush=True)
line = sys.stdin.readline()
print("got", len(line.strip()), line[:8], flush=True)
signal.pause()
"""


def alive(pid: int) -> bool:
    return any(found == pid for found, _, _ in live_processes())


@pytest.mark.asyncio
async def test_keystrokes_and_resizes_reach_the_command_and_closing_stops_its_group(tmp_path: Path) -> None:
    pty = await InteractivePty.start([sys.executable, "-c", ASK], cwd=tmp_path, env=dict(os.environ))
    seen: list[bytes] = []
    pty.listeners.add(seen.append)
    try:
        await until(lambda: b"ready" in pty.output)
        child = int(pty.output.split(b"child ", 1)[1].split()[0])
        pty.resize(77, 19)
        await until(lambda: b"size 77 19" in pty.output)
        pty.resize(0, 19)  # out of range: ignored
        pty.write(b"4242\r")  # Enter, as a terminal sends it
        await until(lambda: b"got " in pty.output)
        assert b"got 4 4242" in pty.output
        assert b"".join(seen) == pty.output  # the listener saw everything, in order
        assert alive(pty.pid) and alive(child)
    finally:
        await pty.close()
    assert not alive(pty.pid) and not alive(child)
    assert pty.exit_status is not None and pty.exit_status.signal == "SIGHUP"
    pty.write(b"ignored\n")  # after the end: nothing happens


@pytest.mark.asyncio
async def test_the_output_kept_is_bounded_to_the_newest(tmp_path: Path) -> None:
    script = f"import sys; sys.stdout.write('a' * {OUTPUT_LIMIT} + 'b' * 1000 + 'END'); sys.stdout.flush()"
    pty = await InteractivePty.start([sys.executable, "-c", script], cwd=tmp_path, env=dict(os.environ))
    status = await pty.exited
    assert status.exit_code == 0
    assert len(pty.output) == OUTPUT_LIMIT and pty.output.endswith(b"b" * 1000 + b"END")
    await pty.close()


@pytest.mark.asyncio
async def test_a_command_that_is_not_there_is_refused_before_it_starts(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="not found on PATH"):
        await InteractivePty.start(["no-such-login-command"], cwd=tmp_path, env=dict(os.environ))
