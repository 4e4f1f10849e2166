"""From inside: a hostile agent of our own (``tests/agents/hostile_agent.py``) and a terminal command it starts try to
reach another session's workspace, the data folder and the store, another person's home, the server's home, its
environment and its process, another agent, and (network off) the server's port, PostgreSQL's and an outside
address. Under ``WEBCLIENT_SANDBOX=bwrap`` every attempt fails and what an agent must do still works; without a
sandbox the same agent gets through (so the attempts are real). Workspaces and the data folder lie outside /tmp."""

from __future__ import annotations

import asyncio
import secrets
from pathlib import Path

from tests.sandbox.attack import (
    HOSTILE,
    Listeners,
    attack,
    counted,
    outside_tmp,
    server_home_file,
    targets,
)
from tests.store.conftest import running_cluster
from tests.support.people import TEAM, person_client
from tests.support.servers import Server, ServerFactory


def new_session(server: Server, person: str, workspace: Path) -> str:
    response = person_client(server, person).post("/sessions", data={"workspace": str(workspace)})
    assert response.status_code == 303, response.text[:300]
    return str(response.headers["location"]).rsplit("/", 1)[1]


def attack_from_alice(start_server: ServerFactory, sandbox: str) -> tuple[int, list[str], list[str]]:
    """Alice's hostile agent attacks Bob's session, home and agent, the server and the network; counted."""
    canary = f"canary-{secrets.token_hex(8)}"
    with (
        outside_tmp() as base,
        server_home_file() as home_file,
        Listeners() as listeners,
        running_cluster("webclient-pg-sandbox-") as postgresql,
    ):
        workspaces, data = base / "workspaces", base / "data"
        alice, bob = workspaces / "alice", workspaces / "bob"
        for folder in (alice, bob):
            folder.mkdir(parents=True)
        server = start_server(
            HOSTILE,
            workspace=workspaces,
            WEBCLIENT_DATA_DIR=str(data),
            WEBCLIENT_SANDBOX=sandbox,
            WEBCLIENT_SANDBOX_NETWORK="off",
            SANDBOX_CANARY=canary,  # in the server's environment: no agent may see it
            **TEAM,
        )
        new_session(server, "bob", bob)
        alices = new_session(server, "alice", alice)
        tcp = [("127.0.0.1", int(server.url.rsplit(":", 1)[1]), "the server's port")]
        tcp.append(("127.0.0.1", postgresql.port, "PostgreSQL's port"))
        aim = targets(server, bob, data, "bob", home_file, canary, listeners, tcp)
        found = asyncio.run(attack(server, alices, "alice", aim, alice))
    return counted(found)


def test_a_hostile_agent_and_its_command_reach_nothing_outside_the_sandbox(start_server: ServerFactory) -> None:
    attempts, escapes, failed = attack_from_alice(start_server, "bwrap")
    print(f"\nsandbox bwrap: {attempts} attempts, {len(escapes)} escapes")
    assert attempts >= 40  # about 24 by the agent, as many by its terminal command
    assert escapes == []
    assert failed == []  # its own workspace, its home, its /tmp


def test_without_a_sandbox_the_same_agent_gets_through(start_server: ServerFactory) -> None:
    """The attempts are real: with WEBCLIENT_SANDBOX=none they reach what bwrap keeps out."""
    attempts, escapes, failed = attack_from_alice(start_server, "none")
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
    ):
        for where in ("agent", "terminal"):
            assert any(escape.startswith(f"{where}: {what}") for escape in reached), f"{where}: {what}"
