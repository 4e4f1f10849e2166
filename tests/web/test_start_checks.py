"""What a server process says at start about the agents it offers (`webclient.agents.start_checks`): a command that
is not there stops the start naming the entry, a remote agent's missing key is said, and a remote agent that cannot
be reached names the URL it tried; the sign-in URL is printed once the server accepts connections."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from tests.support.agent_env import new_session
from tests.support.servers import ROOT, ServerFactory, free_port, server_command
from tests.support.urls import URLS


def start(tmp_path: Path, *options: str, **env: str) -> subprocess.Popen[str]:
    """``python -m webclient`` with ``options``, its own data folder, its stdout and stderr in one pipe."""
    full_env = {**os.environ, "WEBCLIENT_DATA_DIR": str(tmp_path / "data"), "WEBCLIENT_DEMO_REMOTE": "off", **env}
    full_env.pop("WEBCLIENT_AGENT", None)
    argv = server_command("--port", str(free_port()), *options)
    return subprocess.Popen(argv, cwd=ROOT, env=full_env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def refusal(tmp_path: Path, *options: str) -> str:
    """What a server that must refuse to start says, after checking it did stop."""
    process = start(tmp_path, *options)
    try:
        said, _ = process.communicate(timeout=30)
    finally:
        process.kill()
    assert process.returncode not in (0, None), said
    return said


@pytest.mark.process
def test_a_config_command_not_on_path_stops_the_start_naming_the_entry(tmp_path: Path) -> None:
    config = tmp_path / "agents.toml"
    config.write_text('[agents.helper]\ncommand = "no-such-agent-webclient-test"\n', encoding="utf-8")
    said = refusal(tmp_path, "--config", str(config))
    assert f"{config}: agent 'helper': command 'no-such-agent-webclient-test' is not on PATH" in said
    assert "Traceback" not in said


@pytest.mark.process
def test_an_agent_command_not_on_path_or_not_executable_stops_the_start(tmp_path: Path) -> None:
    said = refusal(tmp_path, "--agent", "no-such-agent-webclient-test --acp")
    assert "--agent (agent 'agent'): command 'no-such-agent-webclient-test' is not on PATH" in said
    plain = tmp_path / "agent.sh"
    plain.write_text("#!/bin/sh\n", encoding="utf-8")
    said = refusal(tmp_path, "--agent", str(plain))
    assert f"command '{plain}' is not an executable file" in said


@pytest.mark.process
def test_a_missing_api_key_env_variable_is_said_at_start(tmp_path: Path) -> None:
    config = tmp_path / "agents.toml"
    config.write_text(
        '[agents.research]\nurl = "http://127.0.0.1:9/v1"\napi_key_env = "WEBCLIENT_TEST_NO_SUCH_KEY"\n',
        encoding="utf-8",
    )
    process = start(tmp_path, "--config", str(config))
    try:
        assert process.stdout is not None
        lines = [process.stdout.readline() for _ in range(3)]
    finally:
        process.terminate()
        process.communicate(timeout=15)
    assert "open http://" in lines[0]  # the first line is still the one to click
    assert (
        "the agent 'research': its api_key_env variable WEBCLIENT_TEST_NO_SUCH_KEY is not set: "
        "http://127.0.0.1:9/v1 is asked without a key" in lines[2]
    ), lines


@pytest.mark.process
def test_the_sign_in_url_is_printed_once_the_server_accepts_connections(tmp_path: Path) -> None:
    """The line to click works the moment it shows; uvicorn's own start-up lines do not come before it."""
    process = start(tmp_path)
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        printed = re.search(r"http://\S+/\?token=\S+", first)
        assert printed is not None, first
        port = int(re.search(r":(\d+)/", printed[0])[1])  # type: ignore[index]
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            pass  # refused if the URL came before uvicorn bound its socket
        assert httpx.get(printed[0], follow_redirects=False).status_code == 303
    finally:
        process.terminate()
        process.communicate(timeout=15)


def test_a_remote_agent_that_cannot_be_reached_names_the_url_it_tried(start_server: ServerFactory) -> None:
    closed = free_port()  # nothing listens there
    server = start_server(agent=f"http://127.0.0.1:{closed}/v1")
    session_id = new_session(server.http())
    deadline = time.monotonic() + 20
    while f"http://127.0.0.1:{closed}/v1/meta could not be reached" not in (
        page := server.http().get(URLS.for_("session", session_id=session_id)).text
    ):
        assert time.monotonic() < deadline, page[-3000:]
        time.sleep(0.2)
