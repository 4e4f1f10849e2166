"""Instances of one service behind one proxy: one sign-in for all of them (the cookie is named after the origin the
browser sees, not the port a connection arrived on), and the origin the trusted proxy forwards is one of ours (no
``WEBCLIENT_ALLOWED_ORIGINS`` to set), from that proxy only.

In-process: the real app, two of them on one store and one token ("instances" on ports 8001 and 8002), each seen from
the peer address a test chooses: the proxy's (``127.0.0.2``, trusted) or anyone's (``127.0.0.1``). The proxy is at
``http://127.0.0.1:8080`` and passes the browser's ``Host`` (``proxy_set_header Host $http_host``), as nginx does in
docs/deployment.md."""

from __future__ import annotations

import logging
import warnings
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest
from starlette.datastructures import Headers
from starlette.exceptions import StarletteDeprecationWarning
from starlette.websockets import WebSocketDisconnect

from tests.support.people import SECRET_FILE, as_person
from tests.support.servers import SCRIPTED_AGENT, migrated_store
from tests.support.urls import URLS
from webclient.config import Settings
from webclient.proxy_proof import ProxyProof
from webclient.web.access.browser_origin import forwarded_pairs, parse_host
from webclient.web.app import create_app

with warnings.catch_warnings():
    warnings.simplefilter("ignore", StarletteDeprecationWarning)
    from starlette.testclient import TestClient

TOKEN = "test-token"
PROXY = "127.0.0.2"
ANYONE = "127.0.0.1"
PROXIED = "http://127.0.0.1:8080"
"""The proxy's origin: what the browser opens."""
THROUGH_PROXY = {"Host": "127.0.0.1:8080"}
HTML = {"Accept": "text/html,application/xhtml+xml"}


@contextmanager
def instances(tmp_path: Path, peer: str = PROXY, count: int = 2, **settings: object) -> Iterator[list[TestClient]]:
    """``count`` instances of one service (one store, one token) on ports 8001, 8002..., seen from ``peer``, which
    they trust as their proxy unless ``trusted_proxies`` says otherwise."""
    data = migrated_store(tmp_path / "data")
    settings = {"trusted_proxies": (PROXY,), **settings}
    with ExitStack() as stack:
        clients = []
        for number in range(count):
            made = Settings(
                agent=SCRIPTED_AGENT,
                workspace=tmp_path,
                token=TOKEN,
                data_dir=data,
                demo_remote=False,
                **settings,  # type: ignore[arg-type]
            )
            base = f"http://127.0.0.1:{8001 + number}"
            client = TestClient(create_app(made), base_url=base, client=(peer, 50000), follow_redirects=False)
            clients.append(stack.enter_context(client))
        yield clients


def sign_in(client: TestClient, headers: dict[str, str]) -> str:
    """Sign in with the token; the ``name=value`` of the sign-in cookie."""
    signed_in = client.get("/?token=" + TOKEN, headers=headers)
    assert signed_in.status_code == 303, signed_in.text
    found = [value for value in signed_in.headers.get_list("set-cookie") if value.startswith("webclient-")]
    assert len(found) == 1, signed_in.headers
    return found[0].split(";", 1)[0]


def test_one_sign_in_through_the_proxy_signs_the_browser_in_on_every_instance(tmp_path: Path) -> None:
    with instances(tmp_path) as (first, second):
        cookie = sign_in(first, THROUGH_PROXY)
        assert cookie.startswith("webclient-8080=")  # the proxy's port, which the browser sees
        for instance in (first, second):
            instance.cookies.clear()
            page = instance.get("/", headers={**THROUGH_PROXY, **HTML, "Cookie": cookie})
            assert page.status_code == 200, page.text


def test_the_host_a_trusted_proxy_forwards_names_the_cookie(tmp_path: Path) -> None:
    """``X-Forwarded-Host`` or ``Forwarded: host=`` (the proxy passing ``Host`` as its own upstream name)."""
    upstream = {"Host": "127.0.0.1:8001"}
    with instances(tmp_path, count=1, allowed_hosts=("tools.example.com",)) as (client,):
        for forwarded in ({"X-Forwarded-Host": "tools.example.com:8443"}, {"Forwarded": "host=tools.example.com:8443"}):
            assert sign_in(client, {**upstream, **forwarded}).startswith("webclient-8443=")
        https = {**upstream, "X-Forwarded-Host": "tools.example.com", "X-Forwarded-Proto": "https"}
        assert sign_in(client, https).startswith("webclient-443=")
        https = {**upstream, "Forwarded": 'host="tools.example.com";proto=https'}
        assert sign_in(client, https).startswith("webclient-443=")


