"""The protocol log page, against the real server and the scripted agent: in Chromium, and over plain HTTP."""

from __future__ import annotations

import re
import time

import httpx
from bs4 import BeautifulSoup
from playwright.sync_api import Page, expect

from tests.support.browser import open_session, send_prompt
from tests.support.servers import Server, ServerFactory
from tests.support.urls import at


def open_log(page: Page) -> Page:
    """The log of the session open in ``page``, in a second tab (as the session page's link opens it)."""
    log = page.context.new_page()
    log.goto(page.url + "/log")
    expect(log.locator('[data-role="protocol-log"]')).to_be_visible()
    return log


def row(log: Page, direction: str, method: str, kind: str) -> str:
    return f'.log-row[data-direction="{direction}"][data-method="{method}"][data-kind="{kind}"]'


def test_log_shows_every_message_both_ways(start_server: ServerFactory, page: Page) -> None:
    server = start_server()
    open_session(page, server)
    send_prompt(page, "stream 3")
    expect(page.locator('[data-role="agent-message"]')).to_contain_text("w2")
    expect(page.locator("#session")).to_have_attribute("data-turn-state", "idle")
    log = open_log(page)
    for method in ("initialize", "session/new", "session/prompt"):
        expect(log.locator(row(log, "out", method, "request"))).to_have_count(1)
        expect(log.locator(row(log, "in", method, "response"))).to_have_count(1)
    chunks = log.locator('.log-row[data-update="agent_message_chunk"]')
    expect(chunks).to_have_count(3)
    expect(chunks.first.locator('[data-role="update-type"]')).to_have_text("agent_message_chunk")
    expect(chunks.first.locator(".log-dir")).to_have_attribute("title", "agent → client")
    prompt_row = log.locator(row(log, "out", "session/prompt", "request"))
    expect(prompt_row.locator(".log-preview")).to_contain_text('"stream 3"')
    expect(prompt_row.locator("time")).to_have_text(re.compile(r"^\d\d:\d\d:\d\d\.\d{3}$"))
    expect(prompt_row.locator(".log-pretty")).to_have_count(0)
    prompt_row.locator("summary").click()
    pretty = prompt_row.locator(".log-pretty")
    expect(pretty).to_contain_text('"method": "session/prompt"')
    assert "\n  " in pretty.inner_text()  # indented
    answer = log.locator(row(log, "in", "session/prompt", "response"))
    expect(answer.locator(".log-method")).to_have_text("session/prompt")
    expect(answer.locator(".log-kind")).to_have_text("result")
    expect(log.locator('[data-role="stderr"] summary')).to_contain_text("Agent stderr")


def test_log_filters_without_reload_and_tails_live(start_server: ServerFactory, page: Page) -> None:
    server = start_server()
    open_session(page, server)
    send_prompt(page, "stream 3")
    expect(page.locator('[data-role="agent-message"]')).to_contain_text("w2")
    expect(page.locator("#session")).to_have_attribute("data-turn-state", "idle")
    log = open_log(page)
    rows = log.locator(".log-row")
    total = rows.count()
    assert total >= 9  # initialize, session/new, session/prompt both ways, three chunks
    log.evaluate("window.notReloaded = true")

    log.select_option('select[name="direction"]', "out")
    expect(log.locator('.log-row[data-direction="in"]')).to_have_count(0)
    expect(log.locator('.log-row[data-direction="out"][data-method="initialize"]')).to_have_count(1)
    expect(log).to_have_url(re.compile(r"direction=out"))

    # Ignoring case; only an agent chunk says it ("w1 " in JSON: a test worker's folder, popen-gw1, holds "w1" too).
    log.fill('input[name="q"]', 'W1 "')
    expect(rows).to_have_count(0)
    expect(log.locator(".log-empty")).to_be_visible()
    log.select_option('select[name="direction"]', "")
    expect(rows).to_have_count(1)
    expect(rows.first).to_have_attribute("data-update", "agent_message_chunk")

    log.select_option('select[name="method"]', "session/prompt")
    log.fill('input[name="q"]', "")
    expect(rows).to_have_count(2)
    assert log.evaluate("window.notReloaded") is True

    # A new turn from the session page appears in the open log, once, under the filters in force.
    send_prompt(page, "echo live")
    expect(rows).to_have_count(4, timeout=10_000)
    expect(rows.nth(2)).to_have_attribute("data-direction", "out")
    expect(rows.nth(3)).to_have_attribute("data-kind", "response")
    expect(rows.nth(2).locator(".log-preview")).to_contain_text("echo live")
    time.sleep(4.5)  # two more polls: nothing is added twice
    expect(rows).to_have_count(4)
    numbers = [int(n) for n in rows.evaluate_all("rows => rows.map(r => r.dataset.number)")]
    assert numbers == sorted(set(numbers))

    # The filtered view is a link: reloading it shows the same.
    log.reload()
    expect(log.locator('select[name="method"]')).to_have_value("session/prompt")
    expect(rows).to_have_count(4)


