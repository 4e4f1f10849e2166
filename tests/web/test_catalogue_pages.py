"""The catalogue on the index: one button per agent, and a new session of the agent chosen in the folder chosen."""

from __future__ import annotations

import functools
import os
import re
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from tests.support.catalogue import Catalogued, start_catalogued
from tests.support.html import Element, parse
from tests.support.probes import children, port_of, session_ids
from tests.support.servers import ROOT, ServerFactory, free_port, server_command
from tests.support.urls import URLS, at


def csrf_of(page: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', page)
    assert found is not None
    return found[1]


def elements(markup: str, tag: str, **attrs: str) -> list[Element]:
    """The elements of this tag carrying these attribute values ("" for: present, any value)."""
    return [
        element
        for element in parse(markup).elements
        if element.tag == tag and all(k in element.attrs and v in ("", element.attrs[k]) for k, v in attrs.items())
    ]


def create(catalogued: Catalogued, **form: str) -> httpx.Response:
    return catalogued.server.http().post(URLS.for_("new_session"), data=form)


def test_the_index_offers_every_agent_of_the_catalogue(start_server: ServerFactory, tmp_path: Path) -> None:
    catalogued = start_catalogued(start_server, tmp_path)
    index = catalogued.server.http().get("/").text
    buttons = elements(index, "button", **{"data-action": "new-session", "data-agent": ""})
    # The config's agents in its order, then --agent's, then the demo, always there.
    assert [button.attrs["data-agent"] for button in buttons] == ["alpha", "beta", "agent", "demo"]
    assert [(b.attrs["name"], b.attrs["value"]) for b in buttons] == [
        ("agent", n) for n in ["alpha", "beta", "agent", "demo"]
    ]
    assert all("form" in button.path for button in buttons)
    assert "Scripted agent beta" in parse(index).text
    assert elements(index, "input", name="workspace", type="text")
    assert elements(index, "input", name="csrf", type="hidden")


def test_a_new_session_of_the_agent_named_in_the_folder_chosen(start_server: ServerFactory, tmp_path: Path) -> None:
    catalogued = start_catalogued(start_server, tmp_path)
    response = create(catalogued, agent="beta", workspace=str(catalogued.shared / "docs"))
    assert response.status_code == 303, response.text
    deadline = time.monotonic() + 10
    while not catalogued.session_new("beta") and time.monotonic() < deadline:
        time.sleep(0.05)
    [new] = catalogued.session_new("beta")
    assert new["params"]["cwd"] == str((catalogued.shared / "docs").resolve())
    assert catalogued.received("alpha") == []

    # No agent named: the first of the catalogue, in its own workspace.
    assert create(catalogued).status_code == 303
    while not catalogued.session_new("alpha") and time.monotonic() < deadline:
        time.sleep(0.05)
    [default] = catalogued.session_new("alpha")
    assert default["params"]["cwd"] == str(catalogued.home.resolve())


@pytest.mark.process
def test_unknown_agents_and_folders_outside_the_roots_are_refused(start_server: ServerFactory, tmp_path: Path) -> None:
    catalogued = start_catalogued(functools.partial(start_server, process=True), tmp_path)
    server = catalogued.server
    agents, sessions = len(children(server.process.pid)), session_ids(server)
    refusals = [
        ({"agent": "nobody"}, "No agent called 'nobody' here."),
        ({"agent": "alpha", "workspace": str(catalogued.outside)}, "is outside what the agent alpha may use"),
        ({"agent": "alpha", "workspace": str(catalogued.home / ".." / "outside")}, "is outside"),
        ({"agent": "alpha", "workspace": "project"}, "must be an absolute path"),
        ({"agent": "demo", "workspace": str(catalogued.home)}, "works in a fresh copy of its sample"),
    ]
    for form, message in refusals:
        response = create(catalogued, **form)
        assert response.status_code == 400
        assert elements(response.text, "p", **{"data-role": "refused"})
        assert message in parse(response.text).text, response.text
        # The folder typed stays in the field, to correct it.
        [field] = elements(response.text, "input", name="workspace")
        assert field.attrs["value"] == form.get("workspace", "")
    assert len(children(server.process.pid)) == agents and session_ids(server) == sessions
    assert catalogued.received("alpha") == [] and catalogued.received("beta") == []


def test_a_cross_site_form_cannot_start_an_agent(start_server: ServerFactory, tmp_path: Path) -> None:
    catalogued = start_catalogued(start_server, tmp_path)
    server = catalogued.server
    signed_in = httpx.get(server.sign_in_url("/"), follow_redirects=False).headers["set-cookie"].split(";", 1)[0]
    csrf = csrf_of(server.http().get("/").text)
    form = {"agent": "beta", "workspace": str(catalogued.shared), "csrf": csrf}
    foreign = f"http://127.0.0.1:{port_of(server) + 1}"
    response = httpx.post(
        at(server.url, "new_session"),
        data=form,
        headers={"Cookie": signed_in, "Origin": foreign, "Sec-Fetch-Site": "cross-site"},
    )
    assert response.status_code == 403
    assert catalogued.received("beta") == [] and session_ids(server) == []


@pytest.mark.process
def test_a_mistake_in_the_config_file_stops_the_start_naming_file_agent_and_field(tmp_path: Path) -> None:
    config = tmp_path / "agents.toml"
    config.write_text('[agents.helper]\ncommand = "helper-acp"\nprotocol = "xyz"\n', encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("WEBCLIENT_")}
    env["WEBCLIENT_DATA_DIR"] = str(tmp_path / "data")  # the token it keeps, never in the user's data folder
    refused = subprocess.run(
        server_command("--config", str(config), "--port", str(free_port())),
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert refused.returncode == 1
    assert refused.stderr.strip() == (
        f"webclient: {config}: agent 'helper': field protocol: 'xyz' is not supported: only acp, aap"
    )
