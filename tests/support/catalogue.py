"""A server with a catalogue of two scripted agents, each recording what it receives in a file of its own."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.servers import AGENTS, Server, ServerFactory
from tests.support.waiting import records


@dataclass
class Catalogued:
    server: Server
    home: Path
    """alpha's workspace; ``home/project`` is a folder inside it."""
    shared: Path
    """alpha's extra root."""
    outside: Path
    """A folder no agent may use."""

    def received(self, agent: str) -> list[dict[str, Any]]:
        return records(self.home.parent / f"{agent}.jsonl")

    def session_new(self, agent: str) -> list[dict[str, Any]]:
        return [m for m in self.received(agent) if m.get("method") == "session/new"]


def start_catalogued(start_server: ServerFactory, tmp_path: Path) -> Catalogued:
    home, shared, outside = tmp_path / "home", tmp_path / "shared", tmp_path / "outside"
    for folder in (home / "project", shared / "docs", outside):
        folder.mkdir(parents=True)
    script = json.dumps(str(AGENTS / "scripted_agent.py"))
    agents = [
        f"""
        [agents.{name}]
        command = {json.dumps(sys.executable)}
        args = [{script}]
        env = {{ RECORD_FILE = {json.dumps(str(tmp_path / f"{name}.jsonl"))} }}
        workspace = {json.dumps(str(home))}
        extra_roots = [{json.dumps(str(shared))}]
        description = "Scripted agent {name}"
        """
        for name in ("alpha", "beta")
    ]
    config = tmp_path / "agents.toml"
    config.write_text("\n".join(agents), encoding="utf-8")
    server = start_server(WEBCLIENT_CONFIG=str(config))
    return Catalogued(server, home, shared, outside)