def test_unknown_updates_are_marked_and_filterable(start_server: ServerFactory, page: Page) -> None:
    server = start_server()
    open_session(page, server)
    send_prompt(page, "unknown")
    expect(page.locator('[data-role="user-message"]')).to_have_count(1)
    expect(page.locator("#session")).to_have_attribute("data-turn-state", "idle")
    send_prompt(page, "xss")
    expect(page.locator('[data-tool-call-id="x1"]')).to_be_visible()
    log = open_log(page)
    future = log.locator('.log-row[data-update="future_thing"]')
    expect(future).to_have_count(1)
    expect(future).to_have_class(re.compile(r"\bunknown\b"))
    expect(future.locator('[data-role="unknown-update"]')).to_have_text("unknown update")
    expect(log.locator('.log-row:not([data-update="future_thing"]) [data-role="unknown-update"]')).to_have_count(0)

    log.check('input[name="unknown"]')
    expect(log.locator(".log-row")).to_have_count(1)
    expect(log).to_have_url(re.compile(r"unknown=1"))
    future.locator("summary").click()
    expect(future.locator(".log-pretty")).to_contain_text('"note": "from the future"')
    log.uncheck('input[name="unknown"]')
    expect(log.locator(".log-row")).not_to_have_count(1)

    # Hostile agent text is shown as text, never as markup.
    log.fill('input[name="q"]', "onerror")
    hostile = log.locator(".log-row").first
    expect(hostile).to_have_attribute("data-update", "agent_thought_chunk")
    hostile.locator("summary").click()
    expect(hostile.locator(".log-pretty")).to_contain_text('<img src=x onerror=\\"alert(1)\\">')
    assert log.locator(".log-rows img, .log-rows script").count() == 0


def _session_with_traffic(server: Server) -> str:
    """A session created over plain HTTP; its log URL once the agent answered session/new."""
    response = httpx.post(at(server.url, "new_session"), headers=server.headers, follow_redirects=False)
    log_url = server.url + response.headers["location"] + "/log"
    deadline = time.monotonic() + 10
    # A row of it, not the filter's own "session/new" that the page echoes back.
    while (
        'data-method="session/new"'
        not in httpx.get(log_url, params={"method": "session/new"}, headers=server.headers).text
    ):
        assert time.monotonic() < deadline, "the agent never answered session/new"
        time.sleep(0.1)
    return log_url


def test_log_fragments_and_plain_text(start_server: ServerFactory) -> None:
    server = start_server(AUTH_REQUIRED="1")
    log_url = _session_with_traffic(server)
    htmx = {"HX-Request": "true"}
    with server.http() as http:
        page = BeautifulSoup(http.get(log_url).text, "html.parser")
        error = page.select_one('.log-row[data-kind="error"]')
        assert error is not None and error["data-method"] == "session/new" and error["data-direction"] == "in"
        assert page.select_one("#log-filters") is not None and page.select_one('[data-role="stderr"]') is not None

        fragment = http.get(log_url, params={"direction": "out"}, headers=htmx).text
        soup = BeautifulSoup(fragment, "html.parser")
        assert [element["id"] for element in soup.find_all(recursive=False)] == ["log-list"]
        assert {row["data-direction"] for row in soup.select(".log-row")} == {"out"}
        tail = soup.select_one("#log-tail")
        assert tail is not None and "direction=out" in tail["hx-get"]
        last = int(str(tail["hx-get"]).rsplit("after=", 1)[1])
        assert last == max(int(str(row["data-number"])) for row in page.select(".log-row"))

        polled = BeautifulSoup(http.get(log_url, params={"after": last - 2}, headers=htmx).text, "html.parser")
        assert [int(str(row["data-number"])) for row in polled.select(".log-row")] == [last - 1, last]
        assert polled.select_one("#log-tail") is not None and polled.select_one("#log-list") is None

        restored = http.get(log_url, headers={**htmx, "HX-History-Restore-Request": "true"}).text
        assert "<html" in restored

        pretty = BeautifulSoup(http.get(log_url, params={"line": 1}, headers=htmx).text, "html.parser").select("pre")
        assert len(pretty) == 1 and '\n  "method": "initialize",\n' in pretty[0].get_text()
        assert http.get(log_url, params={"line": 1}).text.startswith("{\n")
        assert http.get(log_url, params={"line": 99999}).status_code == 404

        text = http.get(log_url, params={"format": "text"})
        assert text.headers["content-type"].startswith("text/plain")
        lines = text.text.splitlines()
        assert re.match(r"^\d\d:\d\d:\d\d\.\d{3} → .*\"initialize\"", lines[0])
        assert any(" ← " in line and "Authentication required" in line for line in lines)
        assert "── agent stderr (" in text.text
