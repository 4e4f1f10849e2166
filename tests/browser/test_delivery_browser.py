"""The session page works from its hashed, compressed static files (its scripts joined in one), and a second visit
asks the server for none of them (web/delivery)."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import expect

from tests.support.browser import Browsers, open_session, send_prompt, until_connected
from tests.support.servers import ServerFactory


class StaticTraffic:
    """The static files a page fetched, with the bytes each took on the wire (0: from the browser's cache)."""

    def __init__(self, page: Any) -> None:
        self.urls: dict[str, str] = {}
        self.fetched: dict[str, int] = {}
        cdp = page.context.new_cdp_session(page)
        cdp.send("Network.enable")
        cdp.on("Network.requestWillBeSent", self._sent)
        cdp.on("Network.loadingFinished", self._finished)

    def _sent(self, event: dict[str, Any]) -> None:
        if "/static/" in event["request"]["url"]:
            self.urls[event["requestId"]] = event["request"]["url"]

    def _finished(self, event: dict[str, Any]) -> None:
        if event["requestId"] in self.urls:
            url = self.urls.pop(event["requestId"])
            self.fetched[url] = self.fetched.get(url, 0) + int(event["encodedDataLength"])


def test_the_session_page_works_from_hashed_compressed_files_and_a_second_visit_fetches_none(
    browsers: Browsers, start_server: ServerFactory
) -> None:
    server = start_server()
    page = browsers.page("alice")
    answers: list[Any] = []
    page.on("response", lambda response: answers.append(response) if "/static/" in response.url else None)
    open_session(page, server)
    send_prompt(page, "stream 50")
    expect(page.locator('[data-role="agent-message"]')).to_contain_text("w49")
    assert len(answers) >= 5
    for answer in answers:
        assert "?v=" in answer.url, answer.url
        headers = answer.all_headers()
        assert headers["cache-control"] == "public, max-age=31536000, immutable", answer.url
        if int(headers.get("content-length", "0")) > 400 and not answer.url.split("?")[0].endswith(".svg"):
            assert headers.get("content-encoding") == "br", answer.url
    scripts = page.locator('script[type="module"]')
    expect(scripts).to_have_count(1)
    assert "/static/js/session-page.js?v=" in (scripts.get_attribute("src") or "")

    traffic = StaticTraffic(page)
    page.goto(page.url)
    until_connected(page)
    send_prompt(page, "stream 5")
    expect(page.locator('[data-role="agent-message"]').last).to_contain_text("w4")
    assert traffic.fetched and all(size == 0 for size in traffic.fetched.values()), traffic.fetched
