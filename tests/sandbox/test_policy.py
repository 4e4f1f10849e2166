"""The sandbox policy (`webclient.workspace.sandbox`) as the command line it makes, and that command line run by the
real bwrap: what is seen, written, hidden, and which variables come in."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.sandbox.attack import outside_tmp
from webclient.agents.sandboxing import confine, server_sandbox
from webclient.config import Settings
from webclient.session.agent_entry import AgentEntry
from webclient.session.agent_spec import AgentSpec
from webclient.workspace.sandbox import UNCONFINED, Mount, Sandbox
from webclient.workspace.sandbox_host import (
    SandboxUnavailable,
    find_bwrap,
    find_user_network,
    installation,
    probe,
    system_mounts,
)

BWRAP = find_bwrap()


def sandbox(**fields: object) -> Sandbox:
    assert BWRAP is not None, "bwrap is not installed: scripts/ensure-bubblewrap"
    return Sandbox(bwrap=BWRAP, system=system_mounts(), **fields)  # type: ignore[arg-type]


def run(policy: Sandbox, script: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``python -c script`` (the test's own Python, which the policy is given to read) in ``policy``."""
    policy = policy.reading(*installation([sys.executable], ""))
    command = policy.command([sys.executable, "-c", script], cwd)
    return subprocess.run(command, capture_output=True, text=True, timeout=30, env=env or {"PATH": "/usr/bin:/bin"})


def test_unconfined_changes_nothing_but_the_servers_own_settings() -> None:
    assert UNCONFINED.command(["agent", "--flag"], Path("/srv")) == ["agent", "--flag"]
    server = {"PATH": "/usr/bin", "WEBCLIENT_TOKEN": "t", "AWS_SECRET": "s"}
    assert UNCONFINED.environment(server, {"OWN": "1"}) == {"PATH": "/usr/bin", "AWS_SECRET": "s", "OWN": "1"}
    assert UNCONFINED.name == "none" and not UNCONFINED.confined


def test_the_environment_in_a_sandbox_is_an_allow_list_and_the_agents_own() -> None:
    policy = Sandbox(bwrap="/usr/bin/bwrap", home=Path("/data/homes/alice"))
    server = {"PATH": "/usr/bin", "LANG": "C.UTF-8", "LC_ALL": "C", "HOME": "/root", "AWS_SECRET": "s", "TERM": "x"}
    server["WEBCLIENT_TOKEN"] = "t"
    env = policy.environment(server, {"API_KEY": "the person's"})
    assert env == {
        "PATH": "/usr/bin",
        "LANG": "C.UTF-8",
        "LC_ALL": "C",
        "TERM": "x",
        "HOME": "/data/homes/alice",
        "API_KEY": "the person's",
    }


def test_the_command_line_mounts_read_only_then_hides_then_writable() -> None:
    policy = Sandbox(
        bwrap="/usr/bin/bwrap",
        system=(Mount("ro-bind", "/usr"), Mount("symlink", "/lib", "usr/lib"), Mount("hide", "/etc/shadow")),
        readable=(Path("/srv/app"),),
        writable=(Path("/srv/app/data/homes/alice"), Path("/work/alice")),
        hidden=(Path("/srv/app/data"), Path("/elsewhere")),
    )
    argv = policy.command(["agent"], Path("/work/alice"))
    assert argv[:2] == ["/usr/bin/bwrap", "--unshare-all"]
    assert "--share-net" not in argv and "--die-with-parent" in argv and "--new-session" in argv
    assert argv[-4:] == ["--chdir", "/work/alice", "--", "agent"]
    joined = " ".join(argv)
    order = [
        "--ro-bind /usr /usr",
        "--ro-bind /dev/null /etc/shadow",
        "--ro-bind-try /srv/app /srv/app",
        "--tmpfs /srv/app/data",
        "--bind-try /srv/app/data/homes/alice /srv/app/data/homes/alice",
        "--remount-ro /",
    ]
    assert [joined.index(part) for part in order] == sorted(joined.index(part) for part in order)
    assert "/elsewhere" not in joined  # nothing shows it: no mount needed
    # The network on: never the host's (no --share-net), a user-mode one started around bwrap, the command held
    # until it is up, and its resolver the user-mode network's.
    helper = ("/usr/bin/python3", "sandbox_network.py", "/usr/bin/slirp4netns")
    networked = Sandbox(bwrap="/usr/bin/bwrap", network=True, user_network=helper).command(["a"], Path("/"))
    assert "--share-net" not in networked and networked[: len(helper) + 2] == [*helper, "--", "/usr/bin/bwrap"]
    assert " --info-fd 3 --block-fd 4 " in " ".join(networked) and "--ro-bind-data 5 /etc/resolv.conf" in " ".join(
        networked
    )
    with pytest.raises(OSError, match="slirp4netns is not installed"):
        Sandbox(bwrap="/usr/bin/bwrap", network=True).command(["a"], Path("/"))
    # A data folder inside a workspace: the workspace is mounted first, the data folder hidden over it.
    inside = Sandbox(bwrap="/usr/bin/bwrap", writable=(Path("/srv"),), hidden=(Path("/srv/data"),))
    joined = " ".join(inside.command(["agent"], Path("/srv")))
    places = [joined.index(part) for part in ("--bind-try /srv /srv", "--tmpfs /srv/data", "--remount-ro /srv/data")]
    assert places == sorted(places)


