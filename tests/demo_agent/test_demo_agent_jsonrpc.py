"""The demo agent's own JSON-RPC (``demo_agent/jsonrpc.py``), read as bytes on its stdout: a line that is not JSON is
skipped unanswered, an unknown method and bad parameters are answered with their JSON-RPC errors, a long line is
taken whole, and the agent ends when its input does."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.demo_clients import AGENT_CMD, REPO, agent_env


async def answer(agent: asyncio.subprocess.Process, request_id: int) -> dict[str, Any]:
    """The agent's answer to request ``request_id`` (what it sends meanwhile, such as notifications, is skipped)."""
    assert agent.stdout is not None
    while True:
        message = json.loads(await asyncio.wait_for(agent.stdout.readline(), 10))
        if message.get("id") == request_id and "method" not in message:
            return message


def request(request_id: int, method: str, params: dict[str, Any]) -> bytes:
    return (json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}) + "\n").encode()


@pytest.mark.asyncio
async def test_the_demo_agent_answers_what_it_can_and_skips_what_is_not_json(tmp_path: Path) -> None:
    agent = await asyncio.create_subprocess_exec(
        *AGENT_CMD,
        cwd=REPO,
        env=agent_env("0"),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        limit=2**24,
    )
    assert agent.stdin is not None
    agent.stdin.write(
        b"this is not JSON\n" + request(1, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    )
    initialized = await answer(agent, 1)
    assert initialized["result"]["protocolVersion"] == 1

    long = "x" * 200_000  # three times asyncio's default line limit: the agent reads up to 50 MiB
    agent.stdin.write(request(2, "no/such_method", {"padding": long}))
    assert (await answer(agent, 2))["error"] == {
        "code": -32601,
        "message": "Method not found",
        "data": {"method": "no/such_method"},
    }

    agent.stdin.write(request(3, "session/new", {"cwd": "relative/path", "mcpServers": []}))
    assert (await answer(agent, 3))["error"] == {
        "code": -32602,
        "message": "Invalid params",
        "data": {"cwd": "must be an absolute path"},
    }

    agent.stdin.write(request(4, "session/new", {"cwd": str(tmp_path), "mcpServers": []}))
    assert (await answer(agent, 4))["result"]["sessionId"]

    agent.stdin.close()
    assert await asyncio.wait_for(agent.wait(), 10) == 0
