"""The XSS corpus (tests/xss_payloads.py) through Markdown, streaming Markdown and the session templates.

No browser here (tests/browser/test_xss_browser.py drives Chromium): the HTML we produce is parsed with
``html.parser`` and every element and attribute is checked against what the page may contain.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import urlsplit

import pytest
from markupsafe import escape

from tests.support.html import Element, Parsed, parse, squash
from tests.support.servers import AGENTS
from tests.support.sessions import acp
from tests.support.urls import URLS
from tests.support.xss_payloads import PAYLOADS, SINGLE_LINE
from webclient.acp.agent import AcpAgent
from webclient.people.person import LOCAL
from webclient.render import formats
from webclient.render.dom import live_id
from webclient.render.markdown import MarkdownStream, render_markdown
from webclient.render.message_docs import TAIL, MessageDocs, MessageView
from webclient.render.rendering import Renderer
from webclient.render.urls import Urls
from webclient.session.agent_entry import AgentEntry
from webclient.session.agent_spec import AgentSpec
from webclient.session.core import Session
from webclient.store.matching import query_words, word_pattern
from webclient.viewmodel.entries import MessageEntry
from webclient.web.pages.history import History, MarkedHit, human_time, live_row, marked

AGENT_PATH = AGENTS / "xss_agent.py"

MARKDOWN_TAGS = frozenset(
    "a blockquote br code del em h1 h2 h3 h4 h5 h6 hr img li ol p pre span strong s "
    "table tbody td th thead tr ul".split()
)
MARKDOWN_ATTRIBUTES = {
    "a": {"href", "title", "rel"},
    "img": {"src", "alt", "title"},
    "span": {"class"},
    "code": {"class"},
    "ol": {"start"},
    "td": {"style"},
    "th": {"style"},
}
FORBIDDEN_TAGS = frozenset(
    "script iframe object embed style form base meta link frame frameset svg math template noscript portal "
    "input button textarea select video audio source isindex marquee details body".split()
)
NEVER_IN_PAGE = frozenset("iframe object embed frame frameset base style portal svg math template noscript".split())
URL_ATTRIBUTES = frozenset({"href", "src", "action", "formaction", "xlink:href", "data", "srcset", "poster"})
SAFE_SCHEMES = frozenset({"", "http", "https", "mailto"})
SAFE_IMAGE_TYPES = formats.SAFE_IMAGE_TYPES
SAFE_AUDIO_TYPES = formats.SAFE_AUDIO_TYPES
REGIONS = ("session", "thread", "composer", "session-status")
CSRF_HEADER = r'\{"X-CSRF-Token": "[0-9A-Za-z_-]+"\}'
"""The one ``hx-headers`` our templates write (on the file input): the page's CSRF token."""
HTMX_ATTRIBUTES = frozenset(
    {"hx-get", "hx-post", "hx-target", "hx-swap", "hx-trigger", "hx-vals", "hx-ext", "hx-swap-oob", "hx-sync"}
    | {"hx-params", "hx-encoding", "hx-headers", "ws-connect", "ws-send", "hx-push-url"}
)
"""Every htmx attribute our templates write; an agent must not be able to add any (``hx-on*`` least of all)."""


# -- parsing -----------------------------------------------------------------------------------------


def scheme(url: str) -> str:
    """The scheme a browser would see: control characters and whitespace dropped, lower case."""
    cleaned = re.sub(r"[\x00-\x20\x7f]", "", url).lower()
    match = re.match(r"([a-z][a-z0-9+.\-]*):", cleaned)
    return match.group(1) if match else ""


def other_origin(url: str) -> bool:
    """Whether following or loading ``url`` would leave the page's origin (absolute or protocol-relative)."""
    cleaned = re.sub(r"[\x00-\x20\x7f]", "", url).replace("\\", "/")
    return bool(urlsplit(cleaned).netloc) or cleaned.startswith("//")


# -- checks ------------------------------------------------------------------------------------------