def test_an_agents_installation_is_its_prefix_its_scripts_folder_and_never_a_top_folder(tmp_path: Path) -> None:
    prefix = tmp_path / "opt" / "agent"
    (prefix / "bin").mkdir(parents=True)
    program = prefix / "bin" / "agent"
    program.write_text("#!/usr/bin/env node\n")
    program.chmod(0o755)
    script = tmp_path / "project" / "node_modules" / "pkg" / "dist" / "index.js"
    script.parent.mkdir(parents=True)
    script.write_text("")
    assert installation([str(program), str(script), "--flag"], "") == (prefix, tmp_path / "project")
    assert installation(["agent"], str(prefix / "bin")) == (prefix,)
    assert installation(["/usr/bin/env", "node"], "") == ()  # the system's: mounted anyway
    assert installation(["missing-program"], "/nowhere") == ()


def test_a_sandbox_sees_and_writes_only_what_the_policy_mounts() -> None:
    with outside_tmp() as base:
        app, data, work, other = base / "app", base / "app" / "data", base / "work", base / "other"
        for folder in (data / "homes" / "alice", work, other):
            folder.mkdir(parents=True)
        (data / "store.sqlite3").write_text("the store")
        (app / "agent.py").write_text("print('hi')")
        (other / "secret.txt").write_text("another's")
        policy = sandbox(
            readable=(app,), writable=(work, data / "homes" / "alice"), hidden=(data,), home=data / "homes" / "alice"
        )
        script = f"""
import os
def tried(what, act):
    try:
        act()
        print(what + ": worked")
    except OSError as error:
        print(what + ": failed", error.errno)
tried("read app", lambda: open({str(app / "agent.py")!r}).read())
tried("write app", lambda: open({str(app / "new.py")!r}, "w"))
tried("read store", lambda: open({str(data / "store.sqlite3")!r}).read())
tried("write data", lambda: open({str(data / "x")!r}, "w"))
tried("read other", lambda: open({str(other / "secret.txt")!r}).read())
tried("write work", lambda: open("mine.txt", "w").write("mine"))
tried("write home", lambda: open({str(data / "homes" / "alice" / "h")!r}, "w"))
tried("write root", lambda: open("/new-file", "w"))
tried("read shadow", lambda: open("/etc/shadow").read())
print("pids:", sorted(int(p) for p in os.listdir("/proc") if p.isdigit()))
"""
        done = run(policy, script, work)
        assert done.returncode == 0, done.stderr
        said = dict(line.split(": ", 1) for line in done.stdout.splitlines())
        assert said["read app"] == "worked" and said["write app"].startswith("failed")
        assert said["read store"].startswith("failed") and said["write data"].startswith("failed")
        assert said["read other"].startswith("failed") and said["write root"].startswith("failed")
        assert said["write work"] == "worked" and said["write home"] == "worked"
        assert said["read shadow"].startswith("failed")
        assert eval(said["pids"]) == [1, 2]  # bwrap's init and the command: no other process is seen
        assert (work / "mine.txt").read_text() == "mine" and not (data / "x").exists()


