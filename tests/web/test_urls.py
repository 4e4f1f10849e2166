"""One table of URLs: the app's routes are made from it, and every URL a page holds comes from it, so a path prefix
(a reverse proxy's ``location /agents/`` with ``uvicorn --root-path /agents``, see ``docs/deployment.md``) reaches
every one of them."""

from __future__ import annotations

import re
import sys
import time
import warnings
from pathlib import Path
from urllib.parse import urljoin, urlsplit

from starlette.exceptions import StarletteDeprecationWarning
from starlette.routing import Mount, Route, WebSocketRoute

from tests.support.html import parse
from tests.support.servers import AGENTS, migrated_store
from webclient.config import Settings
from webclient.render.urls import ROUTES, Urls
from webclient.web.app import create_app

with warnings.catch_warnings():
    # Starlette's test client would rather run on httpx2; httpx (what the project installs) still works.
    warnings.simplefilter("ignore", StarletteDeprecationWarning)
    from starlette.testclient import TestClient

PREFIX = "/agents"
TOKEN = "test-token"
URL_ATTRIBUTES = frozenset({"href", "src", "action", "hx-get", "hx-post", "ws-connect", "data-url"})
"""Attributes holding a URL, besides every ``data-*-url`` (what the page's scripts read)."""
FOLLOWED = ("href", "hx-get")
MAX_PAGES = 300


def test_the_apps_named_routes_are_the_url_table() -> None:
    app = create_app(Settings(token=TOKEN))
    named = {route.name: route.path for route in app.routes if isinstance(route, Route | WebSocketRoute | Mount)}
    assert named == ROUTES
    assert len(app.routes) == len(ROUTES)  # no route without a name in the table


def test_the_url_builder_agrees_with_starlettes_reverse_routing() -> None:
    app = create_app(Settings(token=TOKEN))
    params = {"session_id": "ab12", "seq": 7, "index": 2, "agent": "claude-code", "signin_id": "5f" * 32, "share_id": 3}
    for name, pattern in ROUTES.items():
        if name == "static":
            assert Urls().static("app.js") == app.url_path_for("static", path="/app.js")
            continue
        needed = {key: value for key, value in params.items() if "{" + key in pattern}
        assert Urls().for_(name, **needed) == app.url_path_for(name, **needed), name
        assert Urls(PREFIX + "/").for_(name, **needed) == PREFIX + app.url_path_for(name, **needed), name


def url_attributes(html: str) -> list[tuple[str, str]]:
    """(attribute, URL) for every URL in ``html``."""
    return [
        (name, value)
        for element in parse(html).elements
        for name, value in element.attr_list
        if name in URL_ATTRIBUTES or (name.startswith("data-") and name.endswith("-url"))
    ]


def outside_the_prefix(url: str) -> bool:
    """Whether ``url`` (one of ours, not an anchor nor another site's) misses the prefix."""
    parts = urlsplit(url)
    if url.startswith("#") or parts.scheme in ("data", "mailto"):
        return False
    if parts.scheme and parts.netloc != "localhost":
        return False  # a link the agent sent, to another site
    return not (parts.path == PREFIX + "/" or parts.path.startswith(PREFIX + "/"))


def wait_for(client: TestClient, url: str, pattern: str, timeout: float = 30) -> str:
    deadline = time.monotonic() + timeout
    while True:
        html = client.get(url).text
        if re.search(pattern, html):
            return html
        if time.monotonic() > deadline:
            raise AssertionError(f"{pattern!r} never appeared on {url}")
        time.sleep(0.2)


def test_every_url_of_a_session_carries_the_path_prefix(tmp_path: Path) -> None:
    """The index, a session page full of what an agent can send (``surrogate_agent.py``: locations, diffs,
    resources, terminals, a changed file, a question), its socket's first frame, and every page and fragment
    reachable from it: each URL starts with the prefix, and each link followed answers 200."""
    agent = f"{sys.executable} {AGENTS / 'surrogate_agent.py'}"
    settings = Settings(agent=agent, workspace=tmp_path, token=TOKEN, data_dir=migrated_store(tmp_path / "data"))
    headers = {"Authorization": f"token {TOKEN}"}
    found: list[tuple[str, str, str]] = []  # (page, attribute, URL)
    with TestClient(create_app(settings), base_url="http://localhost", root_path=PREFIX, headers=headers) as client:
        created = client.post(PREFIX + "/sessions", follow_redirects=False)
        assert created.status_code == 303, created.text
        session_path = created.headers["location"]
        assert session_path.startswith(PREFIX + "/sessions/")
        page = wait_for(client, session_path, r'data-agent-state="ready"')
        nonce = next(e.attrs["value"] for e in parse(page).elements if e.attrs.get("name") == "nonce")
        sent = client.post(session_path + "/prompt", data={"prompt": "go", "nonce": nonce}, follow_redirects=False)
        assert sent.status_code == 303 and sent.headers["location"] == session_path
        wait_for(client, session_path, r'data-turn-state="awaiting-permission"')
        # The file the agent changed behind the client's back is listed once the workspace's watch reports it.
        wait_for(client, session_path + "/changes", r"plain\.txt")

        with client.websocket_connect(session_path + "/ws") as socket:
            frame = socket.receive_text()  # the whole page, as the socket renders it
        assert "tool-call" in frame
        found += [("socket", name, url) for name, url in url_attributes(frame)]

        queue, seen, checked = [PREFIX + "/", session_path], {PREFIX + "/", session_path}, 0
        while queue and checked < MAX_PAGES:
            url = queue.pop(0)
            response = client.get(url)
            checked += 1
            assert response.status_code == 200, f"{url} answered {response.status_code}: {response.text[:500]}"
            if "html" not in response.headers.get("content-type", ""):
                continue
            for name, link in url_attributes(response.text):
                found.append((url, name, link))
                target = urlsplit(urljoin(url, link))
                local = target.path + (f"?{target.query}" if target.query else "")
                is_ours = not target.netloc and target.path.startswith(session_path + "/")
                if name in FOLLOWED and is_ours and not target.path.endswith("/ws") and local not in seen:
                    seen.add(local)
                    queue.append(local)

    assert [(where, name, url) for where, name, url in found if outside_the_prefix(url)] == []
    kinds = {re.sub(r"/\d+|\?.*", "", urlsplit(url).path.removeprefix(session_path)) for _, _, url in found}
    for expected in ("/file", "/log", "/export.md", "/changes", "/changes/diff", "/resources", "/diffs", "/ws"):
        assert expected in kinds, f"no {expected} URL was found: {sorted(kinds)}"
    attributes = {name for _, name, _ in found}
    assert {"hx-get", "hx-post", "ws-connect", "action", "src"} <= attributes
