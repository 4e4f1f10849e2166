"""Nothing started in a sandbox outlives it: killing a command's process group (bwrap, outside) ends everything inside,
background children and a process that left the group too, as without a sandbox; and an agent stopped the same."""

from __future__ import annotations

import asyncio
import secrets
import sys
import time
from pathlib import Path

import pytest

from tests.sandbox.attack import outside_tmp
from webclient.acp.process import AgentProcess
from webclient.config import Settings
from webclient.session.agent_spec import AgentSpec
from webclient.session.sandboxing import confine
from webclient.workspace.terminals import Terminals


def running_with(mark: str) -> list[int]:
    """Live processes whose command line holds ``mark``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes()
                state = (entry / "stat").read_bytes().rsplit(b")", 1)[1].split()[0]
            except OSError:
                continue
            if mark.encode() in cmdline and state not in (b"Z", b"X"):
                found.append(int(entry.name))
    return found


async def gone(mark: str, timeout: float = 10) -> bool:
    deadline = time.monotonic() + timeout
    while running_with(mark):
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.05)
    return True


def spec_in(base: Path, argv: list[str]) -> AgentSpec:
    workspace = base / "workspace"
    workspace.mkdir(exist_ok=True)
    settings = Settings.from_env({"WEBCLIENT_SANDBOX": "bwrap", "WEBCLIENT_DATA_DIR": str(base / "data")})
    return confine(AgentSpec(argv, workspace), settings)


@pytest.mark.asyncio
async def test_releasing_a_sandboxed_command_ends_all_it_started() -> None:
    mark = f"mark-{secrets.token_hex(4)}"
    stray = f"{sys.executable} -c 'import os, time; os.setpgid(0, 0); time.sleep(600)' {mark}"
    with outside_tmp() as base:
        spec = spec_in(base, [sys.executable, "-c", "pass"])
        terminals = Terminals(spec.sandbox)
        terminal_id = await terminals.create(
            "sh",
            ["-c", f"{stray} & sleep 600; : {mark}"],
            cwd=spec.cwd,
            env=spec.sandbox.environment({"PATH": "/usr/bin:/bin"}),
            output_byte_limit=None,
            on_output=lambda *_: None,
            on_exit=lambda *_: None,
        )
        deadline = time.monotonic() + 10
        while len(running_with(mark)) < 4:  # bwrap, bwrap's init inside, sh and the stray that left its group
            assert time.monotonic() < deadline, running_with(mark)
            await asyncio.sleep(0.05)
        await terminals.release(terminal_id)
        assert await gone(mark), running_with(mark)


@pytest.mark.asyncio
async def test_a_sandboxed_agent_that_ignores_its_stdin_and_sigterm_is_stopped_with_all_it_started() -> None:
    mark = f"mark-{secrets.token_hex(4)}"
    script = (
        "import signal, subprocess, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
        f"subprocess.Popen(['sh', '-c', 'sleep 600; : {mark}']); time.sleep(600)"
    )
    with outside_tmp() as base:
        spec = spec_in(base, [sys.executable, "-c", script])
        process = await AgentProcess.spawn(spec.argv, cwd=spec.cwd, env=spec.env, sandbox=spec.sandbox)
        deadline = time.monotonic() + 10
        while len(running_with(mark)) < 4:  # bwrap, bwrap's init inside, the agent and its child
            assert time.monotonic() < deadline
            await asyncio.sleep(0.05)
        await process.shutdown(grace=0.5)
        assert await gone(mark), running_with(mark)