def test_the_probe_passes_here_and_refuses_a_bwrap_that_cannot_make_a_sandbox(tmp_path: Path) -> None:
    probe(sandbox())
    failing = tmp_path / "bwrap"
    failing.write_text("#!/bin/sh\necho 'bwrap: No permissions to creating new namespace' >&2\nexit 1\n")
    failing.chmod(0o755)
    with pytest.raises(SandboxUnavailable, match="No permissions to creating new namespace.*WEBCLIENT_SANDBOX=none"):
        probe(Sandbox(bwrap=str(failing)))


def test_bwrap_asked_for_but_missing_is_refused_never_run_without(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nowhere")
    settings = Settings.from_env({"WEBCLIENT_SANDBOX": "bwrap"})
    with pytest.raises(SandboxUnavailable, match="bwrap is not installed"):
        server_sandbox(settings)
    with pytest.raises(SandboxUnavailable):
        confine(AgentSpec(AgentEntry("agent", ["agent"]), Path("/srv")), settings)


def test_an_agent_gets_its_workspace_roots_home_installation_and_network_setting() -> None:
    settings = Settings.from_env({"WEBCLIENT_SANDBOX": "bwrap", "WEBCLIENT_SANDBOX_NETWORK": "off"})
    spec = AgentSpec(
        AgentEntry(
            "agent",
            [sys.executable, "-m", "agent"],
            env={"HOME": "/data/homes/alice"},
            extra_roots=(Path("/srv/shared"),),
            network=True,
        ),
        Path("/srv/work"),
    )
    policy = confine(spec, settings).sandbox
    assert policy.writable == (Path("/srv/work"), Path("/srv/shared"), Path("/data/homes/alice"))
    assert Path(sys.prefix) in policy.readable and policy.network and policy.home == Path("/data/homes/alice")
    assert not confine(
        AgentSpec(AgentEntry("agent", ["agent"]), Path("/srv")), settings
    ).sandbox.network  # the server's default
    assert confine(spec, Settings.from_env({})).sandbox is UNCONFINED


def test_a_sqlite_store_kept_outside_the_data_folder_is_hidden_too() -> None:
    with outside_tmp() as base:
        (base / "db").mkdir()
        (base / "data").mkdir()
        url = f"sqlite+aiosqlite:///{base / 'db' / 'store.sqlite3'}"
        env = {"WEBCLIENT_SANDBOX": "bwrap", "WEBCLIENT_DATA_DIR": str(base / "data"), "WEBCLIENT_DATABASE_URL": url}
        assert server_sandbox(Settings.from_env(env)).hidden == (base / "data", base / "db")


def test_with_only_etcs_allow_list_the_usual_commands_work_and_the_rest_of_etc_is_absent() -> None:
    """sh, git, node and Python start and work with the network on; TLS finds its roots, names resolve from
    /etc/hosts, users from /etc/passwd; a file of /etc outside the list is not there."""
    with outside_tmp() as base:
        work = base / "work"
        work.mkdir()
        policy = sandbox(writable=(work,), network=True, user_network=find_user_network())
        script = """
import os, socket, ssl, subprocess
run = lambda *argv: subprocess.run(argv, check=True, capture_output=True, text=True).stdout.strip()
print("sh:", run("sh", "-c", "echo ok"))
run("git", "init", "-q", "repo")
print("git:", run("git", "-C", "repo", "status", "--porcelain") == "")
print("node:", run("node", "-e", "console.log(require('os').userInfo().username.length > 0)"))
print("roots:", ssl.create_default_context().cert_store_stats()["x509_ca"] > 0)
print("localhost:", socket.gethostbyname("localhost"))
print("resolver:", open("/etc/resolv.conf").read().split())
print("os-release:", os.path.exists("/etc/os-release"))
print("others:", sorted(n for n in ("shadow", "machine-id", "fstab", "apt") if os.path.lexists("/etc/" + n)))
"""
        done = run(policy, script, work)
        assert done.returncode == 0, done.stderr
        said = dict(line.split(": ", 1) for line in done.stdout.splitlines())
        assert said["sh"] == "ok" and said["git"] == "True" and said["node"] == "true" and said["roots"] == "True"
        assert said["localhost"] == "127.0.0.1" and said["os-release"] == "True"
        assert said["resolver"] == "['nameserver', '10.0.2.3']"  # the user-mode network's own
        assert said["others"] == "[]"
