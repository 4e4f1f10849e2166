"""Each person's agents run in that person's own home (under the data folder, 0700, made on first use); in token
mode the agent keeps the user's own."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from tests.support.agent_env import ENV_AGENT, new_session, started_with
from tests.support.people import TEAM, person_client
from tests.support.servers import ServerFactory
from tests.support.urls import URLS
from webclient.agents.homes import home_of
from webclient.people.person import LOCAL


def test_each_persons_agent_runs_in_their_own_home(start_server: ServerFactory, tmp_path: Path) -> None:
    report, data = tmp_path / "env.jsonl", tmp_path / "data"
    server = start_server(ENV_AGENT, ENV_REPORT=str(report), WEBCLIENT_DATA_DIR=str(data), **TEAM)
    new_session(person_client(server, "alice"))
    alice = started_with(report, 1)[0]
    new_session(person_client(server, "bob/../../x"))
    bob = started_with(report, 2)[1]  # one at a time: agents start in the background, in no set order
    new_session(person_client(server, "alice"))
    alice_again = started_with(report, 3)[2]
    home = Path(alice["HOME"])
    assert home.parent.parent == data.resolve() and home.is_dir()  # under the data folder
    assert stat.S_IMODE(home.stat().st_mode) == 0o700 and stat.S_IMODE(home.parent.stat().st_mode) == 0o700
    assert alice_again["HOME"] == alice["HOME"] != bob["HOME"]  # the same person's, another person's apart
    assert Path(bob["HOME"]).parent == home.parent  # an id with slashes stays in the folder
    assert alice["XDG_CONFIG_HOME"] == str(home / ".config") and alice["XDG_CACHE_HOME"] == str(home / ".cache")
    assert alice["XDG_DATA_HOME"] == str(home / ".local" / "share")
    assert not any(name.startswith("WEBCLIENT_") for name in alice)  # the server's settings are its own


def test_in_token_mode_the_agent_keeps_the_users_home(start_server: ServerFactory, tmp_path: Path) -> None:
    report = tmp_path / "env.jsonl"
    server = start_server(ENV_AGENT, ENV_REPORT=str(report))
    new_session(server.http())
    assert started_with(report, 1)[0]["HOME"] == os.environ["HOME"]


def test_the_agents_own_sessions_are_listed_from_the_persons_home(start_server: ServerFactory, tmp_path: Path) -> None:
    """The page of the agent's own sessions asks an agent started as the person's own are: in their home."""
    report, data = tmp_path / "env.jsonl", tmp_path / "data"
    server = start_server(ENV_AGENT, ENV_REPORT=str(report), WEBCLIENT_DATA_DIR=str(data), **TEAM)
    bob = person_client(server, "bob")
    name = re.search(r'data-action="new-session" data-agent="([^"]+)"', bob.get("/").text)
    assert name is not None
    bob.get(URLS.for_("agent_sessions", agent=name[1]), headers={"Sec-Fetch-Site": "same-origin"})  # the index's link
    probe = started_with(report, 1)[0]
    new_session(bob)
    assert probe["HOME"] == started_with(report, 2)[1]["HOME"] != os.environ["HOME"]


def test_token_modes_home_of_before_is_not_the_home_of_a_person_named_local(
    start_server: ServerFactory, tmp_path: Path
) -> None:
    """Token mode in a sandbox kept its agents' logins in the home of its person, ``local`` until migration 0004: a
    person of a team the proxy names ``local`` starts in a home of their own, and token mode keeps its logins."""
    report, data = tmp_path / "env.jsonl", tmp_path / "data"
    logins = home_of(data, "local") / ".codex" / "auth.json"
    logins.parent.mkdir(parents=True)
    kept = '{"OPENAI_API_KEY": "the operator\'s"}'
    logins.write_text(kept)
    server = start_server(ENV_AGENT, ENV_REPORT=str(report), WEBCLIENT_DATA_DIR=str(data), **TEAM)
    new_session(person_client(server, "local"))
    home = Path(started_with(report, 1)[0]["HOME"])
    assert not (home / ".codex" / "auth.json").exists()
    assert (home_of(data, LOCAL.id) / ".codex" / "auth.json").read_text() == kept
