"""A session's worktree in a sandbox (`webclient.agents.session_worktrees`): its agent writes the worktree (inside the
hidden data folder) and runs git there, which writes the repository's ``.git``; the rest of the data folder stays
unseen."""

from __future__ import annotations

import subprocess
import sys

from tests.sandbox.attack import outside_tmp
from tests.workspace.test_worktrees import repository
from webclient.agents.sandboxing import confine
from webclient.agents.session_worktrees import in_sandbox
from webclient.config import Settings
from webclient.session.agent_entry import AgentEntry
from webclient.session.agent_spec import AgentSpec
from webclient.workspace import worktrees
from webclient.workspace.sandbox_host import installation


def test_the_agent_commits_in_its_worktree_and_sees_nothing_else_of_the_data_folder() -> None:
    with outside_tmp() as base:
        data = base / "data"
        data.mkdir()
        (data / "webclient.sqlite3").write_text("the store")
        repo = repository(base / "repo")
        made = worktrees.add(repo, data / "worktrees" / "s1", "webclient/s1")
        settings = Settings.from_env({"WEBCLIENT_SANDBOX": "bwrap", "WEBCLIENT_DATA_DIR": str(data)})
        spec = in_sandbox(confine(AgentSpec(AgentEntry("agent", ["agent"]), made.path), settings), made)
        assert made.git_folder == repo / ".git" and made.git_folder in spec.sandbox.writable
        policy = spec.sandbox.reading(*installation([sys.executable], ""))
        script = """
import subprocess
git = ["git", "-c", "user.name=Agent", "-c", "user.email=agent@example.org"]
open("notes.txt", "w").write("the agent's\\n")
subprocess.run(git + ["commit", "--quiet", "-am", "by the agent"], check=True)
try:
    open("../../webclient.sqlite3").read()
    print("store: read")
except OSError:
    print("store: unseen")
"""
        command = policy.command([sys.executable, "-c", script], made.path)
        done = subprocess.run(command, capture_output=True, text=True, timeout=60, env={"PATH": "/usr/bin:/bin"})
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "store: unseen"
        log = subprocess.run(["git", "-C", str(repo), "log", "-1", "--format=%s", "webclient/s1"], capture_output=True)
        assert log.stdout.decode().strip() == "by the agent"
