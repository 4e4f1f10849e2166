"""From inside: a hostile agent of our own (``tests/agents/hostile_agent.py``) and a terminal command it starts try to
reach another session's workspace, the data folder and the store, another person's home, the server's home, its
environment and its process, another agent, a unix socket where the guide puts the server's, and (network off) the
server's port, PostgreSQL's and an outside
address. Under ``WEBCLIENT_SANDBOX=bwrap`` every attempt fails and what an agent must do still works; without a
sandbox the same agent gets through (so the attempts are real). With the network on, the agent still reaches nothing
on the host's loopback (nor through its user-mode network's gateway), and does reach a host outside this one (as root:
one made in a network namespace, `tests.sandbox.outside_host`). Workspaces and the data folder lie outside /tmp."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import secrets
import shutil
import socket
from pathlib import Path

import pytest

from tests.sandbox.attack import (
    HOSTILE,
    Listeners,
    attack,
    counted,
    outside_tmp,
    server_home_file,
    targets,
)
from tests.sandbox.outside_host import outside_host
from tests.support.people import TEAM, person_client
from tests.support.postgres import running_cluster
from tests.support.servers import Server, ServerFactory
from tests.support.urls import URLS

pytestmark = pytest.mark.process  # each test starts the server as a process: its subject


def new_session(server: Server, person: str, workspace: Path) -> str:
    response = person_client(server, person).post(URLS.for_("new_session"), data={"workspace": str(workspace)})
    assert response.status_code == 303, response.text[:300]
    return str(response.headers["location"]).rsplit("/", 1)[1]


def attack_from_alice(
    start_server: ServerFactory, sandbox: str, network: bool = False, config_in: str | None = None
) -> tuple[int, list[str], list[str]]:
    """Alice's hostile agent attacks Bob's session, home and agent, the server and the network; counted. With the
    ``network`` on it must also reach a host outside this one (when one can be made: as root). With ``config_in``
    (``etc``: a folder of /etc, as root; ``workspace``: Alice's workspace itself) the server's config file lies there,
    naming the agent with a key in its ``env``, and must not be read."""
    canary = f"canary-{secrets.token_hex(8)}"
    with (
        outside_tmp() as base,
        server_home_file() as home_file,
        Listeners() as listeners,
        running_cluster("webclient-pg-sandbox-") as postgresql,
        contextlib.ExitStack() as stack,
    ):
        reach, unreadable, config = [], [], {}
        if config_in is not None:
            folder = base / "workspaces" / "alice"
            if config_in == "etc":
                folder = Path("/etc") / f"webclient-test-{secrets.token_hex(4)}"
                stack.callback(shutil.rmtree, folder, ignore_errors=True)
            folder.mkdir(parents=True)
            path = folder / "agents.toml"
            argv = HOSTILE.split()
            path.write_text(
                f'[agents.hostile]\ncommand = "{argv[0]}"\nargs = ["{argv[1]}"]\nworkspace = "{base / "workspaces"}"\n'
                f'env = {{ ANTHROPIC_API_KEY = "sk-hostiles-own" }}\n'
            )
            (folder / "beside.key").write_text(canary)
            config["WEBCLIENT_CONFIG"] = str(path)
            unreadable = [(path, "the server's config file")]
            if config_in == "etc":
                unreadable.append((folder / "beside.key", "a file beside it"))
        if network:
            with contextlib.suppress(pytest.skip.Exception):  # not root: the refusals alone
                outside = stack.enter_context(outside_host())
                reach.append((outside.address, outside.port, "a host outside this one"))
        # A unix socket where the deployment guide has the server's (WEBCLIENT_UDS, /run/webclient): the proxy's way
        # in, which no sandbox mounts, network on or off.
        (base / "run").mkdir()
        server_socket = stack.enter_context(socket.socket(socket.AF_UNIX, socket.SOCK_STREAM))
        server_socket.bind(str(base / "run" / "webclient.sock"))
        server_socket.listen(16)
        workspaces, data = base / "workspaces", base / "data"
        alice, bob = workspaces / "alice", workspaces / "bob"
        for folder in (alice, bob):
            folder.mkdir(parents=True, exist_ok=True)
        server = start_server(
            HOSTILE,
            workspace=workspaces,
            WEBCLIENT_DATA_DIR=str(data),
            WEBCLIENT_SANDBOX=sandbox,
            WEBCLIENT_SANDBOX_NETWORK="on" if network else "off",
            SANDBOX_CANARY=canary,  # in the server's environment: no agent may see it
            **config,
            **TEAM,
        )
        new_session(server, "bob", bob)
        alices = new_session(server, "alice", alice)
        port = int(server.url.rsplit(":", 1)[1])
        tcp = [("127.0.0.1", port, "the server's port"), ("127.0.0.1", postgresql.port, "PostgreSQL's port")]
        if network:  # another loopback address, and the host's loopback through slirp4netns's gateway
            tcp += [("127.0.0.2", listeners.tcp_port, "a port the host listens on, on 127.0.0.2")]
            tcp += [("10.0.2.2", listeners.tcp_port, "the host's loopback through the gateway")]
            tcp += [("10.0.2.2", port, "the server's port through the gateway")]
        aim = targets(server, bob, data, "bob", home_file, canary, listeners, tcp, network, reach, unreadable)
        aim["unix"] = [str(base / "run" / "webclient.sock")]
        found = asyncio.run(attack(server, alices, "alice", aim, alice))
        for where in ("agent", "terminal") if reach else ():  # the host outside was tried, by both
            assert any(r["what"].startswith("connect to a host outside") for r in found[where]["legitimate"])
    return counted(found)


def test_a_hostile_agent_and_its_command_reach_nothing_outside_the_sandbox(start_server: ServerFactory) -> None:
    attempts, escapes, failed = attack_from_alice(start_server, "bwrap")
    print(f"\nsandbox bwrap: {attempts} attempts, {len(escapes)} escapes")
    assert attempts >= 40  # about 24 by the agent, as many by its terminal command
    assert escapes == []
    assert failed == []  # its own workspace, its home, its /tmp


def test_without_a_sandbox_the_same_agent_gets_through(start_server: ServerFactory) -> None:
    """The attempts are real: with WEBCLIENT_SANDBOX=none they reach what bwrap keeps out."""
    attempts, escapes, failed = attack_from_alice(functools.partial(start_server, process=True), "none")
    print(f"\nsandbox none: {attempts} attempts, {len(escapes)} escapes")
    assert failed == []
    reached = [escape.split(" (")[0] for escape in escapes]
    for what in (
        "read another session's workspace file",
        "read the store",
        "read another person's home",
        "find the server's canary in the environment",
        "signal the server",
        "connect to PostgreSQL's port",
        "connect to the unix socket",
    ):
        for where in ("agent", "terminal"):
            assert any(escape.startswith(f"{where}: {what}") for escape in reached), f"{where}: {what}"


def test_with_the_network_on_an_agent_reaches_out_but_nothing_on_the_hosts_loopback(
    start_server: ServerFactory,
) -> None:
    """The server's port, PostgreSQL's, a port on 127.0.0.1 and 127.0.0.2, the same through the user-mode network's
    gateway, an abstract unix socket: refused to the agent and its terminal command; a host outside: reached."""
    attempts, escapes, failed = attack_from_alice(start_server, "bwrap", network=True)
    print(f"\nsandbox bwrap, network on: {attempts} attempts, {len(escapes)} escapes, failed: {failed}")
    assert attempts >= 50
    assert escapes == []
    assert failed == []  # its own folders, and (as root) the host outside


@pytest.mark.parametrize("config_in", ["etc", "workspace"])
def test_the_config_file_is_never_read_in_a_sandbox(start_server: ServerFactory, config_in: str) -> None:
    """The config file names agents with their keys: in a folder of /etc (with another file beside it), or in the
    agent's own workspace, neither the agent (which still starts) nor its terminal command reads it."""
    if config_in == "etc" and os.geteuid() != 0:
        pytest.skip("a folder of /etc is made as root only")
    attempts, escapes, failed = attack_from_alice(start_server, "bwrap", config_in=config_in)
    print(f"\nsandbox bwrap, config in {config_in}: {attempts} attempts, {len(escapes)} escapes")
    assert attempts >= 48
    assert escapes == []
    assert failed == []
