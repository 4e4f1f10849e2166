"""deploy/: the Kubernetes manifests, checked offline against Kubernetes' own schemas (kubernetes-validate, strict: an
unknown or misspelt field fails) and for what the server needs of them; and deploy/Dockerfile, as far as it can be
checked without a docker daemon (CI builds no image)."""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from tests.test_makefile import commands_of, read_rules
from webclient.agents.catalogue import Catalogue
from webclient.config import Settings

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
KUBERNETES = ("1.33", "1.37")
"""The Kubernetes versions the manifests are checked against: the first with user namespaces on by default, and the
newest kubernetes-validate ships (pyproject.toml asks for it)."""
Manifest = dict[str, Any]


def manifests() -> list[tuple[str, Manifest]]:
    """Every YAML document under deploy/, with the file it is in."""
    found = []
    for path in sorted(DEPLOY.rglob("*.yaml")):
        for document in yaml.safe_load_all(path.read_text(encoding="utf-8")):
            if document is not None:
                found.append((path.relative_to(DEPLOY).as_posix(), document))
    return found


def resources() -> list[tuple[str, Manifest]]:
    """The Kubernetes objects (kustomization.yaml is kustomize's, not the cluster's)."""
    return [(file, document) for file, document in manifests() if document["kind"] != "Kustomization"]


def the(kind: str) -> Manifest:
    [found] = [document for _, document in resources() if document["kind"] == kind]
    return found


def container() -> Manifest:
    [found] = the("Deployment")["spec"]["template"]["spec"]["containers"]
    return found


def env() -> dict[str, Manifest]:
    return {variable["name"]: variable for variable in container()["env"]}


def container_port(name: str = "http") -> int:
    [port] = [port["containerPort"] for port in container()["ports"] if port["name"] == name]
    return int(port)


def environment() -> dict[str, str]:
    """What the server's process gets: the Secret's values (envFrom) and the plain values of ``env``."""
    secret = the("Secret")
    assert [source["secretRef"]["name"] for source in container()["envFrom"]] == [secret["metadata"]["name"]]
    values = dict(secret["stringData"])
    values.update({name: variable["value"] for name, variable in env().items() if "value" in variable})
    return values


@pytest.mark.parametrize("version", KUBERNETES)
@pytest.mark.parametrize(
    "manifest", [document for _, document in resources()], ids=[f"{file}:{doc['kind']}" for file, doc in resources()]
)
def test_each_manifest_is_valid_for_kubernetes(manifest: Manifest, version: str) -> None:
    assert kubernetes_validate.validate(manifest, version, strict=True) == version  # that version's own schema


def test_strict_validation_refuses_an_unknown_field() -> None:
    """The check above would catch a misspelt field, not only a wrong type."""
    broken = the("Deployment")
    broken["spec"]["template"]["spec"]["containers"][0]["readinesProbe"] = {"httpGet": {"path": "/readyz"}}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, KUBERNETES[0], strict=True)


def test_the_kustomization_applies_every_manifest() -> None:
    [kustomization] = [document for _, document in manifests() if document["kind"] == "Kustomization"]
    files = {path.name for path in DEPLOY.glob("*.yaml")} - {"kustomization.yaml"}
    assert sorted(kustomization["resources"]) == sorted(files)
    [image] = kustomization["images"]
    assert image["name"] == container()["image"]


