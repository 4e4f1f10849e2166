"""The server with ``WEBCLIENT_SANDBOX``: the line it says at start, its refusal when bwrap cannot work, the network
on or off per agent (the config file's ``network`` over ``WEBCLIENT_SANDBOX_NETWORK``), the demo agent and its
terminal inside a sandbox, and token mode's agent in a home of its own (not the server's)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from tests.sandbox.attack import HOSTILE, REPORT, Listeners, outside_tmp
from tests.sandbox.outside_host import outside_host
from tests.support.agent_env import ENV_AGENT, new_session, started_with
from tests.support.people import TEAM, person_client
from tests.support.restarts import drive
from tests.support.servers import ROOT, ServerFactory, free_port, server_command
from tests.support.team import page_socket, prompt, ready, until
from tests.support.urls import URLS, at

pytestmark = pytest.mark.process  # each test starts the server as a process: its subject


def startup(env: dict[str, str], timeout: float = 20) -> tuple[int | None, str]:
    """Start ``python -m webclient`` with ``env`` over the test's; its exit status (None: it is serving) and what
    it said until it exited or said which sandbox is in force."""
    full = {**os.environ, "WEBCLIENT_TOKEN": "t", "WEBCLIENT_DEMO_REMOTE": "off", "WEBCLIENT_STORE": "off", **env}
    args = server_command("--port", str(free_port()))
    process = subprocess.Popen(args, cwd=ROOT, env=full, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    said = []
    try:
        assert process.stdout is not None
        for line in process.stdout:
            said.append(line)
            if "agents run" in line:  # said right after the sign-in line
                return None, "".join(said)
        return process.wait(timeout), "".join(said)
    finally:
        process.terminate()
        process.wait(10)
        if process.stdout is not None:
            process.stdout.close()


def test_the_server_says_which_sandbox_is_in_force() -> None:
    status, said = startup({"WEBCLIENT_SANDBOX": "bwrap", "WEBCLIENT_SANDBOX_NETWORK": "off"})
    assert status is None and "agents run in a bubblewrap sandbox (" in said and "network off" in said, said
    assert said.splitlines()[0].startswith("ACP web client: open http://")  # the line to click stays the first
    status, said = startup({"WEBCLIENT_SANDBOX": "none"})
    assert status is None and "agents run without a sandbox" in said, said


def test_the_server_refuses_bwrap_when_it_cannot_work(tmp_path: Path) -> None:
    status, said = startup({"WEBCLIENT_SANDBOX": "bwrap", "PATH": str(tmp_path)})
    assert status == 1 and "webclient: WEBCLIENT_SANDBOX=bwrap, but bwrap is not installed" in said, said
    assert "Traceback" not in said
    refusing = tmp_path / "bwrap"
    refusing.write_text("#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n")
    refusing.chmod(0o755)
    status, said = startup({"WEBCLIENT_SANDBOX": "bwrap", "PATH": f"{tmp_path}:/usr/bin:/bin"})
    assert status == 1 and "cannot make a sandbox on this machine (bwrap: setting up uid map" in said, said
    status, said = startup({"WEBCLIENT_SANDBOX": "chroot"})
    assert status == 1 and "WEBCLIENT_SANDBOX must be one of none, bwrap" in said, said


def test_the_server_refuses_the_network_on_without_slirp4netns(tmp_path: Path) -> None:
    """Never the host's network instead: with no slirp4netns on its PATH, a server whose agents would have the
    network stops at start, with one line saying what to install; with the network off it starts."""
    (tmp_path / "bwrap").symlink_to("/usr/bin/bwrap")
    env = {"WEBCLIENT_SANDBOX": "bwrap", "PATH": str(tmp_path)}
    status, said = startup({**env, "WEBCLIENT_SANDBOX_NETWORK": "on"})
    assert (
        status == 1 and "webclient: WEBCLIENT_SANDBOX=bwrap with the network on (WEBCLIENT_SANDBOX_NETWORK=on) " in said
    )
    assert "needs slirp4netns, which is not installed" in said and "Traceback" not in said, said
    status, said = startup({**env, "WEBCLIENT_SANDBOX_NETWORK": "off"})
    assert status is None and "network off" in said, said


def test_an_agent_with_the_network_on_does_not_start_without_slirp4netns(start_server: ServerFactory) -> None:
    """The server's default off, the agent's ``network = true``, no slirp4netns on the PATH: the agent does not start,
    saying why (never with the host's network instead)."""
    with outside_tmp() as base:
        tools, workspace = base / "tools", base / "workspace"
        tools.mkdir()
        workspace.mkdir()
        (tools / "bwrap").symlink_to("/usr/bin/bwrap")
        config = base / "agents.toml"
        argv = HOSTILE.split()
        config.write_text(f'[agents.open]\ncommand = "{argv[0]}"\nargs = ["{argv[1]}"]\nnetwork = true\n')
        server = start_server(
            None,
            workspace=workspace,
            PATH=str(tools),
            WEBCLIENT_CONFIG=str(config),
            WEBCLIENT_SANDBOX="bwrap",
            WEBCLIENT_SANDBOX_NETWORK="off",
        )
        response = httpx.post(at(server.url, "new_session"), headers=server.headers, data={"agent": "open"})
        assert response.status_code == 303, response.text[:300]
        page = f"{server.url}{response.headers['location']}"
        deadline = time.monotonic() + 20
        while "slirp4netns is not installed" not in (text := httpx.get(page, headers=server.headers).text):
            assert time.monotonic() < deadline, text[-2000:]
            time.sleep(0.2)
        assert "could not be started" in text


def test_the_network_is_on_or_off_per_agent(start_server: ServerFactory) -> None:
    """The server's default on; the agent "closed" says network = false: it alone reaches nothing. Neither reaches
    the host's loopback; "open" reaches a host outside (as root, `outside_host`)."""
    with outside_tmp() as base, Listeners() as listeners, outside_host() as outside:
        workspaces = base / "workspaces"
        (workspaces / "open").mkdir(parents=True)
        (workspaces / "closed").mkdir()
        config = base / "agents.toml"
        argv = HOSTILE.split()
        agent = f'command = "{argv[0]}"\nargs = ["{argv[1]}"]\nworkspace = "{workspaces}"\n'
        config.write_text(f"[agents.open]\n{agent}\n[agents.closed]\n{agent}network = false\n")
        server = start_server(
            None,
            WEBCLIENT_CONFIG=str(config),
            WEBCLIENT_DATA_DIR=str(base / "data"),
            WEBCLIENT_SANDBOX="bwrap",
            WEBCLIENT_SANDBOX_NETWORK="on",
            **TEAM,
        )
        tcp = [["127.0.0.1", listeners.tcp_port, "a port the host listens on"]]
        tcp.append([outside.address, outside.port, "a host outside"])
        reached = {}
        for name in ("open", "closed"):
            alice = person_client(server, "alice")
            response = alice.post(URLS.for_("new_session"), data={"agent": name, "workspace": str(workspaces / name)})
            assert response.status_code == 303, response.text[:300]
            session_id = str(response.headers["location"]).rsplit("/", 1)[1]
            asyncio.run(connect_from(server, session_id, tcp))
            found = json.loads((workspaces / name / REPORT).read_text())
            reached[name] = [r["worked"] for r in found["agent"]["legitimate"] if r["what"].startswith("connect")]
        assert reached["open"] == [False, True]
        assert reached["closed"] == [False, False]


async def connect_from(server: object, session_id: str, tcp: list[list[object]]) -> None:
    """Have the hostile agent of ``session_id`` try to connect (as something it may do, network on)."""
    aim = {"reach": tcp}
    async with page_socket(server, session_id, "alice") as (socket, nonce):  # type: ignore[arg-type]
        await ready(socket)
        await prompt(socket, "connect " + json.dumps(aim), nonce)
        await until(socket, "reported", 60)


def test_the_demo_agent_and_its_terminal_run_in_a_sandbox(start_server: ServerFactory) -> None:
    server = start_server(None, WEBCLIENT_SANDBOX="bwrap", WEBCLIENT_SANDBOX_NETWORK="off")
    session_id = asyncio.run(drive(server, ["run"]))
    page = httpx.get(at(server.url, "session", session_id=session_id), headers=server.headers).text
    assert "passed" in page and "The agent could not be started" not in page


def test_in_token_mode_a_sandboxed_agent_gets_a_home_of_its_own(start_server: ServerFactory) -> None:
    """Not the server's home, nor its variables: the agent reports its environment into its workspace."""
    with outside_tmp() as base:
        workspace, config = base / "workspace", base / "agents.toml"
        workspace.mkdir()
        report = workspace / "env.jsonl"
        argv = ENV_AGENT.split()
        config.write_text(
            f'[agents.env]\ncommand = "{argv[0]}"\nargs = ["{argv[1]}"]\nworkspace = "{workspace}"\n'
            f'env = {{ ENV_REPORT = "{report}" }}\n'
        )
        server = start_server(
            None,
            WEBCLIENT_CONFIG=str(config),
            WEBCLIENT_SANDBOX="bwrap",
            WEBCLIENT_DATA_DIR=str(base / "data"),
            SERVER_ONLY="the server's",
        )
        new_session(server.http())
        env = started_with(report, 1)[0]
    assert env["HOME"] != os.environ["HOME"] and env["HOME"].startswith(str(base / "data" / "homes"))
    assert "SERVER_ONLY" not in env and not any(name.startswith("WEBCLIENT_") for name in env)
