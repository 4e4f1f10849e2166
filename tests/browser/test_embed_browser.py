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
from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser import Browsers
from tests.support.nginx import behind_proxy, proxy_in_front
from tests.support.people import TEAM, as_person
from tests.support.portal import SIBLING_PAGE, Site, client_frame, host_page, received, types, wait_for_messages
from tests.support.servers import Server, ServerFactory, free_port
from tests.support.urls import at

pytestmark = pytest.mark.browser


@pytest.fixture
def sites() -> Iterator[tuple[Site, Site]]:
    """The portal, whose origin is written out in ``WEBCLIENT_FRAME_ANCESTORS``, and another site that may frame the
    client only through a wildcard (``http://localhost:*``)."""
    portal, other = Site(), Site()
    yield portal, other
    portal.close()
    other.close()


@pytest.fixture
def server(start_server: ServerFactory, sites: tuple[Site, Site]) -> Server:
    portal, _ = sites
    return start_server(**TEAM, WEBCLIENT_FRAME_ANCESTORS=f"'self' {portal.origin} http://localhost:*")


def open_page(browsers: Browsers, url: str, width: int, height: int) -> Page:
    page = browsers.page("alice", extra_http_headers=as_person("alice"))
    page.set_viewport_size({"width": width, "height": height})
    page.goto(url)
    return page


@pytest.mark.parametrize(("width", "height"), [(1280, 800), (390, 844)], ids=["desktop", "phone"])
def test_a_portal_embeds_a_session_hears_what_happens_and_commands_it(
    server: Server, sites: tuple[Site, Site], browsers: Browsers, width: int, height: int
) -> None:
    portal, other = sites
    query = {"agent": "agent", "prompt": "stream 3", "theme": "dark", "accent": "#12ab34"}
    portal.pages["/"] = host_page(server.url, query, sibling=other)
    other.pages["/sibling"] = SIBLING_PAGE
    page = open_page(browsers, portal.origin + "/", width, height)

    # The framed start page sends its form by itself: the session starts with the first prompt.
    messages = wait_for_messages(page, 3)
    assert types(messages) == ["session-created", "turn-started", "turn-ended"], messages
    frame = client_frame(page, server.url)
    session_id = frame.locator("#session").get_attribute("data-session-id")
    assert messages[0] == {
        "source": "webclient",
        "type": "session-created",
        "sessionId": session_id,
        "url": at(server.url, "session", session_id=session_id),
    }
    assert messages[2]["stopReason"] == "end_turn"
    assert server.prompts_received() == ["stream 3"]
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
    assert server.prompts_received() == ["stream 3", "slow", "permission"]
    assert len(received(page)) == 8

    # Ended from the client's own End: the portal hears it, once.
    frame.locator('[data-action="end-session"]').click()
    messages = wait_for_messages(page, 9)
    assert types(messages)[8:] == ["session-ended"]
    frame = client_frame(page, server.url)
    frame.wait_for_url(lambda url: "ended" not in url)
    frame.goto(frame.url)  # a reload tells nothing again
    expect(frame.locator("#session")).to_have_attribute("data-turn-state", "ended")
    page.wait_for_timeout(1000)
    assert len(received(page)) == 9


def test_a_site_that_may_frame_but_is_not_written_out_hears_nothing_and_is_not_obeyed(
    server: Server, sites: tuple[Site, Site], browsers: Browsers
) -> None:
    _, other = sites
    other.pages["/"] = host_page(server.url, {"prompt": "stream 1"})
    page = open_page(browsers, other.origin + "/", 1280, 800)
    frame = client_frame(page, server.url)
    expect(frame.locator("#session")).to_have_attribute("data-turns", "1")
    expect(frame.locator("#session")).to_have_attribute("data-turn-state", "idle")
    page.evaluate("anyone({type: 'prompt', text: 'stream 7'}); anyone({type: 'stop'})")
    page.wait_for_timeout(1000)
    assert server.prompts_received() == ["stream 1"]
    assert received(page) == []


def test_opened_on_its_own_the_start_page_waits_for_its_start_button(server: Server, browsers: Browsers) -> None:
    url = at(server.url, "embed", prompt="stream 1", theme="light")
    page = open_page(browsers, url, 390, 844)
    expect(page.locator('[data-role="embed-prompt"]')).to_have_text("stream 1")
    page.wait_for_timeout(1000)
    assert page.url.startswith(at(server.url, "embed") + "?")
    assert server.received() == []
    page.click('[data-action="embed-start"]')
    expect(page.locator("#session")).to_have_attribute("data-turns", "1")
    # Begun on the page; the agent has it once the folder's checkpoint is taken.
    server.wait_received(lambda message: message.get("method") == "session/prompt")
    assert server.prompts_received() == ["stream 1"]
    assert page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth") <= 0


def test_a_link_to_another_page_opens_in_a_tab_of_its_own_and_the_frame_keeps_the_session(
    server: Server, sites: tuple[Site, Site], browsers: Browsers
) -> None:
    portal, _ = sites
    portal.pages["/"] = host_page(server.url, {"prompt": "link /"})
    page = open_page(browsers, portal.origin + "/", 1280, 800)
    wait_for_messages(page, 3)
    frame = client_frame(page, server.url)
    embedded = frame.url
    with page.context.expect_page() as opened:
        frame.locator('[data-role="agent-message"] a', has_text="the link").click()
    assert opened.value.url.rstrip("/") == server.url  # the index, with the site's chrome, in a tab of its own
    assert frame.url == embedded


def test_an_agent_that_exits_mid_turn_ends_the_turn_then_the_session(
    server: Server, sites: tuple[Site, Site], browsers: Browsers
) -> None:
    portal, _ = sites
    portal.pages["/"] = host_page(server.url, {"prompt": "crash"})
    page = open_page(browsers, portal.origin + "/", 1280, 800)
    messages = wait_for_messages(page, 4)
    assert types(messages) == ["session-created", "turn-started", "turn-ended", "session-ended"], messages
    assert messages[2]["stopReason"] == "error"
    assert messages[3]["agentState"] in ("exited", "failed")


def test_through_nginx_under_a_prefix_over_https_in_a_portal_of_another_site(
    start_server: ServerFactory, browsers: Browsers
) -> None:
    """The same portal, served by Debian's nginx as ``https://localhost:PORT`` while the client is
    ``https://127.0.0.1:PORT/agents/``: signed in by the partitioned cookie inside the frame (token mode)."""
    port = free_port()
    server = start_server(
        **behind_proxy(port, tls=True, auth="token"), WEBCLIENT_FRAME_ANCESTORS=f"'self' https://localhost:{port}"
    )
    client = f"https://127.0.0.1:{port}/agents"
    portal = host_page(client, {"prompt": "stream 2", "theme": "light", "token": server.token})
    with proxy_in_front(server.url, (), port, root="/agents", strip=True, tls=True, portal=portal) as proxy:
        page = browsers.page("alice", ignore_https_errors=True)
        page.goto(proxy.portal_url)
        messages = wait_for_messages(page, 3)
        assert types(messages) == ["session-created", "turn-started", "turn-ended"], messages
        frame = client_frame(page, client)
        session_id = frame.locator("#session").get_attribute("data-session-id")
        assert messages[0]["url"] == at(client, "session", session_id=session_id)
        page.evaluate("command({type: 'prompt', text: 'stream 1'})")
        assert types(wait_for_messages(page, 5))[3:] == ["turn-started", "turn-ended"]
        assert server.prompts_received() == ["stream 2", "stream 1"]