def test_probes_ask_readyz_for_readiness_and_healthz_for_liveness() -> None:
    probes = container()
    assert probes["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert probes["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert probes["startupProbe"]["httpGet"]["path"] == "/healthz"  # /readyz would fail a start that waits on nothing
    for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
        assert probes[probe]["httpGet"]["port"] == "http"


def test_the_grace_period_outlasts_the_drain() -> None:
    pod = the("Deployment")["spec"]["template"]["spec"]
    assert pod["terminationGracePeriodSeconds"] > float(environment()["WEBCLIENT_DRAIN_SECONDS"])


def test_a_rolling_deploy_keeps_every_instance_until_its_successor_is_ready() -> None:
    spec = the("Deployment")["spec"]
    assert spec["replicas"] == 3
    assert spec["strategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}}
    budget = the("PodDisruptionBudget")["spec"]
    assert budget["minAvailable"] == 2
    assert budget["selector"]["matchLabels"] == spec["template"]["metadata"]["labels"]


def test_the_instance_url_is_the_pods_own_address() -> None:
    variables = container()["env"]
    names = [variable["name"] for variable in variables]
    pod_ip = env()["POD_IP"]
    assert pod_ip["valueFrom"] == {"fieldRef": {"fieldPath": "status.podIP"}}
    # $(POD_IP) is expanded only from variables defined before it.
    assert names.index("POD_IP") < names.index("WEBCLIENT_INSTANCE_URL")
    assert env()["WEBCLIENT_INSTANCE_URL"]["value"] == f"http://$(POD_IP):{container_port()}"


def test_every_setting_named_is_one_the_server_reads() -> None:
    source = (ROOT / "webclient" / "config.py").read_text(encoding="utf-8")
    named = {name for name in environment() if name.startswith("WEBCLIENT_")}
    for path in DEPLOY.iterdir():  # also a name only mentioned: in a comment, the Dockerfile or the README
        named |= set(re.findall(r"WEBCLIENT_[A-Z0-9_]*[A-Z0-9]", path.read_text(encoding="utf-8")))
    unknown = {name for name in named if f'"{name}"' not in source}
    assert not unknown, f"config.py reads no such setting: {sorted(unknown)}"


def test_the_server_accepts_the_settings_and_the_agents_file(tmp_path: Path) -> None:
    """What the server reads at start from the manifests' values: Settings.from_env, the agents' config file (the
    ConfigMap's) and its check that no agent's folder holds the data folder."""
    values = environment()
    config = Path(values["WEBCLIENT_CONFIG"])
    [mount] = [m for m in container()["volumeMounts"] if config.is_relative_to(m["mountPath"])]
    [volume] = [v for v in the("Deployment")["spec"]["template"]["spec"]["volumes"] if v["name"] == mount["name"]]
    assert volume["configMap"]["name"] == the("ConfigMap")["metadata"]["name"]
    agents = tmp_path / "agents.toml"
    agents.write_text(the("ConfigMap")["data"][config.name], encoding="utf-8")
    settings = Settings.from_env({**values, "WEBCLIENT_CONFIG": str(agents)})
    assert (settings.auth, settings.sandbox, settings.sandbox_network) == ("oidc", "bwrap", False)
    assert settings.database_url is not None and settings.database_url.startswith("postgresql+asyncpg://")
    catalogue = Catalogue.from_settings(settings)
    catalogue.check_roots(settings)
    assert "claude" in catalogue.entries


def test_the_command_listens_on_the_container_port() -> None:
    args = container()["args"]
    assert container()["command"] == ["webclient"]
    assert args[args.index("--host") + 1] == "0.0.0.0"
    assert int(args[args.index("--port") + 1]) == container_port()


def test_the_service_reaches_the_container_port() -> None:
    service = the("Service")
    [port] = service["spec"]["ports"]
    assert (service["spec"]["type"], port["port"], port["targetPort"]) == ("ClusterIP", 80, container_port())
    assert service["spec"]["selector"] == the("Deployment")["spec"]["template"]["metadata"]["labels"]


def test_the_ingress_keeps_sockets_open_and_names_the_allowed_host() -> None:
    ingress = the("Ingress")
    annotations = ingress["metadata"]["annotations"]
    for timeout in ("proxy-read-timeout", "proxy-send-timeout"):
        assert int(annotations[f"nginx.ingress.kubernetes.io/{timeout}"]) >= 3600
    [rule] = ingress["spec"]["rules"]
    assert rule["host"] == environment()["WEBCLIENT_ALLOWED_HOSTS"]
    [path] = rule["http"]["paths"]
    assert path["backend"]["service"] == {"name": the("Service")["metadata"]["name"], "port": {"name": "http"}}


def test_the_instances_may_reach_each_other() -> None:
    policy = the("NetworkPolicy")["spec"]
    labels = the("Deployment")["spec"]["template"]["metadata"]["labels"]
    assert policy["podSelector"]["matchLabels"] == labels
    [rule] = policy["ingress"]
    assert {"podSelector": {"matchLabels": labels}} in rule["from"]
    assert rule["ports"] == [{"port": container_port(), "protocol": "TCP"}]


def test_the_sandbox_gets_user_namespaces_without_privilege() -> None:
    pod = the("Deployment")["spec"]["template"]["spec"]
    assert environment()["WEBCLIENT_SANDBOX"] == "bwrap"
    assert pod["hostUsers"] is False  # which Kubernetes requires for procMount: Unmasked
    assert pod["securityContext"]["seccompProfile"] == {"type": "Unconfined"}
    assert pod["securityContext"]["appArmorProfile"] == {"type": "Unconfined"}
    security = container()["securityContext"]
    assert security["procMount"] == "Unmasked"
    assert security.get("privileged") is not True
    assert security["allowPrivilegeEscalation"] is False
    assert security["capabilities"] == {"drop": ["ALL"]}
    assert pod["securityContext"]["runAsNonRoot"] is True


def test_the_data_folder_is_the_pods_own_and_homes_and_workspaces_are_shared() -> None:
    pod = the("Deployment")["spec"]["template"]["spec"]
    volumes = {volume["name"]: volume for volume in pod["volumes"]}
    mounts = {mount["mountPath"]: mount for mount in container()["volumeMounts"]}
    data = environment()["WEBCLIENT_DATA_DIR"]
    assert "emptyDir" in volumes[mounts[data]["name"]]
    claim = the("PersistentVolumeClaim")
    assert claim["spec"]["accessModes"] == ["ReadWriteMany"]
    agents = tomllib.loads(the("ConfigMap")["data"]["agents.toml"])["agents"]
    for shared in (f"{data}/homes", *(Path(agent["workspace"]).parent.as_posix() for agent in agents.values())):
        volume = volumes[mounts[shared]["name"]]
        assert volume["persistentVolumeClaim"]["claimName"] == claim["metadata"]["name"]


# -- deploy/Dockerfile, read as docker would (no daemon here: CI does not build it) --


def instructions() -> list[tuple[str, str]]:
    """The Dockerfile's instructions, continuation lines joined, comments left out."""
    text = re.sub(r"\\\n", " ", (DEPLOY / "Dockerfile").read_text(encoding="utf-8"))
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1]) for line in lines]


