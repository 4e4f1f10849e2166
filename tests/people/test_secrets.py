"""A person's secrets: kept encrypted, listed by name, given to their own new agents, never shown, logged or stored
in the clear."""

from __future__ import annotations

import json
import re
import secrets
import stat
from pathlib import Path

import pytest
from websockets.sync.client import connect

from tests.support.agent_env import ENV_AGENT, new_session, started_with
from tests.support.people import TEAM, as_person, person_client
from tests.support.servers import Server, ServerFactory
from tests.support.urls import URLS, socket_at

pytestmark = pytest.mark.process  # each test starts the server as a process: its subject

PAGE = URLS.for_("secrets")


def listed(text: str) -> list[str]:
    return re.findall(r'data-secret="([^"]+)"', text)


def output_of(server: Server) -> bytes:
    """Everything the server wrote (stdout and stderr), once it stopped."""
    server.process.terminate()
    server.process.wait(timeout=15)
    assert server.process.stdout is not None
    return server.process.stdout.read()


def test_secrets_reach_their_owners_agents_only_and_are_never_shown_logged_or_kept_in_the_clear(
    start_server: ServerFactory, tmp_path: Path
) -> None:
    report, data = tmp_path / "env.jsonl", tmp_path / "data"
    server = start_server(ENV_AGENT, ENV_REPORT=str(report), WEBCLIENT_DATA_DIR=str(data), **TEAM, process=True)
    alice, bob = person_client(server, "alice"), person_client(server, "bob")
    first, second = f"sk-first-{secrets.token_hex(12)}", f"sk-second-{secrets.token_hex(12)}"
    assert "No secrets yet" in alice.get(PAGE).text

    saved = alice.post(PAGE, data={"name": "OPENAI_API_KEY", "value": first})
    assert saved.status_code == 303
    page = alice.get(saved.headers["location"]).text
    assert listed(page) == ["OPENAI_API_KEY"] and "Saved OPENAI_API_KEY" in page and first not in page
    assert alice.post(PAGE, data={"name": "OPENAI_API_KEY", "value": second}).status_code == 303  # replaced
    alice.post(PAGE, data={"name": "Other_Key", "value": "x" * 40})
    page = alice.get(PAGE).text
    assert listed(page) == ["OPENAI_API_KEY", "Other_Key"] and first not in page and second not in page
    assert listed(bob.get(PAGE).text) == []  # alice's are hers

    for name, why in [
        ("1ABC", "letters, digits"),
        ("A-B", "letters, digits"),
        ("HOME", "set by the server"),
        ("XDG_CONFIG_HOME", "set by the server"),
        ("WEBCLIENT_TOKEN", "set by the server"),
        ("LD_PRELOAD", "set by the server"),
    ]:
        refused = alice.post(PAGE, data={"name": name, "value": "v"})
        assert refused.status_code == 400 and why in refused.text, name
    assert "empty" in alice.post(PAGE, data={"name": "EMPTY_ONE", "value": "  "}).text

    new_session(alice)
    hers = started_with(report, 1)[0]
    new_session(bob)
    his = started_with(report, 2)[1]
    assert hers["OPENAI_API_KEY"] == second and hers["Other_Key"] == "x" * 40
    assert "OPENAI_API_KEY" not in his

    assert alice.post(f"{PAGE}/delete", data={"name": "OPENAI_API_KEY"}).status_code == 303
    assert listed(alice.get(PAGE).text) == ["Other_Key"]
    new_session(alice)
    assert "OPENAI_API_KEY" not in started_with(report, 3)[2]

    key_file = data / "secret.key"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    said = output_of(server)
    for value in (first, second):
        assert value.encode() not in said
        for path in data.rglob("*"):  # the store (and its WAL), the key file, the homes
            assert not path.is_file() or value.encode() not in path.read_bytes(), path
        assert value not in server.record_file.read_text()  # nor in what the agent was sent over the protocol


def test_a_server_key_from_the_environment_and_a_changed_key_leaves_old_secrets_out(
    start_server: ServerFactory, tmp_path: Path
) -> None:
    report, data = tmp_path / "env.jsonl", tmp_path / "data"
    env = {"ENV_REPORT": str(report), "WEBCLIENT_DATA_DIR": str(data), **TEAM}
    server = start_server(ENV_AGENT, WEBCLIENT_SECRET_KEY="first key, long and random", **env, process=True)
    person_client(server, "alice").post(PAGE, data={"name": "API_KEY", "value": "kept-with-the-first-key"})
    new_session(person_client(server, "alice"))
    assert started_with(report, 1)[0]["API_KEY"] == "kept-with-the-first-key"
    assert not (data / "secret.key").exists()  # the configured key: no key file
    output_of(server)

    again = start_server(ENV_AGENT, WEBCLIENT_SECRET_KEY="another key", **env, process=True)
    alice = person_client(again, "alice")
    assert listed(alice.get(PAGE).text) == ["API_KEY"]
    new_session(alice)
    assert "API_KEY" not in started_with(report, 2)[1]  # it cannot be opened: left out, and the agent starts
    assert b"kept-with-the-first-key" not in output_of(again)


def test_a_session_resumed_after_a_restart_gets_its_owners_secrets_and_home(
    start_server: ServerFactory, tmp_path: Path
) -> None:
    report, data = tmp_path / "env.jsonl", tmp_path / "data"
    env = {"ENV_REPORT": str(report), "WEBCLIENT_DATA_DIR": str(data), **TEAM}
    first = start_server(ENV_AGENT, tmp_path / "workspace", **env, process=True)
    person_client(first, "alice").post(PAGE, data={"name": "API_KEY", "value": "for-alice-after-a-restart"})
    session_id = new_session(person_client(first, "alice"))
    before = started_with(report, 1)[0]
    output_of(first)

    again = start_server(ENV_AGENT, tmp_path / "workspace", **env, process=True)  # the same folder: it may resume there
    url = socket_at(again.url, session_id)
    with connect(url, additional_headers={**as_person("alice"), "Origin": again.url}) as socket:
        socket.recv(timeout=10)
        socket.send(json.dumps({"action": "resume"}))
        resumed = started_with(report, 2)[1]
    assert resumed["API_KEY"] == "for-alice-after-a-restart" and resumed["HOME"] == before["HOME"]
