"""The embedding API over HTTP: ``GET /embed`` changes nothing, only its form's POST from our own page starts a session
(with its first prompt), every query parameter is checked strictly and escaped, and the embedded session page has no
site chrome, the host's theme, and the origins its script may talk to."""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from starlette.exceptions import StarletteDeprecationWarning

from tests.support.html import parse
from tests.support.people import TEAM, as_person, person_client
from tests.support.servers import AGENTS, SCRIPTED_AGENT, Server, ServerFactory, migrated_store
from tests.support.urls import URLS, at
from tests.web.test_urls import outside_the_prefix, url_attributes
from webclient.config import Settings
from webclient.web.app import create_app
from webclient.web.pages.embed import message_origins

with warnings.catch_warnings():
    warnings.simplefilter("ignore", StarletteDeprecationWarning)  # as in tests/web/test_urls.py
    from starlette.testclient import TestClient

PORTALS = "'self' http://portal.test http://*.test"
"""Who may frame the page: a portal written out (messages go to it) and a wildcard (it may frame, never talk)."""


@pytest.fixture
def server(start_server: ServerFactory) -> Server:
    return start_server(**TEAM, WEBCLIENT_FRAME_ANCESTORS=PORTALS)


def no_agent_started(server: Server) -> bool:
    """Whether the refused request made no session, so started no agent: the index lists none, and no agent received
    anything (a session is listed as soon as it is made, before its agent starts: nothing to wait for)."""
    index = person_client(server, "alice").get("/").text
    return "data-session-id=" not in index and not server.received()


def html_attributes(page: str) -> dict[str, str]:
    return next(element.attrs for element in parse(page).elements if element.tag == "html")


def start(http: httpx.Client, **fields: str) -> str:
    """POST the embedding form as its page does; the embedded session's URL it redirects to."""
    answer = http.post(URLS.for_("embed"), data={**fields})
    assert answer.status_code == 303, answer.text[:300]
    location = answer.headers["location"]
    assert location.startswith("/embed/sessions/")
    return location


def test_the_start_page_changes_nothing_and_shows_what_it_would_send(server: Server) -> None:
    alice = person_client(server, "alice")
    answer = alice.get(
        URLS.for_("embed"), params={"agent": "agent", "prompt": "stream 2", "theme": "dark", "accent": "#12ab34"}
    )
    assert answer.status_code == 200
    assert "set-cookie" not in answer.headers
    form = {element.attrs.get("name"): element.attrs.get("value") for element in parse(answer.text).elements}
    assert form["prompt"] == "stream 2" and form["agent"] == "agent" and form["accent"] == "#12ab34"
    assert form["csrf"]
    assert 'data-action="embed-start"' in answer.text
    assert html_attributes(answer.text)["data-theme"] == "dark"
    assert no_agent_started(server)
    assert 'href="/sessions/' not in alice.get("/").text  # no session either


def test_the_form_starts_the_session_with_its_first_prompt_and_dresses_it(server: Server) -> None:
    alice = person_client(server, "alice")
    location = start(alice, agent="agent", prompt="stream 2", theme="light", accent="#ABCDEF", csrf="unused")
    query = parse_qs(urlsplit(location).query)
    assert query == {"created": ["1"], "theme": ["light"], "accent": ["#ABCDEF"]}
    server.wait_received(lambda message: message.get("method") == "session/prompt")
    assert server.prompts_received() == ["stream 2"]
    page = alice.get(location).text
    root = html_attributes(page)
    assert "data-embedded" in root and root["data-theme"] == "light" and root["data-accent"] == "#ABCDEF"
    assert root["data-message-origins"] == "http://portal.test"
    session_id = location.split("/")[3].split("?")[0]
    main = next(element.attrs for element in parse(page).elements if element.attrs.get("id") == "session")
    assert main["data-session-url"] == URLS.for_("session", session_id=session_id)
    assert {"data-waiting", "data-turns", "data-stop-reason"} <= main.keys()
    # Its pushes leave the chrome out (and its socket starts from what it holds: its stamp, `web.live.page_holds`).
    assert URLS.for_("socket", session_id=session_id, embedded="1") + "&page=" in main["ws-connect"]
    # No way out to the site: no link to the index, no protocol log, no share panel; End comes back here.
    links = [element.attrs["href"] for element in parse(page).elements if "href" in element.attrs]
    assert "/" not in links and not any(link.endswith("/log") for link in links)
    assert 'data-role="share-panel"' not in page
    assert f'action="{URLS.for_("embed_end", session_id=session_id)}"' in page
    assert f'action="{URLS.for_("end_session", session_id=session_id)}"' not in page
    # The site's own page of the session keeps its chrome.
    full = alice.get(URLS.for_("session", session_id=session_id)).text
    assert "data-embedded" not in html_attributes(full) and 'class="back" href="/"' in full
    assert URLS.for_("socket", session_id=session_id) + "?page=" in full