def copied() -> list[str]:
    sources = []
    for instruction, rest in instructions():
        if instruction == "COPY":
            words = [word for word in shlex.split(rest) if not word.startswith("--")]
            sources += words[:-1]
    return sources


def test_every_copied_path_is_in_the_repository() -> None:
    assert copied()
    for source in copied():
        assert (ROOT / source).exists(), f"COPY {source}: no such file in the repository"


def test_the_image_runs_the_makefiles_setup_with_what_it_reads() -> None:
    runs = " ".join(rest for instruction, rest in instructions() if instruction == "RUN")
    targets = re.findall(r"\bmake (\w[\w-]*)", runs)
    assert targets == ["setup"]
    prerequisites, recipes = read_rules()
    assert "setup" in recipes
    # Every file of the repository that the target depends on or its recipes name is copied in.
    words = set(" ".join(commands_of("setup")).split())
    todo, seen = ["setup"], set()
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            words.add(name)
            todo += prerequisites.get(name, [])
    needed = {word for word in words if (ROOT / word).is_file() and not word.startswith(("static/vendor", ".venv"))}
    assert needed  # pyproject.toml, package.json, scripts/vendor_assets.py, ...
    for file in needed:
        assert any(file == source or file.startswith(source.rstrip("/") + "/") for source in copied()), file


def test_the_image_starts_the_server_as_the_manifest_does_and_not_as_root() -> None:
    [cmd] = [rest for instruction, rest in instructions() if instruction == "CMD"]
    argv = yaml.safe_load(cmd)  # the exec form is a JSON list
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    assert argv[0] in scripts
    assert argv == container()["command"] + container()["args"]
    [user] = [rest for instruction, rest in instructions() if instruction == "USER"]
    uid, gid = (int(part) for part in user.split(":"))
    pod = the("Deployment")["spec"]["template"]["spec"]["securityContext"]
    assert uid != 0 and (uid, gid) == (pod["runAsUser"], pod["runAsGroup"])


def test_the_image_has_the_sandbox_and_node() -> None:
    runs = " ".join(rest for instruction, rest in instructions() if instruction == "RUN")
    [from_] = [rest for instruction, rest in instructions() if instruction == "FROM"]
    assert from_.startswith("python:3.11-slim")
    for package in ("bubblewrap", "slirp4netns", "nodejs", "npm"):
        assert re.search(rf"apt-get install .*\b{package}\b", runs), package
