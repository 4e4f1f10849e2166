"""The path prefix (``WEBCLIENT_ROOT_PATH``, a trusted proxy's ``X-Forwarded-Prefix``) in every URL, redirect and
cookie path, the scheme a trusted proxy reports, and the cookies a portal of another site can frame.

In-process (Starlette's test client against the real app), with the peer address a test chooses: the proxy's
(``127.0.0.2``, trusted) or anyone's (``127.0.0.1``)."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from starlette.exceptions import StarletteDeprecationWarning
from starlette.websockets import WebSocketDisconnect

from tests.support.html import parse
from tests.support.people import SECRET_FILE, SECRET_HEADER, as_person
from tests.support.servers import SCRIPTED_AGENT, migrated_store
from tests.support.urls import URLS
from webclient.config import Settings
from webclient.path_prefix import path_prefix
from webclient.proxy_proof import ProxyProof
from webclient.web.access.cookies import frames_other_sites
from webclient.web.app import create_app

with warnings.catch_warnings():
    warnings.simplefilter("ignore", StarletteDeprecationWarning)
    from starlette.testclient import TestClient

PREFIX = "/agents"
TOKEN = "test-token"
PROXY = "127.0.0.2"
ANYONE = "127.0.0.1"
PORTAL = "https://portal.example"
HTML = {"Accept": "text/html,application/xhtml+xml"}
SCRIPT = {"Authorization": f"token {TOKEN}"}


@contextmanager
def app_client(tmp_path: Path, peer: str = ANYONE, scheme: str = "http", **settings: object) -> Iterator[TestClient]:
    """The real app (token mode, its store in ``tmp_path``) seen from ``peer`` over ``scheme``."""
    data = migrated_store(tmp_path / "data")
    made = Settings(agent=SCRIPTED_AGENT, workspace=tmp_path, token=TOKEN, data_dir=data, demo_remote=False, **settings)  # type: ignore[arg-type]
    base = f"{scheme}://localhost"
    with TestClient(create_app(made), base_url=base, client=(peer, 50000), follow_redirects=False) as client:
        yield client


def urls_in(html: str) -> list[str]:
    """Every href, src, action and htmx/web socket URL of a page."""
    names = {"href", "src", "action", "hx-get", "hx-post", "ws-connect"}
    return [
        value
        for element in parse(html).elements
        for name, value in element.attr_list
        if name in names or (name.startswith("data-") and name.endswith("-url"))
    ]


def cookie_of(response: object, name: str) -> str:
    headers = getattr(response, "headers")
    found = [value for value in headers.get_list("set-cookie") if value.startswith(name)]
    assert len(found) == 1, headers.get_list("set-cookie")
    return str(found[0])


@pytest.mark.parametrize(
    ("value", "prefix"),
    [
        ("", ""),
        ("/", ""),
        ("/agents", "/agents"),
        ("/agents/", "/agents"),
        ("/tools/ai-agents_2~", "/tools/ai-agents_2~"),
    ],
)
def test_a_path_prefix_is_a_plain_path(value: str, prefix: str) -> None:
    assert path_prefix(value) == prefix
    assert Settings.from_env({"WEBCLIENT_ROOT_PATH": value}).root_path == prefix


@pytest.mark.parametrize(
    "value",
    [
        "agents",
        "//evil.example",
        "/a//b",
        "/a b",
        "/../x",
        "/a/./b",
        "/a,/b",
        "https://evil.example/x",
        "/a%2Fb",
        "/a/<b>",
        "/a?b",
        "/a#b",
        "/a;b",
        "/a\\b",
        "/é",
        "/" + "a" * 200,
    ],
)
def test_anything_else_is_refused_as_a_setting(value: str) -> None:
    assert path_prefix(value) is None
    with pytest.raises(ValueError, match="WEBCLIENT_ROOT_PATH"):
        Settings.from_env({"WEBCLIENT_ROOT_PATH": value})


def test_the_setting_puts_every_url_under_the_prefix_whether_the_proxy_keeps_it_in_the_path_or_not(
    tmp_path: Path,
) -> None:
    with app_client(tmp_path, root_path=PREFIX) as client:
        for path in (PREFIX + "/", "/"):  # a proxy that passes the path whole, and one that strips the prefix
            index = client.get(path, headers={**SCRIPT, **HTML})
            assert index.status_code == 200, index.text
            urls = urls_in(index.text)
            assert urls and [url for url in urls if not url.startswith(PREFIX + "/")] == []
        for path in (PREFIX + URLS.static("js/socket-status.js"), URLS.static("js/socket-status.js")):
            assert client.get(path).status_code == 200
        made = client.post(PREFIX + URLS.for_("new_session"), headers=SCRIPT)
        assert made.status_code == 303 and made.headers["location"].startswith(PREFIX + "/sessions/")
        stripped = client.post(URLS.for_("new_session"), headers=SCRIPT)
        assert stripped.status_code == 303 and stripped.headers["location"].startswith(PREFIX + "/sessions/")
        page = client.get(made.headers["location"], headers={**SCRIPT, **HTML})
        socket_url = next(e.attrs["ws-connect"] for e in parse(page.text).elements if "ws-connect" in e.attrs)
        assert socket_url.startswith("ws://localhost" + made.headers["location"] + "/ws?page=")  # and the page's stamp
        with client.websocket_connect(made.headers["location"] + "/ws", headers=SCRIPT) as socket:
            assert "session-status" in socket.receive_text()
        # The prefix is a whole segment: /agentsx is not under /agents; the bare prefix goes to its index.
        assert client.get("/agentsx/", headers=SCRIPT).status_code == 404
        bare = client.get(PREFIX, headers=SCRIPT)
        assert bare.status_code == 307 and bare.headers["location"] == "http://localhost/agents/"
        # A route that itself starts with /agents, under the prefix /agents.
        assert client.get(PREFIX + "/agents/agent/sessions", headers={**SCRIPT, **HTML}).status_code == 200


def test_a_stripped_path_under_the_proxys_prefix_is_routed_below_it(tmp_path: Path) -> None:
    named = {**SCRIPT, **HTML, "X-Forwarded-Prefix": PREFIX}
    with app_client(tmp_path, peer=PROXY, trusted_proxies=(PROXY,)) as client:
        index = client.get("/", headers=named)
        assert index.status_code == 200 and 'href="/agents/agents/agent/sessions"' in index.text
        assert client.get("/agents/agent/sessions", headers=named).status_code == 200  # nginx stripped /agents


def test_sign_in_redirects_sign_out_and_the_cookie_path_stay_under_the_prefix(tmp_path: Path) -> None:
    with app_client(tmp_path, root_path=PREFIX) as client:
        for path in (PREFIX + "/?token=" + TOKEN + "&x=1", "/?token=" + TOKEN + "&x=1"):
            signed_in = client.get(path)
            assert signed_in.status_code == 303 and signed_in.headers["location"] == PREFIX + "/?x=1"
            cookie = cookie_of(signed_in, "webclient-")
            assert "Path=/agents;" in cookie + ";" and "SameSite=lax" in cookie and "Secure" not in cookie
        client.cookies.clear()
        refused = client.get(PREFIX + URLS.for_("session", session_id="abc", y="2"), headers=HTML)
        assert refused.status_code == 401
        form = next(e for e in parse(refused.text).elements if e.tag == "form")
        assert form.attrs["action"] == PREFIX + URLS.sign_in()
        assert PREFIX + URLS.for_("session", session_id="abc", y="2") in refused.text  # where it goes back to
        assert [url for url in urls_in(refused.text) if not url.startswith(PREFIX + "/")] == []
        posted = client.post(PREFIX + URLS.sign_in(), data={"token": TOKEN, "next": PREFIX + "/?z=3"})
        assert posted.status_code == 303 and posted.headers["location"] == PREFIX + "/?z=3"
        out = client.post(PREFIX + URLS.for_("sign_out"), headers={"Origin": "http://localhost"})
        assert out.status_code == 303 and out.headers["location"] == PREFIX + URLS.sign_in()
        assert "Path=/agents;" in cookie_of(out, "webclient-") + ";" and "Max-Age=0" in cookie_of(out, "webclient-")


def test_a_trusted_proxys_prefix_and_scheme_are_believed(tmp_path: Path) -> None:
    forwarded = {"X-Forwarded-Prefix": "/portal/agents", "X-Forwarded-Proto": "https"}
    with app_client(tmp_path, peer=PROXY, trusted_proxies=(PROXY,), root_path=PREFIX) as client:
        signed_in = client.get("/?token=" + TOKEN, headers=forwarded)
        assert signed_in.status_code == 303 and signed_in.headers["location"] == "/portal/agents/"
        cookie = cookie_of(signed_in, "webclient-")
        assert "Path=/portal/agents;" in cookie and "Secure" in cookie
        index = client.get("/", headers={**forwarded, **SCRIPT, **HTML})
        assert [url for url in urls_in(index.text) if not url.startswith("/portal/agents/")] == []
        top = client.get("/?token=" + TOKEN, headers={"X-Forwarded-Prefix": "/"})
        assert top.headers["location"] == "/"  # the proxy serves it at the top of its host


def test_with_a_secret_the_proxys_address_alone_is_not_believed(tmp_path: Path) -> None:
    forwarded = {"X-Forwarded-Prefix": "/portal/agents", "X-Forwarded-Proto": "https"}
    proof = ProxyProof(secret_file=SECRET_FILE)
    with app_client(tmp_path, peer=PROXY, trusted_proxies=(PROXY,), root_path=PREFIX, proxy_proof=proof) as client:
        for wrong in ({}, {SECRET_HEADER: "guessed"}):
            signed_in = client.get("/?token=" + TOKEN, headers={**forwarded, **wrong})
            assert signed_in.headers["location"] == PREFIX + "/"  # the setting, not the header
            assert "Secure" not in cookie_of(signed_in, "webclient-")
        proven = client.get("/?token=" + TOKEN, headers={**forwarded, **as_person("alice")})
        assert proven.headers["location"] == "/portal/agents/" and "Secure" in cookie_of(proven, "webclient-")


@pytest.mark.parametrize(
    "value", ["//evil.example", "https://evil.example", "/a b", "/../x", "/a,/b", "/a/<b>", "/a%2Fb", "evil"]
)
def test_a_prefix_that_is_not_a_plain_path_is_ignored_even_from_the_proxy(tmp_path: Path, value: str) -> None:
    with app_client(tmp_path, peer=PROXY, trusted_proxies=(PROXY,)) as client:
        signed_in = client.get("/?token=" + TOKEN, headers={"X-Forwarded-Prefix": value})
        assert signed_in.headers["location"] == "/" and "Path=/;" in cookie_of(signed_in, "webclient-")
        twice = client.get("/?token=" + TOKEN, headers=[("X-Forwarded-Prefix", "/a"), ("X-Forwarded-Prefix", "/b")])
        assert twice.headers["location"] == "/"


def test_anyone_elses_prefix_and_scheme_are_ignored(tmp_path: Path) -> None:
    forwarded = {"X-Forwarded-Prefix": "/elsewhere", "X-Forwarded-Proto": "https"}
    with app_client(tmp_path, peer=ANYONE, trusted_proxies=(PROXY,), root_path=PREFIX) as client:
        signed_in = client.get("/?token=" + TOKEN, headers=forwarded)
        assert signed_in.headers["location"] == PREFIX + "/"  # the setting, not the header
        cookie = cookie_of(signed_in, "webclient-")
        assert "Path=/agents;" in cookie and "Secure" not in cookie
    with app_client(tmp_path, peer=ANYONE) as client:  # no proxy is trusted at all
        signed_in = client.get("/?token=" + TOKEN, headers=forwarded)
        assert signed_in.headers["location"] == "/" and "Secure" not in cookie_of(signed_in, "webclient-")


@pytest.mark.parametrize(
    ("ancestors", "scheme", "cross_site"),
    [
        (PORTAL, "https", True),
        (f"'self' {PORTAL}", "https", True),
        (PORTAL, "http", False),  # SameSite=None needs Secure: over http the cookie stays Lax
        ("'self'", "https", False),
        ("'none'", "https", False),
    ],
)
def test_cookies_are_partitioned_for_a_portal_of_another_site_over_https(
    tmp_path: Path, ancestors: str, scheme: str, cross_site: bool
) -> None:
    assert frames_other_sites(ancestors) is cross_site or scheme == "http"
    with app_client(tmp_path, scheme=scheme, root_path=PREFIX, frame_ancestors=ancestors) as client:
        cookie = cookie_of(client.get(PREFIX + "/?token=" + TOKEN), "webclient-")
        out = client.post(PREFIX + URLS.for_("sign_out"), headers={"Origin": f"{scheme}://localhost"})
        gone = cookie_of(out, "webclient-")
    for set_cookie in (cookie, gone):
        assert "HttpOnly" in set_cookie and "Path=/agents;" in set_cookie
        if cross_site:
            assert "SameSite=none" in set_cookie and "Secure" in set_cookie and set_cookie.endswith("; Partitioned")
        else:
            assert "SameSite=lax" in set_cookie and "Partitioned" not in set_cookie
            assert ("Secure" in set_cookie) is (scheme == "https")


def test_another_sites_posts_and_sockets_are_refused_although_its_frame_gets_the_cookie(tmp_path: Path) -> None:
    with app_client(tmp_path, scheme="https", root_path=PREFIX, frame_ancestors=PORTAL) as client:
        assert "SameSite=none" in cookie_of(client.get(PREFIX + "/?token=" + TOKEN), "webclient-")
        assert client.get(PREFIX + "/", headers=HTML).status_code == 200  # signed in by the cookie alone
        for headers in (
            {"Origin": PORTAL, "Sec-Fetch-Site": "cross-site"},
            {"Origin": PORTAL},
            {"Sec-Fetch-Site": "cross-site"},
            {},  # neither header, no page token
        ):
            refused = client.post(PREFIX + URLS.for_("new_session"), headers=headers)
            assert refused.status_code == 403, (headers, refused.text)
        made = client.post(
            PREFIX + URLS.for_("new_session"), headers={"Origin": "https://localhost", "Sec-Fetch-Site": "same-origin"}
        )
        assert made.status_code == 303, made.text
        socket_url = "wss://localhost" + made.headers["location"] + "/ws"
        for headers in ({"Origin": PORTAL}, {"Origin": PORTAL, "Sec-Fetch-Site": "cross-site"}):
            with pytest.raises(WebSocketDisconnect) as refused_socket:
                with client.websocket_connect(socket_url, headers=headers) as socket:
                    socket.receive_text()
            assert refused_socket.value.code == 1008 and refused_socket.value.reason.startswith("Refused:")
        with client.websocket_connect(socket_url, headers={"Origin": "https://localhost"}) as socket:
            assert "session-status" in socket.receive_text()


def test_a_share_links_cookie_is_for_that_sessions_pages_under_the_prefix(tmp_path: Path) -> None:
    proxied = {"auth": "trusted-header", "trusted_proxies": (PROXY,), "root_path": PREFIX, "frame_ancestors": PORTAL}
    proxied["proxy_proof"] = ProxyProof(secret_file=SECRET_FILE)  # an address on this machine proves nothing alone
    ours = {"Origin": "https://localhost", "Sec-Fetch-Site": "same-origin"}
    with app_client(tmp_path, peer=PROXY, scheme="https", **proxied) as client:
        alice = {**as_person("alice", ["admins"]), **HTML}
        made = client.post(PREFIX + URLS.for_("new_session"), headers={**alice, **ours})
        assert made.status_code == 303, made.text
        session_path = made.headers["location"]
        shared = client.post(
            session_path + "/shares", data={"kind": "link", "role": "watch"}, headers={**alice, **ours}
        )
        assert shared.status_code == 303 and shared.headers["location"] == session_path + "#share"
        page = client.get(session_path, headers=alice).text
        link = next(e.attrs["href"] for e in parse(page).elements if e.attrs.get("data-role") == "share-link")
        assert link.startswith(session_path + "?share=")
        carol = client.get(link, headers={**as_person("carol"), **HTML})
        assert carol.status_code == 200
        cookie = cookie_of(carol, "share")
        assert f"Path={session_path};" in cookie and "SameSite=none" in cookie and cookie.endswith("; Partitioned")
