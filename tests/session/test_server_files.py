"""The server's own files are no agent's and no person's, whatever the roots: with the data folder (the secrets' key,
Bob's home and agent login) and the config file inside the workspace root, Alice's agent's ``fs/*`` requests, her
``/file`` view, her ``@`` menu and mentions and her Changes are refused them, while a file of the workspace still
works; and a server
whose agent's folder holds the data folder refuses to start, with one line saying why.

In-process (Starlette's test client against the real app, a real scripted agent): the start refusal keeps a server
process from running with such a root at all."""

from __future__ import annotations

import html
import json
import re
import secrets
import subprocess
import sys
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from starlette.exceptions import StarletteDeprecationWarning

from tests.support.people import SECRET_FILE, as_person
from tests.support.servers import AGENTS, ROOT, SCRIPTED_AGENT, server_command
from tests.support.urls import URLS
from webclient.agents.homes import home_of
from webclient.config import Settings
from webclient.proxy_proof import ProxyProof
from webclient.web.app import create_app

with warnings.catch_warnings():
    warnings.simplefilter("ignore", StarletteDeprecationWarning)
    from starlette.testclient import TestClient, WebSocketTestSession

ORIGIN = {"Origin": "http://localhost"}
CONFIG = f"""
[agents.scripted]
command = "{sys.executable}"
args = ["{AGENTS / "scripted_agent.py"}"]
"""


@contextmanager
def team_app(root: Path) -> Iterator[TestClient]:
    """The real app for a team (trusted-header, the test the proxy), its data folder and config file in ``root``,
    the agent's one folder."""
    config = root / "agents.toml"
    config.write_text(CONFIG + f'workspace = "{root}"\n')
    settings = Settings(
        config=config,
        auth="trusted-header",
        trusted_proxies=("127.0.0.1",),
        proxy_proof=ProxyProof(secret_file=SECRET_FILE),  # as_person sends its secret
        data_dir=root / "data",
        demo_remote=False,
    )
    with TestClient(create_app(settings), base_url="http://localhost", client=("127.0.0.1", 50000)) as client:
        yield client


def start(client: TestClient, person: str) -> str:
    made = client.post(URLS.for_("new_session"), headers={**as_person(person), **ORIGIN}, follow_redirects=False)
    assert made.status_code == 303, made.text[:500]
    return str(made.headers["location"])


def ask(socket: WebSocketTestSession, text: str) -> str:
    """What the scripted agent said of one ``fs`` request (the JSON of its answer)."""
    socket.send_text(json.dumps({"action": "prompt", "prompt": text, "nonce": secrets.token_hex(8)}))
    while True:
        frame = html.unescape(socket.receive_text())
        found = re.search(r'\{"(?:result|error)": \{.*?\}\}', frame)
        if found:
            return found.group(0)


def test_an_agents_file_requests_never_reach_the_servers_own_files_inside_its_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    received = tmp_path.parent / f"{tmp_path.name}-received.jsonl"  # what the agent was sent (outside the root)
    monkeypatch.setenv("RECORD_FILE", str(received))
    with team_app(tmp_path) as client:
        start(client, "bob")  # Bob's home is made, with an agent's login in it
        login = home_of(tmp_path / "data", "bob") / ".claude" / ".credentials.json"
        login.parent.mkdir(parents=True)
        login.write_text("BOB-TOKEN")
        key = tmp_path / "data" / "secret.key"
        assert key.is_file()
        (tmp_path / "notes.txt").write_text("a file of the workspace")
        path = start(client, "alice")
        alice = {**as_person("alice"), **ORIGIN}
        with client.websocket_connect(URLS.for_("socket", session_id=path.rsplit("/", 1)[1]), headers=alice) as socket:
            socket.receive_text()  # the page as it is
            said = {name: ask(socket, f"fs read {name}") for name in (key, login, tmp_path / "agents.toml")}
            wrote = {
                name: ask(socket, f"fs write {name} planted")
                for name in (tmp_path / "data" / "planted", login, tmp_path / "agents.toml")
            }
            own = ask(socket, f"fs read {tmp_path / 'notes.txt'}")
            # An @ mention of the key reaches the agent as nothing, one of the workspace as a link.
            mentions = [str(key), "data/secret.key", "agents.toml", "notes.txt"]
            socket.send_text(json.dumps({"action": "prompt", "prompt": "mentions", "nonce": "m", "mention": mentions}))
            while "mentions" not in received.read_text() or '"end_turn"' not in socket.receive_text():
                pass
        prompts = [json.loads(line) for line in received.read_text().splitlines() if '"session/prompt"' in line]
        links = [block.get("uri", "") for block in prompts[-1]["params"]["prompt"] if block.get("type") != "text"]
        assert links == [(tmp_path / "notes.txt").as_uri()], links
        assert "a file of the workspace" in own  # the workspace itself works
        for name, answer in {**said, **wrote}.items():
            assert "the server's own" in answer and '"error"' in answer, (name, answer)
        assert "BOB-TOKEN" not in str(said) and key.read_bytes().decode() not in str(said)
        assert login.read_text() == "BOB-TOKEN" and not (tmp_path / "data" / "planted").exists()
        assert "planted" not in (tmp_path / "agents.toml").read_text()

        # Nor are they Alice's to see through the server: the file view, the @ menu, a mention.
        for name in (key, login, tmp_path / "agents.toml"):
            shown = client.get(path + "/file", params={"path": str(name)}, headers=alice)
            assert "the server" in html.unescape(shown.text) and "BOB-TOKEN" not in shown.text, shown.text[:300]
        listed = [client.get(path + "/mentions", params={"q": q}, headers=alice).text for q in ("secret", "agents.t")]
        assert all("No file matches" in menu and "data-path" not in menu for menu in listed), listed
        assert 'data-path="notes.txt"' in client.get(path + "/mentions", params={"q": "notes"}, headers=alice).text

        # Nor in Changes: Bob's agent renews its login, the store writes; Alice's own file changes and is listed.
        login.write_text("BOB-TOKEN-2")
        (tmp_path / "notes.txt").write_text("changed")
        deadline = time.monotonic() + 20
        while "notes.txt" not in (changes := client.get(path + "/changes", headers=alice).text):
            assert time.monotonic() < deadline, changes
            time.sleep(0.2)
        assert "credentials" not in changes and "data/" not in changes and "agents.toml" not in changes, changes


@pytest.mark.process
def test_a_server_whose_agent_folder_holds_the_data_folder_refuses_to_start(tmp_path: Path) -> None:
    env = {"WEBCLIENT_DATA_DIR": str(tmp_path / "home" / ".local" / "share" / "webclient"), "PATH": "/usr/bin:/bin"}
    command = server_command("--agent", SCRIPTED_AGENT, "--workspace", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    ran = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=30)
    assert ran.returncode != 0
    lines = ran.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("webclient: the agent agent may use "), ran.stderr
    assert "holds the server's data folder" in lines[0] and "WEBCLIENT_DATA_DIR" in lines[0]