def test_ending_from_the_embedded_page_comes_back_to_it(server: Server) -> None:
    alice = person_client(server, "alice")
    location = start(alice, prompt="hello", theme="dark")
    session_id = location.split("/")[3].split("?")[0]
    answer = alice.post(URLS.for_("embed_end", session_id=session_id), data={"theme": "dark"})
    assert answer.status_code == 303
    assert answer.headers["location"] == URLS.for_("embed_session", session_id=session_id, ended="1", theme="dark")
    page = alice.get(answer.headers["location"]).text
    assert 'data-turn-state="ended"' in page


@pytest.mark.parametrize(
    "query",
    [
        {"theme": "purple"},
        {"theme": "dark;background:red"},
        {"accent": "red"},
        {"accent": "#12345"},
        {"accent": "#1234567"},
        {"accent": "#12345g"},
        {"accent": '#123456"><script>alert(1)</script>'},
        {"accent": "#123456;color:red"},
        {"agent": "no-such-agent"},
        {"agent": "<script>"},
    ],
)
def test_a_parameter_that_is_not_what_it_must_be_is_refused(server: Server, query: dict[str, str]) -> None:
    alice = person_client(server, "alice")
    answer = alice.get(URLS.for_("embed"), params=query)
    assert answer.status_code == 400, answer.text[:300]
    assert "<script>" not in answer.text or answer.headers["content-type"].startswith("text/plain")
    assert alice.post(URLS.for_("embed"), data={**query, "prompt": "stream 1"}).status_code == 400
    assert alice.get(URLS.for_("embed_session", session_id="whatever"), params=query).status_code == 400
    assert no_agent_started(server)


def test_a_first_prompt_too_long_is_refused(server: Server) -> None:
    alice = person_client(server, "alice")
    assert alice.post(URLS.for_("embed"), data={"prompt": "x" * 20_001}).status_code == 400
    assert no_agent_started(server)


def test_what_the_host_sends_is_escaped(server: Server) -> None:
    alice = person_client(server, "alice")
    hostile = '"><script>alert(1)</script><img src=x onerror=alert(2)>'
    answer = alice.get(URLS.for_("embed"), params={"prompt": hostile, "workspace": hostile})
    assert answer.status_code == 200
    assert "<script>alert" not in answer.text and "<img src=x" not in answer.text
    shown = "".join(text for _, text in parse(answer.text).texts)
    assert "<script>alert(1)</script>" in shown  # shown as text, to read before pressing Start


def test_a_workspace_outside_the_agents_is_refused_on_the_start_page(server: Server) -> None:
    alice = person_client(server, "alice")
    answer = alice.post(URLS.for_("embed"), data={"workspace": "/etc", "prompt": "stream 1"})
    assert answer.status_code == 400
    assert 'data-role="embed-refused"' in answer.text and "data-autostart" not in answer.text
    assert no_agent_started(server)


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "http://portal.test", "Sec-Fetch-Site": "cross-site"},  # a portal may frame it, not post to it
        {"Origin": "http://evil.example"},
        {"Sec-Fetch-Site": "cross-site"},
        {},  # neither Origin nor the page's token
    ],
)
def test_another_site_cannot_start_a_session(server: Server, headers: dict[str, str]) -> None:
    answer = httpx.post(at(server.url, "embed"), data={"prompt": "stream 1"}, headers={**as_person("alice"), **headers})
    assert answer.status_code == 403, answer.text[:300]
    assert no_agent_started(server)


