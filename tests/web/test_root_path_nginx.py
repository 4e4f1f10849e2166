"""The app under ``/agents/`` behind a real Debian nginx (its own process, the config docs/deployment.md shows), over
HTTPS, on the server's unix socket: nginx passes the path whole (the server is told ``WEBCLIENT_ROOT_PATH``) or
strips the prefix and names it in ``X-Forwarded-Prefix`` (believed from nginx alone: a connection on the socket).
Sign-in, redirects, cookies, pages and the socket."""

from __future__ import annotations

import re
import ssl
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from websockets.sync.client import connect

from tests.support.html import parse
from tests.support.nginx import TEAM, Proxy, behind_proxy, location, proxy_in_front, socket_folder, unix_upstream
from tests.support.servers import ROOT, Server, ServerFactory, free_port
from tests.support.urls import URLS

PREFIX = "/agents"
RECIPE_SOCKET = unix_upstream(Path("/run/webclient/webclient.sock"))
"""The upstream of docs/deployment.md's recipe."""
HTML = {"Accept": "text/html,application/xhtml+xml"}


@pytest.fixture(params=["whole", "stripped"])
def proxied(request: pytest.FixtureRequest, start_server: ServerFactory) -> Iterator[tuple[Server, Proxy]]:
    """A token-mode server on a unix socket behind nginx on HTTPS under ``/agents/``, the path passed whole or
    stripped."""
    port = free_port()
    strip = request.param == "stripped"
    with socket_folder() as path:
        env = behind_proxy(port, tls=True, auth="token", uds=path)
        if not strip:
            env["WEBCLIENT_ROOT_PATH"] = PREFIX
        server = start_server(**env)
        with proxy_in_front(unix_upstream(path), (), port, root=PREFIX, strip=strip, tls=True) as proxy:
            yield server, proxy


def browser(proxy: Proxy) -> httpx.Client:
    """A client as a browser behind the proxy: cookies kept, redirects not followed, the self-signed certificate."""
    return httpx.Client(base_url=proxy.url, verify=False, follow_redirects=False)


def sign_in(client: httpx.Client, server: Server) -> httpx.Response:
    signed_in = client.get(f"{PREFIX}/?token={server.token}", headers=HTML)
    assert signed_in.status_code == 303, signed_in.text
    return signed_in


@pytest.mark.process
def test_sign_in_pages_redirects_and_cookies_carry_the_prefix_through_nginx(proxied: tuple[Server, Proxy]) -> None:
    server, proxy = proxied
    with browser(proxy) as client:
        assert client.get(PREFIX).headers["location"].endswith(PREFIX + "/")  # nginx's own, for the bare prefix
        assert client.get(URLS.for_("new_session")).status_code == 404  # nothing of the app outside the prefix
        refused = client.get(PREFIX + "/?page=2", headers=HTML)
        assert refused.status_code == 401, proxy.log()
        form = next(e for e in parse(refused.text).elements if e.tag == "form")
        assert form.attrs["action"] == PREFIX + URLS.sign_in()
        signed_in = sign_in(client, server)
        assert signed_in.headers["location"] == PREFIX + "/"
        cookie = signed_in.headers["set-cookie"]
        assert "Path=/agents;" in cookie and "Secure" in cookie and "HttpOnly" in cookie and "SameSite=lax" in cookie
        # Named after the origin the browser sees (nginx's port) and the prefix, not the socket it arrived on.
        assert cookie.startswith(f"webclient-{proxy.url.rsplit(':', 1)[1]}-")
        index = client.get(PREFIX + "/", headers=HTML)
        assert index.status_code == 200
        elements = parse(index.text).elements
        urls = [v for e in elements for k, v in e.attr_list if k in ("href", "src", "action", "hx-get", "hx-post")]
        assert urls and [url for url in urls if not url.startswith(PREFIX + "/")] == []
        assert client.get(urls[0]).status_code == 200  # a static file, through the prefix
        # A browser's own X-Forwarded-Prefix is dropped or replaced by nginx.
        spoofed = client.get(PREFIX + "/", headers={**HTML, "X-Forwarded-Prefix": "/elsewhere"})
        assert "/elsewhere" not in spoofed.text