def test_servers_on_two_ports_of_one_host_keep_their_own_cookies(tmp_path: Path) -> None:
    """Straight from the browser (no proxy trusted), the cookie is named after the port in ``Host``: two servers on
    one host do not sign each other out, and anyone's forwarded headers change nothing."""
    with instances(tmp_path, peer=ANYONE) as (first, second):
        forged = {"X-Forwarded-Host": "127.0.0.1:8080", "Forwarded": "host=127.0.0.1:8080"}
        assert sign_in(first, forged).startswith("webclient-8001=")
        cookie = sign_in(second, {})
        assert cookie.startswith("webclient-8002=")
        first.cookies.clear()
        assert first.get("/", headers={**HTML, "Cookie": cookie}).status_code == 401


def test_two_services_under_one_proxy_at_the_top_and_under_a_prefix_have_two_cookies(tmp_path: Path) -> None:
    """The browser sends a cookie of ``/`` to ``/agents/`` too: the two must not share a name."""
    with instances(tmp_path, count=1) as (top,), instances(tmp_path / "b", count=1, root_path="/agents") as (under,):
        top_cookie = sign_in(top, THROUGH_PROXY).split("=")[0]
        under_cookie = sign_in(under, THROUGH_PROXY).split("=")[0]
        assert top_cookie == "webclient-8080" and under_cookie.startswith("webclient-8080-")


def test_posts_and_sockets_from_the_proxys_origin_are_accepted_without_allowed_origins(tmp_path: Path) -> None:
    with instances(tmp_path, count=1) as (client,):
        sign_in(client, THROUGH_PROXY)
        made = client.post(URLS.for_("new_session"), headers={**THROUGH_PROXY, "Origin": PROXIED})
        assert made.status_code == 303, made.text
        socket_url = "ws://127.0.0.1:8001" + made.headers["location"] + "/ws"
        with client.websocket_connect(socket_url, headers={**THROUGH_PROXY, "Origin": PROXIED}) as socket:
            assert "session-status" in socket.receive_text()
        https = {**THROUGH_PROXY, "X-Forwarded-Proto": "https"}  # the browser opened https://127.0.0.1:8080
        cookie = sign_in(client, https)  # Secure: the test client, on http, would not send it by itself
        made = client.post(
            URLS.for_("new_session"), headers={**https, "Origin": "https://127.0.0.1:8080", "Cookie": cookie}
        )
        assert made.status_code == 303, made.text


def refused(client: TestClient, headers: dict[str, str], session_path: str) -> None:
    """A post and a socket with ``headers`` are refused for where they come from."""
    post = client.post(URLS.for_("new_session"), headers=headers)
    assert post.status_code == 403 and "not one of this server's origins" in post.text, (headers, post.text)
    with pytest.raises(WebSocketDisconnect) as closed:
        with client.websocket_connect("ws://127.0.0.1:8001" + session_path + "/ws", headers=headers) as socket:
            socket.receive_text()
    assert closed.value.code == 1008 and closed.value.reason.startswith("Refused:"), headers


@pytest.mark.parametrize("peer", [ANYONE, PROXY])
def test_a_forwarded_origin_widens_nothing_but_from_the_proxy_for_a_host_we_answer_to(
    tmp_path: Path, peer: str
) -> None:
    with instances(tmp_path, peer=peer, count=1) as (client,):
        sign_in(client, THROUGH_PROXY)
        made = client.post(URLS.for_("new_session"), headers={**THROUGH_PROXY, "Sec-Fetch-Site": "same-origin"})
        session_path = made.headers["location"]
        another_site = {**THROUGH_PROXY, "Origin": "https://evil.example"}
        refused(client, another_site, session_path)
        # Not a name we answer to, even from the proxy (on the port the sign-in cookie is named after).
        named = {**THROUGH_PROXY, "X-Forwarded-Host": "evil.example:8080", "Origin": "http://evil.example:8080"}
        refused(client, named, session_path)
        named = {**THROUGH_PROXY, "Forwarded": "host=evil.example:8080", "Origin": "http://evil.example:8080"}
        refused(client, named, session_path)
        twice = [("Host", "127.0.0.1:8080"), ("X-Forwarded-Host", "127.0.0.1:8080"), ("X-Forwarded-Host", "x")]
        post = client.post(URLS.for_("new_session"), headers=[*twice, ("Origin", PROXIED)])
        assert post.status_code in (401, 403)  # the proxy named two hosts: neither is known to be the browser's
        if peer == ANYONE:  # the proxy's own origin, from anyone but the proxy
            refused(client, {**THROUGH_PROXY, "Origin": PROXIED}, session_path)
            forged = {**THROUGH_PROXY, "X-Forwarded-Host": "127.0.0.1:8080", "Origin": PROXIED}
            refused(client, forged, session_path)


