"""The embedding API in Chromium: a portal of another origin (``http://localhost:PORT``, a tiny server of the test's)
embeds the client (``http://127.0.0.1:PORT``) in an iframe, at desktop and phone widths. The session starts with the
first prompt, the portal hears what happens in order, its commands send a prompt and stop the turn; a page of an
origin that may frame the client but is not written out (``http://localhost:*``) hears nothing and is not obeyed, nor
is a sibling frame; opened on its own, the start page waits for its Start button.

Trusted-header mode (``TEAM``): the browser context sends the proxy's headers on every request, so no cookie is
needed inside the frame.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlencode

import pytest
from playwright.sync_api import Browser, Frame, Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.support.browser import Browsers
from tests.support.people import TEAM, as_person
from tests.support.servers import Server, ServerFactory, free_port

pytestmark = pytest.mark.browser


class Site:
    """A tiny web site of its own origin (``http://localhost:PORT``, while the client is on ``127.0.0.1``): the pages
    the test gives it, by path, from a thread. ``localhost`` is this machine to Chromium too, so its Local Network
    Access checks let it frame the client (a public portal framing a client on a private address is another
    matter: docs/embedding.md)."""

    def __init__(self) -> None:
        self.pages: dict[str, str] = {}
        pages = self.pages

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (the standard library's name)
                body = pages.get(self.path)
                self.send_response(200 if body is not None else 404)
                self.send_header("content-type", "text/html; charset=utf-8")
                self.end_headers()
                self.wfile.write((body or "no such page").encode())

            def log_message(self, *args: object) -> None:
                pass

        self.port = free_port()
        self.origin = f"http://localhost:{self.port}"
        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def sites() -> Iterator[tuple[Site, Site]]:
    """The portal, whose origin is written out in ``WEBCLIENT_FRAME_ANCESTORS``, and another site that may frame the
    client only through a wildcard (``http://localhost:*``)."""
    portal, other = Site(), Site()
    yield portal, other
    portal.close()
    other.close()


# The portal's page: docs/embedding.md's snippet, with what it hears kept in window.received for the test.
HOST_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<style>body { margin: 0; } iframe { border: 0; display: block; width: 100%; height: 100vh; }</style></head>
<body>
<iframe name="agents" src="__EMBED__" title="Coding agent"></iframe>
__SIBLING__
<script>
  const CLIENT = "__CLIENT__";
  const frame = document.querySelector('iframe[name="agents"]');
  window.received = [];
  window.addEventListener("message", (event) => {
    if (event.origin !== CLIENT || event.source !== frame.contentWindow) return;
    window.received.push(event.data);
  });
  window.command = (message) => frame.contentWindow.postMessage(message, CLIENT);
  window.anyone = (message) => frame.contentWindow.postMessage(message, "*");
</script>
</body></html>
"""

# A frame of another origin next to the client in the portal's page: it tries to command its sibling.
SIBLING_PAGE = """<!doctype html><html><body><script>
  window.attack = (text) => parent.frames["agents"].postMessage({ type: "prompt", text: text }, "*");
</script></body></html>"""


def host_page(server: Server, query: dict[str, str], sibling: Site | None = None) -> str:
    embed = f"{server.url}/embed?{urlencode(query)}"
    frame = f'<iframe name="sibling" src="{sibling.origin}/sibling" hidden></iframe>' if sibling else ""
    return HOST_PAGE.replace("__EMBED__", embed).replace("__CLIENT__", server.url).replace("__SIBLING__", frame)


@pytest.fixture
def server(start_server: ServerFactory, sites: tuple[Site, Site]) -> Server:
    portal, _ = sites
    return start_server(**TEAM, WEBCLIENT_FRAME_ANCESTORS=f"'self' {portal.origin} http://localhost:*")


@pytest.fixture
def browsers(browser: Browser) -> Iterator[Browsers]:
    """A browser context per page, alice's (the proxy's headers on every request), checked for JavaScript errors."""
    opened = Browsers(browser)
    yield opened
    opened.close()


def open_page(browsers: Browsers, url: str, width: int, height: int) -> Page:
    page = browsers.page("alice", extra_http_headers=as_person("alice"))
    page.set_viewport_size({"width": width, "height": height})
    page.goto(url)
    return page


def received(page: Page) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = page.evaluate("window.received")
    return messages


def wait_for_messages(page: Page, count: int) -> list[dict[str, Any]]:
    """What the portal has heard, once it is at least ``count`` messages (else what it heard, and where the frames
    are, in the error)."""
    try:
        page.wait_for_function(f"window.received.length >= {count}", timeout=10_000)
    except PlaywrightTimeout:
        frames = [(frame.name, frame.url) for frame in page.frames]
        raise AssertionError(f"the portal heard {received(page)}, not {count} messages; frames: {frames}") from None
    return received(page)


def types(messages: list[dict[str, Any]]) -> list[str]:
    return [message["type"] for message in messages]


def client_frame(page: Page, server: Server) -> Frame:
    """The client's frame, once it shows a session (the start page has sent its form)."""
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        for frame in page.frames:
            if frame.url.startswith(server.url + "/embed/sessions/"):
                return frame
        page.wait_for_timeout(50)  # (Playwright takes in the frames' news only while it is called)
    raise AssertionError(f"the client's frame never showed a session: {[frame.url for frame in page.frames]}")


def prompts_received(server: Server) -> list[str]:
    return [
        block["text"]
        for message in server.received()
        if message.get("method") == "session/prompt"
        for block in message["params"]["prompt"]
        if block.get("type") == "text"
    ]


@pytest.mark.parametrize(("width", "height"), [(1280, 800), (390, 844)], ids=["desktop", "phone"])
def test_a_portal_embeds_a_session_hears_what_happens_and_commands_it(
    server: Server, sites: tuple[Site, Site], browsers: Browsers, width: int, height: int
) -> None:
    portal, other = sites
    query = {"agent": "agent", "prompt": "stream 3", "theme": "dark", "accent": "#12ab34"}
    portal.pages["/"] = host_page(server, query, sibling=other)
    other.pages["/sibling"] = SIBLING_PAGE
    page = open_page(browsers, portal.origin + "/", width, height)

    # The framed start page sends its form by itself: the session starts with the first prompt.
    messages = wait_for_messages(page, 3)
    assert types(messages) == ["session-created", "turn-started", "turn-ended"], messages
    frame = client_frame(page, server)
    session_id = frame.locator("#session").get_attribute("data-session-id")
    assert messages[0] == {
        "source": "webclient",
        "type": "session-created",
        "sessionId": session_id,
        "url": f"{server.url}/sessions/{session_id}",
    }
    assert messages[2]["stopReason"] == "end_turn"
    assert prompts_received(server) == ["stream 3"]
    assert "created" not in frame.url  # a reload would not tell of a new session

    # Dressed as the portal asked, without the site's chrome, and nothing wider than the phone.
    assert frame.evaluate("document.documentElement.dataset.theme") == "dark"
    accent = frame.evaluate("getComputedStyle(document.documentElement).getPropertyValue('--accent').trim()")
    assert accent == "#12ab34"
    background = frame.evaluate("getComputedStyle(document.body).backgroundColor")
    assert background == "rgb(20, 20, 23)"  # dark, on a browser whose system theme is light
    expect(frame.locator('a[href="/"]')).to_have_count(0)  # nor in what the socket has pushed since
    expect(frame.locator('[data-action="protocol-log"]')).to_have_count(0)
    overflow = "document.documentElement.scrollWidth - document.documentElement.clientWidth"
    assert frame.evaluate(overflow) <= 0
    assert page.evaluate(overflow) <= 0

    # A command sends a prompt; Stop stops the turn it started.
    page.evaluate("command({type: 'prompt', text: 'slow'})")
    wait_for_messages(page, 4)
    server.wait_received(lambda message: message.get("method") == "session/prompt" and "slow" in json.dumps(message))
    page.evaluate("command({type: 'stop'})")
    messages = wait_for_messages(page, 5)
    assert types(messages)[3:] == ["turn-started", "turn-ended"]
    assert messages[4]["stopReason"] == "cancelled"

    # Waiting for the user: a permission asked in the turn.
    page.evaluate("command({type: 'prompt', text: 'permission'})")
    messages = wait_for_messages(page, 7)
    assert types(messages)[5:] == ["turn-started", "waiting"]
    assert messages[6]["kind"] == "permission"
    assert frame.evaluate(overflow) <= 0  # the permission's card fits too
    frame.locator('[data-role="permission"] button[data-option-kind="allow_once"]').click()
    messages = wait_for_messages(page, 8)
    assert types(messages)[7:] == ["turn-ended"]

    # A sibling frame of another origin cannot command the client; nor can junk from the portal.
    page.frame(name="sibling").evaluate("attack('stream 9')")  # type: ignore[union-attr]
    page.evaluate("command({type: 'prompt', text: 42}); command('stream 8'); command({type: 'nonsense'})")
    page.wait_for_timeout(1000)
    assert prompts_received(server) == ["stream 3", "slow", "permission"]
    assert len(received(page)) == 8

    # Ended from the client's own End: the portal hears it, once.
    frame.locator('[data-action="end-session"]').click()
    messages = wait_for_messages(page, 9)
    assert types(messages)[8:] == ["session-ended"]
    frame = client_frame(page, server)
    frame.wait_for_url(lambda url: "ended" not in url)
    frame.goto(frame.url)  # a reload tells nothing again
    expect(frame.locator("#session")).to_have_attribute("data-turn-state", "ended")
    page.wait_for_timeout(1000)
    assert len(received(page)) == 9


def test_a_site_that_may_frame_but_is_not_written_out_hears_nothing_and_is_not_obeyed(
    server: Server, sites: tuple[Site, Site], browsers: Browsers
) -> None:
    _, other = sites
    other.pages["/"] = host_page(server, {"prompt": "stream 1"})
    page = open_page(browsers, other.origin + "/", 1280, 800)
    frame = client_frame(page, server)
    expect(frame.locator("#session")).to_have_attribute("data-turns", "1")
    expect(frame.locator("#session")).to_have_attribute("data-turn-state", "idle")
    page.evaluate("anyone({type: 'prompt', text: 'stream 7'}); anyone({type: 'stop'})")
    page.wait_for_timeout(1000)
    assert prompts_received(server) == ["stream 1"]
    assert received(page) == []


def test_opened_on_its_own_the_start_page_waits_for_its_start_button(server: Server, browsers: Browsers) -> None:
    url = f"{server.url}/embed?{urlencode({'prompt': 'stream 1', 'theme': 'light'})}"
    page = open_page(browsers, url, 390, 844)
    expect(page.locator('[data-role="embed-prompt"]')).to_have_text("stream 1")
    page.wait_for_timeout(1000)
    assert page.url.startswith(server.url + "/embed?")
    assert server.received() == []
    page.click('[data-action="embed-start"]')
    expect(page.locator("#session")).to_have_attribute("data-turns", "1")
    assert prompts_received(server) == ["stream 1"]
    assert page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth") <= 0


def test_an_agent_that_exits_mid_turn_ends_the_turn_then_the_session(
    server: Server, sites: tuple[Site, Site], browsers: Browsers
) -> None:
    portal, _ = sites
    portal.pages["/"] = host_page(server, {"prompt": "crash"})
    page = open_page(browsers, portal.origin + "/", 1280, 800)
    messages = wait_for_messages(page, 4)
    assert types(messages) == ["session-created", "turn-started", "turn-ended", "session-ended"], messages
    assert messages[2]["stopReason"] == "error"
    assert messages[3]["agentState"] in ("exited", "failed")
