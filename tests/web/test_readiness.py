"""The probes: ``/healthz`` answers whoever reaches the server, ``/readyz`` says whether the instance takes new sessions
(503 with one word while it starts or drains), and a draining server starts no session, whichever way one is asked
for, while its pages keep working and say it is restarting."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.exceptions import StarletteDeprecationWarning

from tests.support.servers import SCRIPTED_AGENT, migrated_store
from tests.support.urls import URLS
from webclient.config import Settings
from webclient.web.app import create_app
from webclient.web.readiness import RESTARTING, drain

with warnings.catch_warnings():
    warnings.simplefilter("ignore", StarletteDeprecationWarning)  # as in tests/web/test_urls.py
    from starlette.testclient import TestClient

TOKEN = "probe-test-token"
SIGNED_IN = {"Authorization": f"token {TOKEN}"}
BROWSER = {"Accept": "text/html"}


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    """The real app with a store, token mode, the scripted agent; no one signed in."""
    settings = Settings(
        agent=SCRIPTED_AGENT,
        workspace=tmp_path,
        token=TOKEN,
        data_dir=migrated_store(tmp_path / "data"),
        demo_remote=False,
    )
    with TestClient(create_app(settings), base_url="http://localhost", follow_redirects=False) as http:
        yield http


def test_the_probes_answer_anyone_with_a_word_and_nothing_more(client: TestClient) -> None:
    for path in ("/healthz", "/readyz"):
        for method in ("GET", "HEAD"):
            answer = client.request(method, path, headers=BROWSER)  # no token, no cookie
            assert answer.status_code == 200, (method, path, answer.text)
            assert answer.text == ("ok" if method == "GET" else "")
            assert answer.headers["cache-control"] == "no-store"
            assert "set-cookie" not in answer.headers
        assert client.post(path).status_code == 401  # only reading is public: the rest of the guard holds
    assert client.get("/healthz", headers={"Host": "rebind.evil"}).status_code == 400  # and so does its host check


def test_the_probes_answer_behind_a_trusted_proxy_without_its_header(tmp_path: Path) -> None:
    settings = Settings(
        workspace=tmp_path, auth="trusted-header", trusted_proxies=("10.0.0.1",), store=False, demo_remote=False
    )  # a proxy on another machine: its address is its proof
    with TestClient(create_app(settings), base_url="http://localhost", client=("10.0.0.7", 5000)) as http:
        assert http.get("/", headers={"X-Forwarded-User": "alice"}).status_code == 403  # not from the proxy
        assert http.get("/healthz").text == "ok"  # a probe comes from the kubelet, not through the proxy
        assert http.get("/readyz").text == "ok"  # without a store: nothing more to ask


def test_readyz_fails_until_the_server_has_started(tmp_path: Path) -> None:
    app = create_app(Settings(workspace=tmp_path, token=TOKEN, store=False, demo_remote=False))
    http = TestClient(app, base_url="http://localhost")  # its lifespan not started
    starting = http.get("/readyz")
    assert (starting.status_code, starting.text) == (503, "starting")
    assert http.get("/healthz").text == "ok"


def test_a_draining_server_starts_no_session_and_says_it_is_restarting(client: TestClient) -> None:
    made = client.post(URLS.for_("new_session"), headers=SIGNED_IN)
    assert made.status_code == 303, made.text
    session_id = made.headers["location"].rsplit("/", 1)[1]
    assert client.portal is not None
    client.portal.call(drain, client.app, 0)

    ready = client.get("/readyz")
    assert (ready.status_code, ready.text) == (503, "draining")
    assert client.get("/healthz").text == "ok"
    refused = client.post(URLS.for_("new_session"), headers=SIGNED_IN)
    assert refused.status_code == 503 and RESTARTING in refused.text
    embedded = client.post(URLS.for_("embed"), data={"prompt": "hi"}, headers=SIGNED_IN)
    assert embedded.status_code == 503 and RESTARTING in embedded.text
    sessions = client.app.state.sessions  # type: ignore[attr-defined]
    assert len(sessions.sessions) == 1
    session = sessions.get(session_id)
    assert session.lifecycle.may_start() == RESTARTING  # Resume and Retry say so rather than start an agent
    page = client.get(URLS.for_("session", session_id=session_id), headers=SIGNED_IN)
    assert page.status_code == 200 and 'data-role="restarting"' in page.text
    assert 'data-role="restarting"' in client.get("/", headers=SIGNED_IN).text


def test_readyz_fails_while_the_store_does_not_answer(tmp_path: Path) -> None:
    from webclient.store.database import create_engine
    from webclient.store.journal import JournalWriter
    from webclient.store.store import Store

    settings = Settings(workspace=tmp_path, token=TOKEN, store=False, demo_remote=False)
    with TestClient(create_app(settings), base_url="http://localhost") as http:
        assert http.get("/readyz").text == "ok"
        engine = create_engine("postgresql://nobody@127.0.0.1:1/gone")  # a database nothing answers for
        http.app.state.store = Store(engine, JournalWriter(engine))  # type: ignore[attr-defined]
        answer = http.get("/readyz")
        assert (answer.status_code, answer.text) == (503, "store")
        assert http.get("/healthz").text == "ok"  # alive all the same: a probe of liveness asks no store
