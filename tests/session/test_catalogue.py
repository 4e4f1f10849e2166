"""The catalogue of agents: a config file, ``--agent`` as one entry, the demo, a registry file and PATH."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from webclient.agents.catalogue import Catalogue, CatalogueError, UnknownAgent, WorkspaceRefused
from webclient.config import Settings
from webclient.session.agent_spec import AgentSpec

REGISTRY = Path(__file__).parent / "fixtures" / "registry.json"


def settings(**env: str) -> Settings:
    return Settings.from_env(env)


def config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "agents.toml"
    path.write_text(text, encoding="utf-8")
    return path


def catalogue(tmp_path: Path, text: str, path_env: str = "", **env: str) -> Catalogue:
    return Catalogue.from_settings(settings(WEBCLIENT_CONFIG=str(config(tmp_path, text)), **env), path_env=path_env)


def fake_program(folder: Path, name: str) -> Path:
    folder.mkdir(exist_ok=True)
    program = folder / name
    program.write_text("#!/bin/sh\nexit 0\n")
    program.chmod(0o755)
    return program


def test_without_settings_the_demo_alone_is_offered() -> None:
    entries = Catalogue.from_settings(settings(), path_env="").entries
    assert list(entries) == ["demo"]
    assert entries["demo"].argv[1:] == ["-m", "demo_agent"]
    assert entries["demo"].template is not None  # a fresh copy of the sample per session


def test_agent_becomes_a_one_entry_catalogue_before_the_demo(tmp_path: Path) -> None:
    chosen = Catalogue.from_settings(
        settings(WEBCLIENT_AGENT="my-agent --flag 'a b'", WEBCLIENT_WORKSPACE=str(tmp_path), WEBCLIENT_TERMINALS="off"),
        path_env="",
    )
    assert list(chosen.entries) == ["agent", "demo"]
    assert chosen.default.argv == ["my-agent", "--flag", "a b"]
    assert chosen.default.workspace == tmp_path.resolve() and chosen.default.terminals is False
    # The demo keeps to its own sample copy, out of the user's folder.
    assert chosen.get("demo").workspace is None and chosen.get("demo").template is not None
    assert chosen.get(None) is chosen.get("") is chosen.default


def test_a_config_file_with_every_field(tmp_path: Path) -> None:
    (tmp_path / "project").mkdir()
    text = """
        [agents.first]
        command = "npx"
        args = ["-y", "@example/agent"]
        env = { API_KEY = "k" }
        workspace = "project"
        extra_roots = ["/srv/shared"]
        file_access = "read-only"
        terminals = false
        start_timeout = 30
        protocol = "acp"
        description = "The first"

        [agents.second]
        command = "second-agent"
    """
    entries = catalogue(tmp_path, text, WEBCLIENT_FILE_ACCESS="none", WEBCLIENT_START_TIMEOUT="7").entries
    assert list(entries) == ["first", "second", "demo"]
    first, second = entries["first"], entries["second"]
    assert first.argv == ["npx", "-y", "@example/agent"] and first.env == {"API_KEY": "k"}
    assert first.workspace == (tmp_path / "project").resolve()  # relative to the file's folder
    assert first.extra_roots == (Path("/srv/shared"),)
    assert (first.file_access, first.terminals, first.start_timeout) == ("read-only", False, 30.0)
    assert first.description == "The first" and first.protocol == "acp"
    # Fields left out take the server-wide settings.
    assert second.argv == ["second-agent"] and second.env is None
    assert (second.file_access, second.terminals, second.start_timeout) == ("none", True, 7.0)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[agents.a\n", "not valid TOML"),
        ("[other]\nx = 1\n", "unknown section 'other'"),
        ("agents = 3\n", "agents must be tables"),
        ('[agents."bad name"]\ncommand = "x"\n', "agent 'bad name': the name may hold"),
        ('[agents.demo]\ncommand = "x"\n', "agent 'demo': the name is the built-in demo agent's"),
        ("[agents.a]\nargs = []\n", "agent 'a': field command: missing"),
        ("[agents.a]\ncommand = 3\n", "agent 'a': field command: must be a string"),
        ('[agents.a]\ncommand = "x"\nargs = "y"\n', "agent 'a': field args: must be a list of strings"),
        ('[agents.a]\ncommand = "x"\nenv = { K = 1 }\n', "agent 'a': field env: must be a table of strings"),
        ('[agents.a]\ncommand = "x"\nworkspace = 1\n', "agent 'a': field workspace: must be a string"),
        ('[agents.a]\ncommand = "x"\nextra_roots = [1]\n', "agent 'a': field extra_roots: must be a list"),
        ('[agents.a]\ncommand = "x"\nfile_access = "all"\n', "agent 'a': field file_access: must be one of"),
        ('[agents.a]\ncommand = "x"\nterminals = "yes"\n', "agent 'a': field terminals: must be true or false"),
        ('[agents.a]\ncommand = "x"\nstart_timeout = 0\n', "agent 'a': field start_timeout: must be a number"),
        ('[agents.a]\ncommand = "x"\nprotocol = "xyz"\n', "field protocol: 'xyz' is not supported: only acp, aap"),
        ('[agents.a]\nprotocol = "aap"\n', "field url: missing or not an http(s):// URL"),
        ('[agents.a]\nurl = "ftp://x"\n', "field url: missing or not an http(s):// URL"),
        ('[agents.a]\nurl = "http://x"\ncommand = "x"\n', 'field command: a remote agent (protocol = "aap")'),
        ('[agents.a]\ncommand = "x"\nagent = "y"\n', "field agent: only for a remote agent"),
        ('[agents.a]\nurl = "http://x"\napi_key_env = "A-B"\n', "field api_key_env: must name an environment"),
        ('[agents.a]\nurl = "http://x"\noptions = { n = 1 }\n', "field options: must be a table of strings"),
        ('[agents.a]\ncommand = "x"\nacp_protocol = 3\n', "agent 'a': field acp_protocol: must be 1 or 2"),
        (
            '[agents.a]\ncommand = "x"\nmodel = "m"\n',
            "agent 'a': field model: unknown (known: acp_protocol, agent, api_key_env, args,",
        ),
        ("[registry]\npath = 'r.json'\n", "[registry]: field file must be a string"),
        ("[agents]\na = 1\n", "agent 'a': must be a table"),
    ],
)
def test_every_mistake_names_the_file_the_agent_and_the_field(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(CatalogueError) as refused:
        catalogue(tmp_path, text)
    assert str(refused.value).startswith(f"{tmp_path / 'agents.toml'}: ")
    assert message in str(refused.value)


def test_a_missing_config_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(CatalogueError, match="missing.toml: cannot be read"):
        Catalogue.from_settings(settings(WEBCLIENT_CONFIG=str(tmp_path / "missing.toml")), path_env="")


def test_unknown_agents_are_refused() -> None:
    with pytest.raises(UnknownAgent, match="No agent called 'nobody'"):
        Catalogue.from_settings(settings(), path_env="").get("nobody")


def test_registry_agents_are_offered_when_they_can_start_from_path(tmp_path: Path) -> None:
    bin_folder = tmp_path / "bin"
    fake = fake_program(bin_folder, "fake-acp")
    npx = fake_program(bin_folder, "npx")
    entries = Catalogue.from_settings(settings(WEBCLIENT_REGISTRY=str(REGISTRY)), path_env=str(bin_folder)).entries
    # No uvx on this PATH, and nobody installed absent-acp.
    assert list(entries) == ["fake-binary", "node-agent", "demo"]
    assert entries["fake-binary"].argv == [str(fake), "--acp"] and entries["fake-binary"].env == {"FAKE": "1"}
    assert entries["fake-binary"].description == "A binary distribution whose command the tests put on PATH"
    assert entries["node-agent"].argv == [str(npx), "-y", "@example/node-agent@0.85.1", "--stdio"]

    uvx = fake_program(bin_folder, "uvx")
    found = Catalogue.from_settings(settings(WEBCLIENT_REGISTRY=str(REGISTRY)), path_env=str(bin_folder)).entries
    assert found["python-agent"].argv == [str(uvx), "--from", "python-agent==2.0.0", "python-agent-acp"]


def test_the_config_names_a_registry_and_its_own_agents_win(tmp_path: Path) -> None:
    shutil.copy(REGISTRY, tmp_path / "registry.json")
    bin_folder = tmp_path / "bin"
    fake_program(bin_folder, "npx")
    text = '[agents.node-agent]\ncommand = "mine"\n\n[registry]\nfile = "registry.json"\n'
    entries = catalogue(tmp_path, text, path_env=str(bin_folder)).entries
    assert list(entries) == ["node-agent", "demo"]
    assert entries["node-agent"].argv == ["mine"]


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ("{", "not valid JSON"),
        ('{"version": "2.0.0", "agents": []}', "not a registry file of version 1"),
        ('{"version": "1.0.0", "agents": {}}', "field agents must be a list"),
        ('{"version": "1.0.0", "agents": [{"id": "Bad"}]}', "agent #1: field id must be"),
        ('{"version": "1.0.0", "agents": [{"id": "a", "distribution": {}}]}', "agent 'a': field distribution"),
        (
            '{"version": "1.0.0", "agents": [{"id": "a", "distribution": {"npx": {"package": 1}}}]}',
            "agent 'a': field distribution.npx.package must be a string",
        ),
    ],
)
def test_registry_mistakes_name_the_file_and_the_agent(tmp_path: Path, document: str, message: str) -> None:
    path = tmp_path / "registry.json"
    path.write_text(document)
    with pytest.raises(CatalogueError) as refused:
        Catalogue.from_settings(settings(WEBCLIENT_REGISTRY=str(path)), path_env="")
    assert str(refused.value).startswith(f"{path}: ") and message in str(refused.value)


def test_a_chosen_workspace_must_be_a_folder_inside_the_agents_roots(tmp_path: Path) -> None:
    inside, shared, outside = tmp_path / "work" / "app", tmp_path / "shared", tmp_path / "elsewhere"
    for folder in (inside, shared, outside):
        folder.mkdir(parents=True)
    (tmp_path / "work" / "escape").symlink_to(outside)
    (tmp_path / "work" / "file.txt").write_text("x")
    entry = Catalogue.from_settings(
        settings(WEBCLIENT_AGENT="a", WEBCLIENT_WORKSPACE=str(tmp_path / "work"), WEBCLIENT_EXTRA_ROOTS=str(shared)),
        path_env="",
    ).default
    assert entry.choose(str(inside)) == inside.resolve()
    assert entry.choose(str(shared)) == shared.resolve()
    for refused, why in [
        (str(outside), "is outside what the agent agent may use"),
        (str(tmp_path / "work" / "escape"), "is outside"),  # a symlink out
        (str(tmp_path / "work" / ".." / "elsewhere"), "is outside"),
        (str(tmp_path / "work" / "file.txt"), "is not a folder"),
        (str(tmp_path / "work" / "missing"), "is not a folder"),
        ("work/app", "must be an absolute path"),
    ]:
        with pytest.raises(WorkspaceRefused, match=why):
            entry.choose(refused)
    # The demo works in a fresh copy of its sample: there is no folder to choose.
    demo = Catalogue.from_settings(settings(WEBCLIENT_AGENT="a"), path_env="").get("demo")
    with pytest.raises(WorkspaceRefused, match="fresh copy"):
        demo.choose(os.getcwd())


def test_a_remote_agent_is_reached_by_its_url_with_its_key_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RESEARCH_KEY", "k-secret")
    text = (
        '[agents.research]\nurl = "https://agents.example.com/v1"\nagent = "research-agent"\n'
        'api_key_env = "RESEARCH_KEY"\noptions = { language = "French" }\n'
    )
    entry = catalogue(tmp_path, text).get("research")
    spec = AgentSpec(entry, tmp_path, max_line_bytes=1024)
    assert (entry.protocol, spec.entry.url, spec.entry.remote_agent, spec.entry.argv) == (
        "aap",
        "https://agents.example.com/v1",
        "research-agent",
        [],
    )
    assert spec.entry.api_key == "k-secret" and dict(spec.entry.remote_options or {}) == {"language": "French"}
    assert "k-secret" not in repr(entry) and "k-secret" not in repr(spec)


def test_agent_given_as_a_url_is_a_remote_agent(tmp_path: Path) -> None:
    entry = Catalogue.from_settings(
        settings(WEBCLIENT_AGENT="http://127.0.0.1:9/v1", WEBCLIENT_AAP_AGENT="helper", WEBCLIENT_AAP_KEY="k-1"),
        path_env="",
    ).get("agent")
    spec = AgentSpec(entry, tmp_path, max_line_bytes=1024)
    assert (spec.entry.url, spec.entry.remote_agent, spec.entry.api_key, spec.entry.argv) == (
        "http://127.0.0.1:9/v1",
        "helper",
        "k-1",
        [],
    )
    assert "k-1" not in repr(settings(WEBCLIENT_AAP_KEY="k-1"))


def test_the_remote_demo_is_offered_when_its_server_runs(tmp_path: Path) -> None:
    offered = Catalogue.from_settings(settings(), path_env="", demo_remote="http://127.0.0.1:5/")
    assert list(offered.entries) == ["demo", "demo-remote"]
    assert offered.get("demo-remote").url == "http://127.0.0.1:5/"
    assert "demo-remote" not in Catalogue.from_settings(settings(), path_env="").entries


def test_the_acp_version_comes_from_the_entry_else_from_the_environment(tmp_path: Path) -> None:
    text = '[agents.old]\ncommand = "x"\n[agents.new]\ncommand = "y"\nacp_protocol = 2\n'
    (tmp_path / "agents.toml").write_text(text)
    config = str(tmp_path / "agents.toml")
    plain = Catalogue.from_settings(settings(WEBCLIENT_CONFIG=config), path_env="")
    assert [AgentSpec(plain.get(name), tmp_path).entry.acp_protocol for name in ("old", "new", "demo")] == [1, 2, 1]
    two = Catalogue.from_settings(settings(WEBCLIENT_CONFIG=config, WEBCLIENT_ACP_PROTOCOL="2"), path_env="")
    assert [two.get(name).acp_protocol for name in ("old", "new", "demo")] == [2, 2, 2]
    (tmp_path / "agents.toml").write_text(text.replace("acp_protocol = 2", "acp_protocol = 1"))
    assert (
        Catalogue.from_settings(settings(WEBCLIENT_CONFIG=config, WEBCLIENT_ACP_PROTOCOL="2"), path_env="")
        .get("new")
        .acp_protocol
        == 1
    )


def test_a_wrong_acp_version_in_the_environment_is_refused() -> None:
    with pytest.raises(ValueError, match="WEBCLIENT_ACP_PROTOCOL must be 1 or 2"):
        settings(WEBCLIENT_ACP_PROTOCOL="3")
