"""A portal of another origin for the embedding API's browser tests (``docs/embedding.md``): a tiny site of the
test's own, the portal's page framing the client (the docs' snippet, keeping what it hears in ``window.received``),
and what the portal heard. The client may be the server itself or a proxy in front of it, under a path prefix."""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from playwright.sync_api import Frame, Page
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.support.servers import free_port
from tests.support.urls import at


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


def host_page(client: str, query: dict[str, str], sibling: Site | None = None) -> str:
    """The portal's page framing ``client``'s ``/embed`` (``client``: its URL, a path prefix included) with ``query``;
    ``sibling``: a site whose ``/sibling`` page (`SIBLING_PAGE`) is framed beside it."""
    embed = at(client, "embed", **query)
    parts = urlsplit(client)
    frame = f'<iframe name="sibling" src="{sibling.origin}/sibling" hidden></iframe>' if sibling else ""
    origin = f"{parts.scheme}://{parts.netloc}"
    return HOST_PAGE.replace("__EMBED__", embed).replace("__CLIENT__", origin).replace("__SIBLING__", frame)


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


def client_frame(page: Page, client: str) -> Frame:
    """The client's frame, once it shows a session (the start page has sent its form); ``client`` as in `host_page`."""
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        for frame in page.frames:
            if frame.url.startswith(client.rstrip("/") + "/embed/sessions/"):
                return frame
        page.wait_for_timeout(50)  # (Playwright takes in the frames' news only while it is called)
    raise AssertionError(f"the client's frame never showed a session: {[frame.url for frame in page.frames]}")