def markdown_problems(markup: str) -> list[str]:
    """Everything in sanitised Markdown HTML that could run script, take over the page or reach elsewhere."""
    problems = []
    if "<script" in markup.lower():
        problems.append("a <script> in the markup")
    for element in parse(markup).elements:
        if element.tag in FORBIDDEN_TAGS or element.tag not in MARKDOWN_TAGS:
            problems.append(f"element {element!r}")
            continue
        for name, value in element.attr_list:
            if name.startswith("on"):
                problems.append(f"event handler {name}={value!r} on {element.tag}")
            elif name.startswith(("hx-", "data-hx-", "ws-", "data-ws-")):
                problems.append(f"htmx attribute {name}={value!r} on {element.tag}")
            elif name == "id":
                problems.append(f"id={value!r} on {element.tag}")
            elif name not in MARKDOWN_ATTRIBUTES.get(element.tag, ()):
                problems.append(f"attribute {name}={value!r} on {element.tag}")
            elif name in URL_ATTRIBUTES and scheme(value) not in SAFE_SCHEMES:
                problems.append(f"{scheme(value)}: URL in {element.tag} {name}={value!r}")
            elif name == "style" and not re.fullmatch(r"text-align:\s*(left|right|center);?", value):
                problems.append(f"style={value!r} on {element.tag}")
    return problems


def external_loads(markup: str) -> list[str]:
    """URLs the markup makes a browser load by itself (not on a click) from another origin."""
    return [
        element.attrs["src"]
        for element in parse(markup).elements
        if "src" in element.attrs and other_origin(element.attrs["src"])
    ]


def _history_search(element: Element) -> bool:
    """The index's search form (``webclient.web.pages.history``): a GET of the index, its one form not to /sessions."""
    search = {"data-role": "search", "method": "get", "action": "/"}
    return element.tag == "form" and all(element.attrs.get(key) == value for key, value in search.items())


def page_problems(markup: str) -> list[str]:
    """Everything in a whole rendered page (or fragment) that an agent should not have been able to put there."""
    problems = []
    parsed = parse(markup)
    ids: dict[str, int] = {}
    for element in parsed.elements:
        if element.tag == "script":
            if not element.attrs.get("src", "").startswith(URLS.static("")) or element.path != ("html", "head"):
                problems.append(f"a script that is not ours: {element!r}")
        elif element.tag in NEVER_IN_PAGE:
            problems.append(f"element {element!r}")
        elif element.tag == "meta" and element.path != ("html", "head"):
            problems.append(f"meta outside the head: {element!r}")
        elif element.tag == "link" and not element.attrs.get("href", "").startswith(URLS.static("")):
            problems.append(f"a link that is not our stylesheet: {element!r}")
        elif (
            element.tag == "form"
            and not element.attrs.get("action", URLS.for_("new_session")).startswith(URLS.for_("new_session"))
            and not _history_search(element)
        ):
            problems.append(f"a form that posts elsewhere: {element!r}")
        for name, value in element.attr_list:
            if name.startswith("on"):
                problems.append(f"event handler {name}={value!r} on {element!r}")
            elif name.startswith(("hx-", "data-hx-", "ws-", "data-ws-")):
                if name not in HTMX_ATTRIBUTES:
                    problems.append(f"htmx attribute {name}={value!r} on {element!r}")
                elif name in ("hx-get", "hx-post") and not value.startswith("/sessions/"):
                    ours = (value == "/" and _history_search(element)) or (
                        value == URLS.for_("inbox", part="count") and element.attrs.get("data-role") == "inbox-link"
                    )
                    if not (name == "hx-get" and ours):
                        problems.append(f"{name} to {value!r}")
                elif name == "hx-headers" and (
                    element.attrs.get("id") != "attach-input" or not re.fullmatch(CSRF_HEADER, value)
                ):
                    problems.append(f"hx-headers {value!r}")
                elif name == "hx-vals" and not _our_vals(value):
                    problems.append(f"hx-vals {value!r}")
            elif name in URL_ATTRIBUTES and scheme(value) not in SAFE_SCHEMES | {"ws", "wss"}:
                if not _inline_media(element.tag, name, value):
                    problems.append(f"{scheme(value)}: URL in {element!r}")
            elif name == "id":
                ids[value] = ids.get(value, 0) + 1
    problems += [f"id {name!r} appears {count} times" for name, count in ids.items() if count > 1]
    return problems


def _our_vals(value: str) -> bool:
    """``hx-vals`` as our templates write it: a JSON object (htmx would evaluate ``js:`` ones)."""
    try:
        vals = json.loads(value)
    except ValueError:
        return False
    if not isinstance(vals, dict):
        return False
    # A socket action by name, or a form's fields with the page's token (which no agent's text can know).
    return re.fullmatch(r"[a-z_]+", str(vals.get("action"))) is not None or vals.get("csrf") == "t"


