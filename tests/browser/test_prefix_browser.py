"""The app under ``/agents/`` behind a real Debian nginx over HTTPS, in Chromium: on its own page, and inside a
portal of another site that frames it (``WEBCLIENT_FRAME_ANCESTORS``), where only ``SameSite=None; Secure;
Partitioned`` cookies sign it in. nginx serves the portal's page too, opened as ``https://localhost:PORT`` while the
app is ``https://127.0.0.1:PORT``: two sites. The portal's own requests to the app are refused."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import FrameLocator, Page, expect

from tests.support.browser import Browsers
from tests.support.nginx import Proxy, behind_proxy, proxy_in_front, socket_folder, unix_upstream
from tests.support.servers import Server, ServerFactory, free_port

pytestmark = pytest.mark.browser

PREFIX = "/agents"


@pytest.fixture
def proxied(start_server: ServerFactory) -> Iterator[tuple[Server, Proxy]]:
    """A token-mode server behind nginx on HTTPS under ``/agents/`` (stripped, named in X-Forwarded-Prefix), and a
    portal's page of another site that frames it (signing in with the token), which the server lets frame it."""
    port = free_port()
    portal = f"https://localhost:{port}"
    with socket_folder() as path:
        env = behind_proxy(port, tls=True, auth="token", uds=path)
        server = start_server(**env, WEBCLIENT_FRAME_ANCESTORS=f"'self' {portal}")
        frame = f"https://127.0.0.1:{port}{PREFIX}/?token={server.token}"
        page = f"""<!doctype html><title>Portal</title><h1>The portal</h1>
<iframe id="agents" src="{frame}" width="1000" height="800"></iframe>"""
        with proxy_in_front(unix_upstream(path), (), port, root=PREFIX, strip=True, tls=True, portal=page) as proxy:
            yield server, proxy


def sessions_started(server: Server) -> int:
    return sum(1 for message in server.received() if message.get("method") == "session/new")


def use_a_session(frame: Page | FrameLocator) -> None:
    """Start a session, prompt, and see the agent's answer stream in over the socket."""
    frame.locator('[data-action="new-session"]').first.click()
    expect(frame.locator("#session")).to_have_attribute("data-turn-state", "idle")
    frame.locator('[data-role="prompt"] textarea[name="prompt"]').fill("stream 3")
    frame.locator('[data-role="prompt"] textarea[name="prompt"]').press("Enter")
    expect(frame.locator('[data-role="agent-message"]').last).to_contain_text("w0 w1 w2")
    expect(frame.locator("#session")).to_have_attribute("data-turn-state", "idle")


def test_a_page_and_its_socket_work_under_the_prefix_and_ask_for_nothing_outside_it(
    proxied: tuple[Server, Proxy], browsers: Browsers
) -> None:
    server, proxy = proxied
    page = browsers.page("alice", ignore_https_errors=True)
    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url))
    page.on("websocket", lambda socket: asked.append(socket.url))
    page.goto(f"{proxy.app_url}?token={server.token}")
    assert page.url == proxy.app_url
    use_a_session(page)
    page.evaluate("localStorage.setItem('acp-webclient.diff-mode', 'split')")  # the diff layout's cookie, made
    page.reload()
    expect(page.locator("#session")).to_have_attribute("data-turn-state", "idle")
    cookies = {cookie["name"]: cookie for cookie in page.context.cookies()}
    assert cookies["diff_mode"]["path"] == PREFIX
    assert [c["path"] for name, c in cookies.items() if name.startswith("webclient-")] == [PREFIX]
    sockets = [url for url in asked if url.startswith("wss://")]
    assert sockets and all(url.startswith(proxy.url.replace("https", "wss") + PREFIX + "/sessions/") for url in sockets)
    assert [
        url for url in asked if not url.startswith((proxy.app_url, proxy.url.replace("https", "wss") + PREFIX))
    ] == []


def test_a_portal_of_another_site_frames_the_app_signed_in_and_cannot_post_or_open_its_socket(
    proxied: tuple[Server, Proxy], browsers: Browsers
) -> None:
    server, proxy = proxied
    page = browsers.page("alice", ignore_https_errors=True)
    page.goto(proxy.portal_url)
    frame = page.frame_locator("#agents")
    use_a_session(frame)  # signed in by the cookie inside the frame: every request and the socket carried it
    signed: list[dict[str, Any]] = [c for c in page.context.cookies() if c["name"].startswith("webclient-")]
    assert len(signed) == 1 and signed[0]["sameSite"] == "None" and signed[0]["secure"] and signed[0]["httpOnly"]
    assert signed[0]["path"] == PREFIX
    session_url = next(f.url for f in page.frames if f.url.startswith(proxy.app_url))
    assert session_url.startswith(proxy.app_url + "sessions/"), session_url

    # The portal's own page (top level) sends the same partitioned cookie with its requests: they are refused.
    started = sessions_started(server)
    posted = page.evaluate(
        """async (url) => {
            const body = new URLSearchParams({a: "1"});
            return await fetch(url, {method: "POST", credentials: "include", body: body})
                .then((r) => r.status, (e) => "failed: " + e);
        }""",
        proxy.app_url + "sessions",
    )
    assert posted in (403, "failed: TypeError: Failed to fetch"), posted  # refused, or unreadable without CORS
    opened = page.evaluate(
        """(url) => new Promise((resolve) => {
            const socket = new WebSocket(url);
            socket.onopen = () => { resolve("open"); socket.close(); };
            socket.onclose = () => resolve("closed");
        })""",
        session_url.replace("https://", "wss://") + "/ws",
    )
    assert opened == "closed"
    page.wait_for_timeout(500)
    assert sessions_started(server) == started
    access_log = (proxy.prefix / "access.log").read_text()
    assert '"POST /agents/sessions HTTP/1.1" 403' in access_log
    assert '"GET /agents/sessions/' in access_log and '/ws HTTP/1.1" 403' in access_log
