"""Nothing started in a sandbox outlives it: killing a command's process group (bwrap, outside) ends everything inside,
background children and a process that left the group too, as without a sandbox; and an agent stopped the same. With
the network on (as here), the slirp4netns giving it its network ends too; and all of it when the server is killed."""

from __future__ import annotations

import asyncio
import os
import secrets
import signal
import sys
import time
from pathlib import Path

import pytest

from tests.sandbox.attack import HOSTILE, outside_tmp
from tests.support.people import TEAM, person_client
from tests.support.servers import ServerFactory
from tests.support.urls import URLS
from webclient.acp.process import AgentProcess
from webclient.agents.sandboxing import confine
from webclient.config import Settings
from webclient.session.agent_entry import AgentEntry
from webclient.session.agent_spec import AgentSpec
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


def networks_of(mark: str) -> list[int]:
    """The slirp4netns processes giving a network to a sandbox whose command line holds ``mark``."""
    launchers = {pid for pid in running_with(mark) if b"sandbox_network.py" in _read(f"/proc/{pid}/cmdline")}
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                status = dict(line.split(":\t", 1) for line in (entry / "status").read_text().splitlines())
            except (OSError, ValueError):
                continue
            if status.get("Name") == "slirp4netns" and int(status.get("PPid", "0")) in launchers:
                found.append(int(entry.name))
    return found


def alive(pids: list[int]) -> list[int]:
    living = []
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if state not in (b"Z", b"X"):
            living.append(pid)
    return living


async def gone(mark: str, timeout: float = 10, also: list[int] | None = None) -> bool:
    deadline = time.monotonic() + timeout
    while running_with(mark) or alive(also or []):
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.05)
    return True


def spec_in(base: Path, argv: list[str]) -> AgentSpec:
    workspace = base / "workspace"
    workspace.mkdir(exist_ok=True)
    settings = Settings.from_env({"WEBCLIENT_SANDBOX": "bwrap", "WEBCLIENT_DATA_DIR": str(base / "data")})
    return confine(AgentSpec(AgentEntry("agent", argv), workspace), settings)


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
        networks = networks_of(mark)
        assert len(networks) == 1  # the network is on: slirp4netns, the launcher's child
        await terminals.release(terminal_id)
        assert await gone(mark, also=networks), running_with(mark) + alive(networks)


@pytest.mark.asyncio
async def test_a_sandboxed_agent_that_ignores_its_stdin_and_sigterm_is_stopped_with_all_it_started() -> None:
    mark = f"mark-{secrets.token_hex(4)}"
    script = (
        "import signal, subprocess, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
        f"subprocess.Popen(['sh', '-c', 'sleep 600; : {mark}']); time.sleep(600)"
    )
    with outside_tmp() as base:
        spec = spec_in(base, [sys.executable, "-c", script])
        process = await AgentProcess.spawn(spec.entry.argv, cwd=spec.cwd, env=spec.env, sandbox=spec.sandbox)
        deadline = time.monotonic() + 10
        while len(running_with(mark)) < 4:  # bwrap, bwrap's init inside, the agent and its child
            assert time.monotonic() < deadline
            await asyncio.sleep(0.05)
        networks = networks_of(mark)
        assert len(networks) == 1
        await process.shutdown(grace=0.5)
        assert await gone(mark, also=networks), running_with(mark) + alive(networks)


@pytest.mark.process
def test_nothing_of_a_sandbox_with_the_network_outlives_a_killed_server(start_server: ServerFactory) -> None:
    """SIGKILL to the server: its agent's sandbox (bwrap, the agent) and the slirp4netns giving it its network end."""
    with outside_tmp() as base:
        workspace = base / f"work-{secrets.token_hex(4)}"  # in bwrap's command line: the mark
        workspace.mkdir()
        server = start_server(
            HOSTILE,
            workspace=workspace,
            WEBCLIENT_SANDBOX="bwrap",
            WEBCLIENT_SANDBOX_NETWORK="on",
            **TEAM,
            process=True,
        )
        response = person_client(server, "alice").post(URLS.for_("new_session"), data={"workspace": str(workspace)})
        assert response.status_code == 303, response.text[:300]
        deadline = time.monotonic() + 20
        while not networks_of(str(workspace)):
            assert time.monotonic() < deadline, "no sandbox with its network started"
            time.sleep(0.05)
        networks, sandbox = networks_of(str(workspace)), running_with(str(workspace))
        inside = [pid for pid in map(int, filter(str.isdigit, os.listdir("/proc"))) if _cwd(pid) == workspace]
        os.kill(server.process.pid, signal.SIGKILL)
        server.process.wait(10)
        deadline = time.monotonic() + 10
        while alive(networks + sandbox + inside):
            assert time.monotonic() < deadline, f"still running: {alive(networks + sandbox + inside)}"
            time.sleep(0.05)


def _read(path: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError:  # ended meanwhile
        return b""


def _cwd(pid: int) -> Path | None:
    try:
        return Path(os.readlink(f"/proc/{pid}/cwd"))
    except OSError:
        return None