def _inline_media(tag: str, name: str, value: str) -> bool:
    """A ``data:`` URL of a type the page shows inline (images, and audio it can play), in base64."""
    match = re.match(r"data:([a-z0-9.+/-]+);base64,", value)
    if match is None:
        return False
    mime = match.group(1)
    if mime in SAFE_IMAGE_TYPES:
        return (tag, name) in {("img", "src"), ("a", "href")}
    return mime in SAFE_AUDIO_TYPES and (tag, name) == ("audio", "src")


# -- Markdown -----------------------------------------------------------------------------------------

PAYLOAD_IDS = [f"p{i}" for i in range(len(PAYLOADS))]


@pytest.mark.parametrize("payload", PAYLOADS, ids=PAYLOAD_IDS)
def test_markdown_of_every_payload_is_inert(payload: str) -> None:
    markup = render_markdown(payload)
    assert markdown_problems(markup) == [], markup


@pytest.mark.parametrize("payload", PAYLOADS, ids=PAYLOAD_IDS)
def test_markdown_shows_the_tags_of_every_payload_as_text(payload: str) -> None:
    """Raw HTML is off: every tag an agent writes outside a link is text the user can read, not dropped."""
    text = squash(parse(render_markdown(payload)).text)
    # Markdown may take a tag apart only where it is Markdown syntax too (links, emphasis, escapes, entities).
    # The info string of a code fence is its language (a class on the code), not text.
    shown = payload.split("\n", 1)[1] if payload.startswith("```") else payload
    tags = re.findall(r"<(/?[a-zA-Z][a-zA-Z0-9-]*)", shown.replace("\\<", "<"))
    missing = [tag for tag in tags if squash("<" + tag) not in text]
    assert not missing or "](" in payload or "&" in payload, (missing, text)


@pytest.mark.parametrize("size", [1, 3, 7, 64])
def test_streamed_markdown_of_every_payload_is_inert(size: int) -> None:
    for payload in PAYLOADS:
        doc = MarkdownStream()
        for end in range(size, len(payload) + size, size):
            doc.update(payload[:end])
            assert markdown_problems(doc.html) == [], (payload, doc.html)
        doc.update(payload, final=True)
        assert markdown_problems(doc.html) == [], (payload, doc.html)


@pytest.mark.parametrize("size", [5, 7, 500])
def test_the_whole_corpus_streamed_as_one_message_is_inert(size: int) -> None:
    whole = "\n\n".join(PAYLOADS)
    doc = MarkdownStream()
    for end in range(size, len(whole) + size, size):
        doc.update(whole[:end])
    doc.update(whole, final=True)
    for block in doc.blocks:
        assert markdown_problems(block) == [], block
    assert markdown_problems(render_markdown(whole)) == []


def _view_problems(view: MessageView, entry: MessageEntry) -> list[str]:
    """A message's rendered blocks and its live rest; the raw text may only sit, escaped, before the tail's cursor."""
    tail = escape(view.raw) + TAIL if view.progress.streaming else escape(view.raw)
    opening, closing = f'<div class="md md-live" id="{live_id(entry)}">', "</div>"
    live = Renderer().page("_message_live.html", entry=entry, view=view, oob=None)
    if not (live.startswith(opening) and live.endswith(closing)) or (tail and live.count(tail) != 1):
        return [f"the raw text is not escaped before the cursor: {live!r}"]
    return markdown_problems(str(view.html)) + markdown_problems(live[len(opening) : -len(closing)].replace(tail, ""))


@pytest.mark.slow  # a sweep: every payload streamed in pieces
def test_message_views_of_every_payload_are_inert_while_streaming_and_after() -> None:
    docs = MessageDocs()
    for i, payload in enumerate(PAYLOADS):
        entry = MessageEntry(seq=i + 1, turn=1, parts=[""])
        now = 0.0
        for end in range(1, len(payload) + 1, 3):
            entry.parts[:] = [payload[:end]]
            now += MessageDocs.RENDER_INTERVAL if end % 2 else 0.0  # catch-ups, and raw tails between them
            assert _view_problems(docs.view(entry, now), entry) == [], payload
        entry.parts[:] = [payload]
        entry.streaming = False
        view = docs.view(entry, now + 1)
        assert _view_problems(view, entry) == [] and view.raw == "", payload


@pytest.mark.parametrize("payload", [p for p in PAYLOADS if "//" in p])
def test_markdown_images_never_load_from_another_origin(payload: str) -> None:
    """An agent's Markdown image must not make the browser contact a host of the agent's choosing.

    Today only the Content-Security-Policy (``img-src 'self' data:``) stops it: the sanitiser keeps
    ``<img src="https://...">`` and protocol-relative ``//host/...`` sources.
    """
    assert external_loads(render_markdown(payload)) == []