def test_another_persons_embedded_session_does_not_exist_for_them(server: Server) -> None:
    location = start(person_client(server, "alice"), prompt="hello")
    bob = person_client(server, "bob")
    assert bob.get(location).status_code == 404
    session_id = location.split("/")[3].split("?")[0]
    assert bob.post(URLS.for_("embed_end", session_id=session_id)).status_code == 404


def test_messages_go_only_to_origins_written_out() -> None:
    ancestors = "'self' https://Portal.Example.com http://*.test https: http://localhost:8001/path 'none' data: x.org"
    assert message_origins(ancestors) == ["https://portal.example.com", "http://localhost:8001"]
    assert message_origins("'self'") == [] and message_origins("'none'") == []


def test_every_url_of_the_embedded_pages_carries_the_path_prefix(tmp_path: Path) -> None:
    """Under a path prefix (the ASGI ``root_path``, as tests/web/test_urls.py does): the start page's form and
    files, the redirect to the session, its page's URLs (End's included) and End's redirect."""
    prefix = "/agents"
    settings = Settings(
        agent=SCRIPTED_AGENT,
        workspace=tmp_path,
        token="t",
        data_dir=migrated_store(tmp_path / "data"),
        demo_remote=False,
    )
    app = create_app(settings)
    with TestClient(app, base_url="http://localhost", root_path=prefix, headers={"Authorization": "token t"}) as client:
        start_page = client.get(prefix + URLS.for_("embed"), params={"prompt": "stream 1", "theme": "dark"})
        assert start_page.status_code == 200
        found = url_attributes(start_page.text)
        created = client.post(
            prefix + URLS.for_("embed"), data={"prompt": "stream 1", "theme": "dark"}, follow_redirects=False
        )
        assert created.status_code == 303
        location = created.headers["location"]
        assert location.startswith(prefix + "/embed/sessions/")
        session_page = client.get(location).text
        found += url_attributes(session_page)
        session_id = location.split("/")[4].split("?")[0]
        end = client.post(
            prefix + URLS.for_("embed_end", session_id=session_id), data={"theme": "dark"}, follow_redirects=False
        )
        assert end.headers["location"] == prefix + URLS.for_(
            "embed_session", session_id=session_id, ended=1, theme="dark"
        )
    assert ("action", prefix + URLS.for_("embed")) in found
    assert ("action", prefix + URLS.for_("embed_end", session_id=session_id)) in found
    assert ("data-session-url", prefix + URLS.for_("session", session_id=session_id)) in found
    assert [(name, url) for name, url in found if outside_the_prefix(url)] == []


def test_the_page_says_what_a_turn_waits_for(start_server: ServerFactory) -> None:
    """``data-waiting`` (``question`` here; ``permission`` in the browser test), ``data-turns`` and
    ``data-stop-reason``: what static/js/embed.js tells the host from."""
    server = start_server(agent=f"{sys.executable} {AGENTS / 'question_agent.py'}", **TEAM)
    alice = person_client(server, "alice")
    location = start(alice, prompt="form")

    def session_root() -> dict[str, str]:
        page = alice.get(location).text
        return next(element.attrs for element in parse(page).elements if element.attrs.get("id") == "session")

    deadline = time.monotonic() + 15
    while session_root()["data-waiting"] != "question":
        assert time.monotonic() < deadline, session_root()
        time.sleep(0.1)
    root = session_root()
    assert root["data-turns"] == "1" and root["data-turn-state"] == "awaiting-permission"
    assert root["data-stop-reason"] == ""
