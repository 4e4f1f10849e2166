"""Lone surrogates in every field an agent controls never break a page (issue 9, section 2).

``tests/agents/surrogate_agent.py`` puts ``"\\udc80\\ud800"`` (valid JSON escapes, not encodable as UTF-8) in every
string it sends. The test then opens every page of the session a user can reach from it: the session page, every
link and htmx URL on it and on the pages it leads to (protocol log and each of its lines, export, the file panel
for each location, changes and each change's diff, resource pages, diff bodies), and the live socket; each
answers 200 and the server logs no error.
"""

from __future__ import annotations

import re
import sys
import threading
import time
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import httpx
import pytest
from websockets.sync.client import connect

from tests.support.servers import AGENTS, Server, ServerFactory
from tests.support.urls import URLS, socket_at

AGENT = f"{sys.executable} {AGENTS / 'surrogate_agent.py'}"
MAX_PAGES = 400


class _Links(HTMLParser):
    """Every URL a user (or htmx) can follow from a page: href and hx-get."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []
        self.nonce: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        for name in ("href", "hx-get"):
            if found.get(name):
                self.urls.append(str(found[name]))
        if found.get("name") == "nonce":
            self.nonce = found.get("value")


def links(html: str) -> _Links:
    parser = _Links()
    parser.feed(html)
    return parser


def drain(server: Server) -> list[str]:
    """The server's output, read as it comes (a full pipe would stall it)."""
    lines: list[str] = []
    stdout = server.process.stdout
    assert stdout is not None

    def read() -> None:
        for line in iter(stdout.readline, b""):
            lines.append(line.decode("utf-8", "replace"))

    threading.Thread(target=read, daemon=True).start()
    return lines


def wait_for(http: httpx.Client, url: str, pattern: str, timeout: float = 30) -> str:
    deadline = time.monotonic() + timeout
    while True:
        html = http.get(url).text
        if re.search(pattern, html):
            return html
        if time.monotonic() > deadline:
            raise AssertionError(f"{pattern!r} never appeared on {url}")
        time.sleep(0.2)


@pytest.mark.slow
def test_lone_surrogates_in_every_agent_field_break_no_page(start_server: ServerFactory, tmp_path: Path) -> None:
    fields_file = tmp_path / "fields.txt"
    server = start_server(agent=AGENT, FUZZ_FIELDS=str(fields_file), process=True)
    output = drain(server)
    with server.http() as http:
        created = http.post(URLS.for_("new_session"))
        assert created.status_code == 303, created.text
        session_path = urlsplit(created.headers["location"]).path
        page = wait_for(http, session_path, r'data-agent-state="ready"')
        nonce = links(page).nonce
        assert nonce
        sent = http.post(f"{session_path}/prompt", data={"prompt": "go", "nonce": nonce})
        assert sent.status_code == 303
        wait_for(http, session_path, r'data-turn-state="awaiting-permission"')
        wait_for(http, session_path, r"fuzzed")

        # The live socket renders the whole page as its first frame.
        ws_url = socket_at(server.url, session_path)
        with connect(ws_url, additional_headers=server.headers, open_timeout=10) as socket:
            frame = socket.recv(timeout=10)
            assert "tool-call" in str(frame)

        # Every page a user can reach from the session (and the index, which lists it), breadth first.
        seen = {session_path}
        queue = [session_path, "/"]
        checked: list[str] = []
        while queue and len(checked) < MAX_PAGES:
            url = queue.pop(0)
            response = http.get(url)
            checked.append(url)
            if response.status_code != 200:
                time.sleep(0.5)  # the server's traceback, for the message
                raise AssertionError(f"{url} answered {response.status_code}:\n{''.join(output)[-6000:]}")
            if "html" not in response.headers.get("content-type", ""):
                continue
            for link in links(response.text).urls:
                target = urljoin(url, link)
                parts = urlsplit(target)
                if parts.netloc or not parts.path.startswith(session_path + "/") or parts.path.endswith("/ws"):
                    continue
                target = parts.path + (f"?{parts.query}" if parts.query else "")
                if target not in seen:
                    seen.add(target)
                    queue.append(target)

    fields = sorted(set(fields_file.read_text().splitlines()))
    server.process.terminate()
    server.process.wait(timeout=10)
    time.sleep(0.2)
    log = "".join(output)
    assert "Traceback" not in log and "Exception" not in log, log[-5000:]
    kinds = Counter(re.sub(r"/\d+|\?.*", "", path.removeprefix(session_path)) or "/" for path in checked)
    print(f"\nfuzzed {len(fields)} fields, checked {len(checked)} pages (and the socket): {sorted(kinds.items())}")
    assert len(fields) >= 60
    for expected in ("/file", "/log", "/export.md", "/changes", "/changes/diff", "/resources", "/diffs"):
        assert expected in kinds, f"no {expected} page was reached: {sorted(kinds)}"