# -- the session page, rendered from a session fed by the hostile agent ----------------------------------


def _load_agent() -> ModuleType:
    spec = importlib.util.spec_from_file_location("xss_agent_for_tests", AGENT_PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def agent_traffic(cwd: Path) -> tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
    """Run the hostile agent's turn in-process: its initialize and session/new results, its session/update
    params in order, and its permission requests' params (answered with its first option)."""
    agent = _load_agent()
    sent: list[dict[str, Any]] = []
    permissions: list[dict[str, Any]] = []

    def capture(message: dict[str, Any]) -> None:
        sent.append(message)
        method = message.get("method")
        if method is not None and "id" in message:  # a request to the client: answer at once
            if method == "session/request_permission":
                permissions.append(message["params"])
                result: Any = {"outcome": {"outcome": "selected", "optionId": agent.FIRST_OPTION_ID}}
            else:
                result = {}
            rpc.take_response({"id": message["id"], "result": result})

    # The agent writes to stdout (itself, and through raw_jsonrpc's ask); here its lines are kept instead.
    rpc = sys.modules["raw_jsonrpc"]
    written = rpc.send
    agent.send = rpc.send = capture  # type: ignore[attr-defined]
    try:
        agent.handle({"id": 1, "method": "initialize", "params": {"protocolVersion": 1, "clientCapabilities": {}}})
        agent.handle({"id": 2, "method": "session/new", "params": {"cwd": str(cwd), "mcpServers": []}})
        agent.run_prompt(3, {"sessionId": "xss-1", "prompt": [{"type": "text", "text": "go"}]})
    finally:
        rpc.send = written
    initialize = next(m["result"] for m in sent if m.get("id") == 1)
    new_session = next(m["result"] for m in sent if m.get("id") == 2)
    updates = [m["params"] for m in sent if m.get("method") == "session/update"]
    return initialize, new_session, updates, permissions


@pytest.fixture
def hostile_session(tmp_path: Path) -> tuple[Session, list[dict[str, Any]]]:
    initialize, new_session, updates, permissions = agent_traffic(tmp_path)
    session = Session(AgentSpec(AgentEntry("agent", ["true"]), tmp_path), AcpAgent)
    session.lifecycle.agent_info = initialize["agentInfo"]
    session.lifecycle.agent_state = "ready"
    try:  # modes and config options (being built: fed through the adapter when it exists)
        from webclient.acp.controls import apply_session_result

        apply_session_result(session.controls, new_session)
    except ImportError:
        pass
    for params in updates:
        acp(session).on_session_update(params)
    return session, permissions


def render_page(session: Session) -> str:
    docs = MessageDocs()
    context: dict[str, Any] = {"urls": Urls(), "static": Urls().static, "diff_mode": "unified", "csrf": "t"}
    return Renderer().page(
        "session.html",
        session=session,
        message=None,
        message_view=lambda entry: docs.view(entry, 0.0) if isinstance(entry, MessageEntry) else None,
        nonce="nonce",
        oob=None,
        window=list(session.thread),  # the whole thread: every payload on one page
        earlier=None,
        ws_url="ws://127.0.0.1" + URLS.for_("socket", session_id="x"),
        **context,
    )


def texts_under(parsed: Parsed, predicate: Callable[[tuple[str, ...]], bool]) -> str:
    return squash("".join(data for path, data in parsed.texts if predicate(path)))


@pytest.mark.slow  # a sweep: every payload in every field of a real session
@pytest.mark.asyncio
async def test_the_session_page_holds_every_payload_as_text_only(
    hostile_session: tuple[Session, list[dict[str, Any]]],
) -> None:
    session, permissions = hostile_session
    assert len(permissions) == 1
    acp(session).on_request_permission(permissions[0])
    for state in ("pending", "answered"):
        page = render_page(session)
        assert page_problems(page) == [], state
        parsed = parse(page)
        counts = {region: sum(e.attrs.get("id") == region for e in parsed.elements) for region in REGIONS}
        assert counts == dict.fromkeys(REGIONS, 1), state
        text = squash(parsed.text)
        # Tool titles and plan entries are plain text: every payload shows exactly (NUL aside).
        missing = [p for p in PAYLOADS if squash(p) not in text]
        assert missing == [], state
        for payload in SINGLE_LINE:  # diffs hold each one-line payload as a line
            assert squash(payload) in text
        pending = [e for e in parsed.elements if "data-option-id" in e.attrs]
        if state == "pending":
            assert len(pending) == 40
            assert any(e.attrs["data-option-id"] == permissions[0]["options"][0]["optionId"] for e in pending)
            request_id = session.thread.pending_permissions[0].request_id
            session.answers.permission(request_id, permissions[0]["options"][0]["optionId"])
        else:
            assert pending == []
            assert squash(permissions[0]["options"][0]["name"]) in text


@pytest.mark.asyncio
async def test_every_live_fragment_of_the_hostile_session_is_inert(
    hostile_session: tuple[Session, list[dict[str, Any]]],
) -> None:
    """What the web socket pushes: each entry alone as an out-of-band swap, and the status region."""
    session, permissions = hostile_session
    acp(session).on_request_permission(permissions[0])
    renderer = Renderer()
    docs = MessageDocs()
    context: dict[str, Any] = {"urls": Urls(), "static": Urls().static, "diff_mode": "split", "csrf": "t"}
    for entry in session.thread:
        message = docs.view(entry, 0.0) if isinstance(entry, MessageEntry) else None
        html = renderer.block(
            "session.html", "entry", entry=entry, message=message, session=session, oob="true", **context
        )
        assert page_problems(html) == [], html
        ids = [e.attrs["id"] for e in parse(html).elements if "id" in e.attrs]
        assert not set(ids) & set(REGIONS), html
    status = renderer.block("session.html", "status", session=session, oob="true", **context)
    assert page_problems(status) == []


def test_the_index_page_lists_a_hostile_session_as_text(
    hostile_session: tuple[Session, list[dict[str, Any]]],
) -> None:
    session, _ = hostile_session
    title = str(session.title)
    # As a search's result too: the lines that matched, their words marked, come from the agent.
    hit = marked(title, word_pattern(query_words(title)[:3] or ["x"]))
    row = replace(live_row(session, LOCAL), lines=[MarkedHit(hit, 7)])
    page = Renderer().page(
        "index.html",
        history=History([row], 1, 1, 1, title, False, stored=True),
        when=human_time,
        agents=[],
        refused=None,
        workspace="",
        urls=Urls(),
        static=Urls().static,
        csrf="t",
        person=None,
        signin=None,
        signin_store=False,
        mcp_offered={},
    )
    assert page_problems(page) == []
    assert squash(title) in squash(parse(page).text)


# -- hostile strings that break rendering instead of running (found with this corpus) ----------------------


def test_a_lone_surrogate_renders_as_markdown_that_can_be_sent() -> None:
    """``"\\ud800"`` is valid JSON; the page must still render and the result must encode as UTF-8."""
    markup = render_markdown("broken \ud800 <img src=x onerror=alert(1)>")
    markup.encode("utf-8")
    assert markdown_problems(markup) == []


@pytest.mark.asyncio
async def test_a_lone_surrogate_in_any_text_leaves_the_page_sendable(tmp_path: Path) -> None:
    session = Session(AgentSpec(AgentEntry("agent", ["true"]), tmp_path), AcpAgent)
    acp(session).on_session_update(
        {"update": {"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "user \udcff"}}}
    )
    acp(session).on_session_update(
        {"update": {"sessionUpdate": "tool_call", "toolCallId": "t", "title": "title \udcff"}}
    )
    render_page(session).encode("utf-8")


@pytest.mark.parametrize(
    "update",
    [
        {"locations": [{"path": "/tmp/xss/\x00<img src=x onerror=alert(1)>", "line": 1}]},
        {
            "content": [
                {"type": "content", "content": {"type": "resource_link", "name": "n", "uri": "file:///tmp/%00x"}}
            ]
        },
        {"content": [{"type": "diff", "path": "/tmp/a\x00b", "oldText": None, "newText": "x\n"}]},
    ],
    ids=["location", "file-uri", "diff-path"],
)
@pytest.mark.asyncio
async def test_a_nul_in_a_path_leaves_the_page_renderable(tmp_path: Path, update: dict[str, Any]) -> None:
    session = Session(AgentSpec(AgentEntry("agent", ["true"]), tmp_path), AcpAgent)
    acp(session).on_session_update(
        {"update": {"sessionUpdate": "tool_call", "toolCallId": "t", "title": "nul", **update}}
    )
    assert page_problems(render_page(session)) == []