def test_what_to_set_is_logged_when_a_proxy_is_not_trusted(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with instances(tmp_path, peer=ANYONE, count=1, trusted_proxies=()) as (client,):
        sign_in(client, THROUGH_PROXY)
        headers = {**THROUGH_PROXY, "X-Forwarded-Proto": "http", "Origin": PROXIED}
        with caplog.at_level(logging.WARNING, logger="webclient.web.access.guard"):
            for _ in range(3):
                assert client.post(URLS.for_("new_session"), headers=headers).status_code == 403
            another_site = {**THROUGH_PROXY, "Origin": "https://evil.example"}  # no proxy shows: nothing to set
            assert client.post(URLS.for_("new_session"), headers=another_site).status_code == 403
        advice = [r.getMessage() for r in caplog.records if "WEBCLIENT_TRUSTED_PROXIES" in r.getMessage()]
        assert len(advice) == 1 and f"WEBCLIENT_TRUSTED_PROXIES={ANYONE}" in advice[0], caplog.text


def test_what_to_set_at_start_is_logged_for_a_server_on_the_network(caplog: pytest.LogCaptureFixture) -> None:
    from webclient.web.access.access import Access

    with caplog.at_level(logging.INFO, logger="webclient.web.access.access"):
        Access.from_settings(Settings(token=TOKEN, host="0.0.0.0"))
        assert "WEBCLIENT_TRUSTED_PROXIES" in caplog.text
        caplog.clear()
        Access.from_settings(Settings(token=TOKEN, host="0.0.0.0", trusted_proxies=("10.0.0.1",)))
        Access.from_settings(Settings(token=TOKEN, host="127.0.0.1"))
        assert "WEBCLIENT_TRUSTED_PROXIES" not in caplog.text


def test_people_the_proxy_names_post_and_open_sockets_from_its_origin_on_every_instance(tmp_path: Path) -> None:
    """trusted-header mode: no cookie of ours, and the proxy's origin is ours on every instance, from the proxy only."""
    proof = ProxyProof(secret_file=SECRET_FILE)  # an address on this machine proves nothing alone
    with instances(tmp_path, auth="trusted-header", proxy_proof=proof) as clients:
        alice = {**THROUGH_PROXY, **as_person("alice"), "Origin": PROXIED}
        for client in clients:
            made = client.post(URLS.for_("new_session"), headers=alice)
            assert made.status_code == 303, made.text
            socket_url = "ws://127.0.0.1:8001" + made.headers["location"] + "/ws"
            with client.websocket_connect(socket_url, headers=alice) as socket:
                assert "session-status" in socket.receive_text()
            forged = {**alice, "X-Forwarded-Host": "evil.example:8080", "Origin": "http://evil.example:8080"}
            assert client.post(URLS.for_("new_session"), headers=forged).status_code == 403


@pytest.mark.parametrize(
    ("host", "scheme", "origin"),
    [
        ("127.0.0.1:8080", "http", "http://127.0.0.1:8080"),
        ("Tools.Example.com", "https", "https://tools.example.com"),
        ("tools.example.com:443", "https", "https://tools.example.com"),
        ("tools.example.com:443", "http", "http://tools.example.com:443"),
        ("[::1]:8000", "http", "http://[::1]:8000"),
        ("tools.example.com:0", "http", None),
        ("tools.example.com:99999", "http", None),
        ("tools.example.com/x", "http", None),
        ("a b", "http", None),
        ("", "http", None),
    ],
)
def test_a_host_is_one_plain_name_or_address_and_a_port(host: str, scheme: str, origin: str | None) -> None:
    found = parse_host(host, scheme)
    assert (str(found) if found is not None else None) == origin


@pytest.mark.parametrize(
    ("forwarded", "pairs"),
    [
        ('for=1.2.3.4;host="tools.example.com";proto=https', {"for": "1.2.3.4", "host": "tools.example.com"}),
        ("Host=tools.example.com", {"host": "tools.example.com"}),
        ("host=a.example, host=b.example", {}),  # two proxies' elements: which is the browser's is not known
    ],
)
def test_a_forwarded_header_of_one_proxy_is_read(forwarded: str, pairs: dict[str, str]) -> None:
    read = forwarded_pairs(Headers({"forwarded": forwarded}))
    assert {name: read[name] for name in pairs} == pairs and (read != {} or pairs == {})