@pytest.mark.process
def test_a_session_and_its_socket_work_through_nginx_under_the_prefix(proxied: tuple[Server, Proxy]) -> None:
    server, proxy = proxied
    with browser(proxy) as client:
        sign_in(client, server)
        made = client.post(PREFIX + URLS.for_("new_session"), headers={"Origin": proxy.url})
        assert made.status_code == 303, made.text
        session_path = made.headers["location"]
        assert session_path.startswith(PREFIX + "/sessions/")
        server.wait_received(lambda m: m.get("method") == "session/new")
        page = client.get(session_path, headers=HTML)
        assert page.status_code == 200
        socket_url = next(e.attrs["ws-connect"] for e in parse(page.text).elements if "ws-connect" in e.attrs)
        # wss: nginx said https; the query is the page's stamp
        assert socket_url.startswith(proxy.url.replace("https", "wss") + session_path + "/ws?page=")
        cookie = "; ".join(f"{name}={value}" for name, value in client.cookies.items())
        unverified = ssl.create_default_context()
        unverified.check_hostname, unverified.verify_mode = False, ssl.CERT_NONE
        headers = {"Cookie": cookie, "Origin": proxy.url}
        with connect(socket_url, additional_headers=headers, ssl=unverified, open_timeout=10) as socket:
            assert "session-status" in str(socket.recv(timeout=10))


def test_the_deployment_docs_show_the_nginx_location_the_tests_use() -> None:
    docs = (ROOT / "docs" / "deployment.md").read_text()
    section = docs[docs.index("## Behind a reverse proxy, under a path prefix") : docs.index("## In a portal's iframe")]
    block = re.search(r"```nginx\n(.*?)```", section, re.DOTALL)
    assert block is not None
    stripped = location(RECIPE_SOCKET, PREFIX, strip=True)
    assert " ".join(stripped.split()) in " ".join(block.group(1).split())
    whole = location(RECIPE_SOCKET, PREFIX, strip=False).splitlines()
    for line in set(whole) - set(stripped.splitlines()):  # the lines that differ when the path is passed whole
        assert f"`{line.strip()}`" in section, line


def test_the_teams_deployment_in_the_docs_shows_the_nginx_location_the_tests_use() -> None:
    docs = (ROOT / "docs" / "deployment.md").read_text()
    section = docs[docs.index("## The deployment a team should use") : docs.index("## What is safe today")]
    block = re.search(r"```nginx\n(.*?)```", section, re.DOTALL)
    assert block is not None
    named = location(RECIPE_SOCKET, PREFIX, strip=True, signs_in=True)
    assert " ".join(named.split()) in " ".join(block.group(1).split())


@pytest.mark.process
def test_people_named_by_the_proxy_work_under_its_prefix(start_server: ServerFactory) -> None:
    """trusted-header mode: nginx signs Alice in and names her, under /agents/ over HTTPS, the prefix stripped."""
    port = free_port()
    with socket_folder() as path:
        server = start_server(**behind_proxy(port, tls=True, uds=path))
        assert server.uds == path
        with (
            proxy_in_front(unix_upstream(path), TEAM, port, root=PREFIX, strip=True, tls=True) as proxy,
            browser(proxy) as client,
        ):
            index = client.get(PREFIX + "/", auth=proxy.auth("alice"), headers=HTML)
            assert index.status_code == 200, proxy.log()
            assert "Signed in as alice (admin)" in index.text
            urls = [v for e in parse(index.text).elements for k, v in e.attr_list if k in ("href", "src", "action")]
            assert urls and [url for url in urls if not url.startswith(PREFIX + "/")] == []
            made = client.post(
                PREFIX + URLS.for_("new_session"), auth=proxy.auth("alice"), headers={"Origin": proxy.url}
            )
            assert made.status_code == 303 and made.headers["location"].startswith(PREFIX + "/sessions/")
            assert client.get(made.headers["location"], auth=proxy.auth("bob"), headers=HTML).status_code == 404
