"""Sandbox bench: what ``WEBCLIENT_SANDBOX=bwrap`` costs to start an agent, against ``none``.

Run by hand: ``.venv/bin/python bench/sandbox.py [--runs N]``. Each run starts an agent the way the server does
(`webclient.acp.process.AgentProcess.spawn`, with the sandbox `webclient.agents.sandboxing.confine` makes for it:
its workspace and home writable, its installation read, network off, and again on: a network of its own through
slirp4netns) and times it from the spawn to its answer to ``initialize``; then stops it. Two agents: a minimal
raw-JSON one (stdlib only: the sandbox's own cost, nearly alone) and the built-in demo agent (``python -m
demo_agent``, the ACP SDK imported: a real agent's start). Runs alternate none, bwrap and bwrap with the network;
medians (and minimums) are printed, with the differences. Workspaces and the data folder are made in a temporary
folder under ``~/.cache`` and removed.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from webclient.acp.process import AgentProcess  # noqa: E402
from webclient.agents.sandboxing import confine  # noqa: E402
from webclient.config import Settings, demo_sample  # noqa: E402
from webclient.session.agent_entry import AgentEntry  # noqa: E402
from webclient.session.agent_spec import AgentSpec  # noqa: E402
from webclient.workspace.sandbox import UNCONFINED  # noqa: E402

MINIMAL = (
    "import json, sys\n"
    "for line in sys.stdin:\n"
    "    message = json.loads(line)\n"
    "    if message.get('method') == 'initialize':\n"
    "        answer = {'protocolVersion': 1, 'agentCapabilities': {}, 'authMethods': []}\n"
    "        print(json.dumps({'jsonrpc': '2.0', 'id': message['id'], 'result': answer}), flush=True)\n"
)
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": 1, "clientCapabilities": {}, "clientInfo": {"name": "bench", "version": "0"}},
}


async def start_once(spec: AgentSpec) -> float:
    """Seconds from spawning the agent to its answer to ``initialize``."""
    began = time.perf_counter()
    process = await AgentProcess.spawn(spec.entry.argv, cwd=spec.cwd, env=spec.env, sandbox=spec.sandbox)
    try:
        process.stdin.write((json.dumps(INITIALIZE) + "\n").encode())
        await process.stdin.drain()
        answer = json.loads(await asyncio.wait_for(process.stdout.readline(), 60))
        took = time.perf_counter() - began
        assert answer.get("id") == 1 and "result" in answer, answer
        return took
    finally:
        await process.shutdown(grace=1.0)


async def bench(runs: int) -> None:
    base = Path(tempfile.mkdtemp(prefix="sandbox-bench-", dir=Path.home() / ".cache"))
    try:
        workspace, home, data = base / "work", base / "data" / "homes" / "bench", base / "data"
        workspace.mkdir()
        home.mkdir(parents=True)
        settings = Settings.from_env(
            {"WEBCLIENT_SANDBOX": "bwrap", "WEBCLIENT_SANDBOX_NETWORK": "off", "WEBCLIENT_DATA_DIR": str(data)}
        )
        sample = demo_sample()
        demo_path = {"PYTHONPATH": str(sample.parent.parent)} if sample is not None else {}
        agents = {
            "minimal agent": AgentSpec(
                AgentEntry("agent", [sys.executable, "-c", MINIMAL], env={"HOME": str(home)}), workspace
            ),
            "demo agent": AgentSpec(
                AgentEntry(
                    "agent",
                    [sys.executable, "-m", "demo_agent"],
                    env={"HOME": str(home), **demo_path},
                    sandbox_read=(sample.parent,) if sample is not None else (),
                ),
                workspace,
            ),
        }
        for name, spec in agents.items():
            boxed = confine(spec, settings)
            plain = confine(spec, Settings.from_env({}))
            networked = dataclasses.replace(boxed, sandbox=dataclasses.replace(boxed.sandbox, network=True))
            assert boxed.sandbox.confined and plain.sandbox is UNCONFINED and networked.sandbox.user_network
            times: dict[str, list[float]] = {"none": [], "bwrap": [], "network": []}
            await start_once(plain)  # warm the page cache once for both
            for _ in range(runs):
                times["none"].append(await start_once(plain))
                times["bwrap"].append(await start_once(boxed))
                times["network"].append(await start_once(networked))
            medians = {case: statistics.median(found) * 1000 for case, found in times.items()}
            for case, found in times.items():
                print(f"{name:14} {case:6} median {medians[case]:6.1f} ms (min {min(found) * 1000:.1f}), {runs} runs")
            print(f"{name:14} bwrap costs {medians['bwrap'] - medians['none']:+.1f} ms a start (median against median)")
            print(f"{name:14} its network costs {medians['network'] - medians['bwrap']:+.1f} ms more (slirp4netns)")
    finally:
        shutil.rmtree(base, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=15, help="starts per case (default %(default)s)")
    args = parser.parse_args()
    asyncio.run(bench(args.runs))


if __name__ == "__main__":
    main()
