"""A tool-call update sends what changed in the card (its status, title, a new or changed output item, new
locations, its raw JSON's summary), not the card; the card the page assembles from those fragments is the card
rendered whole; raw JSON comes only from its route, to those who may see the session.

In process: the real app, a real agent subprocess (``tests/agents/card_agent.py``, one step of updates per prompt)
and the page's socket, read frame by frame. The page is modelled by applying each frame's out-of-band fragments as
htmx does (by id: ``outerHTML``, ``innerHTML``, ``beforeend:#id``, ``afterend:#id``), and a card's head that came
alone gives the card its status, as ``static/js/card-status.js`` does.
"""

from __future__ import annotations

import html
import json
import re
import sys
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.support.live import AppFactory, InProcess, LiveSocket, TestClient
from tests.support.people import SECRET_FILE, as_person
from tests.support.servers import AGENTS, migrated_store
from tests.support.urls import URLS
from webclient.config import Settings
from webclient.proxy_proof import ProxyProof
from webclient.web.app import create_app

CARD_AGENT = f"{sys.executable} {AGENTS / 'card_agent.py'}"
VOID = frozenset("area base br col embed hr img input link meta source track wbr".split())
IDLE = re.compile(r'<header id="session-status"[^>]*data-turn-state="idle"')


def text(value: str) -> dict[str, Any]:
    return {"type": "content", "content": {"type": "text", "text": value}}


def done(name: str) -> dict[str, Any]:
    """The last update of every step: a message that says which step ended (frames are read up to it)."""
    return {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": f"step {name} sent"}}


def tool_update(**fields: Any) -> dict[str, Any]:
    return {"sessionUpdate": "tool_call_update", "toolCallId": "c1", **fields}


STEPS: dict[str, list[dict[str, Any]]] = {
    "create": [
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "c1",
            "title": "Run the tests",
            "kind": "execute",
            "status": "pending",
            "rawInput": {"command": "pytest -k SECRET-INPUT <b>bold</b>"},
            "locations": [{"path": "/tmp/a.py", "line": 1}],
            "content": [text("line one")],
        }
    ],
    "status": [tool_update(status="in_progress")],
    "grow": [tool_update(content=[text("line one"), text("line two")])],
    "rewrite": [tool_update(content=[text("line one"), text("line two, rewritten")])],
    "title": [tool_update(title="Run the tests again")],
    "locate": [tool_update(locations=[{"path": "/tmp/a.py", "line": 1}, {"path": "/tmp/b.py", "line": 2}])],
    "finish": [tool_update(status="completed", rawOutput={"exit": 0, "log": "SECRET-OUTPUT"})],
    "reshape": [tool_update(content=[{"type": "diff", "path": "/tmp/a.py", "oldText": "a\n", "newText": "b\n"}])],
    "rediff": [tool_update(content=[{"type": "diff", "path": "/tmp/a.py", "oldText": "a\n", "newText": "c\n"}])],
}


# -- the page, as htmx keeps it ------------------------------------------------------------------


class Node:
    """An element: its tag, attributes and children (elements and text)."""

    def __init__(self, tag: str, attrs: dict[str, str]) -> None:
        self.tag, self.attrs = tag, attrs
        self.children: list[Node | str] = []
        self.parent: Node | None = None

    def adopt(self, children: list[Node | str]) -> list[Node | str]:
        for child in children:
            if isinstance(child, Node):
                child.parent = self
        return children

    def find(self, element_id: str) -> Node | None:
        if self.attrs.get("id") == element_id:
            return self
        for child in self.children:
            if isinstance(child, Node) and (found := child.find(element_id)) is not None:
                return found
        return None

    def shape(self) -> tuple[Any, ...]:
        """What a person and a script see of it: tag, attributes (classes as a set), children, text squashed."""
        attrs = {name: value for name, value in self.attrs.items() if name != "hx-swap-oob"}
        if "class" in attrs:
            attrs["class"] = " ".join(sorted(attrs["class"].split()))
        children: list[Any] = []
        for child in self.children:
            if isinstance(child, Node):
                children.append(child.shape())
            elif squashed := " ".join(child.split()):
                children.append(squashed)
        return (self.tag, tuple(sorted(attrs.items())), tuple(children))


class Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {name: value or "" for name, value in attrs})
        self.stack[-1].adopt([node])
        self.stack[-1].children.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_endtag(self, tag: str) -> None:
        if any(node.tag == tag for node in self.stack[1:]):
            while self.stack.pop().tag != tag:
                pass

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def fragment(markup: str) -> Node:
    builder = Builder()
    builder.feed(markup)
    builder.close()
    return builder.root


def apply(page: Node, frame: str) -> None:
    """A frame's out-of-band fragments, swapped into ``page`` as htmx's web socket extension does."""
    for node in [child for child in fragment(frame).children if isinstance(child, Node)]:
        how = node.attrs.pop("hx-swap-oob", "true")
        how, _, selector = how.partition(":")
        target = page.find(selector.removeprefix("#") if selector else node.attrs.get("id", ""))
        if target is None:
            continue  # a part of the page this model leaves out (the header, the composer, ...)
        if how in ("true", "outerHTML"):
            assert target.parent is not None
            siblings = target.parent.children
            siblings[siblings.index(target)] = node
            target.parent.adopt([node])
            if node.tag == "header" and "data-status" in node.attrs and node.parent is not None:  # card-status.js
                card = node.parent
                card.attrs["data-status"] = node.attrs["data-status"]
                kept = [name for name in card.attrs["class"].split() if not name.startswith("status-")]
                card.attrs["class"] = " ".join([*kept, node.attrs["data-status-class"]])
        elif how == "innerHTML":
            target.children = target.adopt(node.children)
        elif how == "beforeend":
            target.children += target.adopt(node.children)
        elif how == "afterend":
            assert target.parent is not None
            at = target.parent.children.index(target) + 1
            target.parent.children[at:at] = target.parent.adopt(node.children)
        else:
            raise AssertionError(f"a swap this model does not know: {how}")


# -- the page's socket ---------------------------------------------------------------------------


class RawSocket(LiveSocket):
    """The page's socket, its frames as sent (markup, not unescaped)."""

    def frame(self, seconds: float = 30) -> str:
        if self.unread:
            return self.unread.pop(0)

        async def within() -> Any:
            with anyio.fail_after(seconds):
                return await self.socket._send_rx.receive()

        message = self.socket.portal.call(within)
        self.socket._raise_on_close(message)
        return str(message["text"])

    def step(self, name: str) -> list[str]:
        """Prompt step ``name`` and read the frames of its turn, to its end."""
        self.prompt(name)
        frames, sent = [], False
        while not (sent and IDLE.search(frames[-1])):
            frames.append(self.frame())
            sent = sent or f"step {name} sent" in frames[-1]
        return frames


@pytest.fixture
def card_app(start_app: AppFactory, tmp_path: Path) -> InProcess:
    steps = tmp_path / "steps.json"
    steps.write_text(json.dumps({name: [*updates, done(name)] for name, updates in STEPS.items()}))
    return start_app(agent=CARD_AGENT, CARD_STEPS=str(steps))


@pytest.fixture
def page(card_app: InProcess) -> Iterator[tuple[InProcess, str, RawSocket]]:
    session = card_app.new_session()
    with card_app.client.websocket_connect(URLS.for_("socket", session_id=session.rsplit("/", 1)[1])) as socket:
        live = RawSocket(socket)
        live.until('data-agent-state="ready"')
        yield card_app, session, live


def about(frames: list[str], card: str) -> str:
    """The fragments of ``frames`` that target the card whose id is ``card`` or a part of it, as markup."""
    nodes = []
    for frame in frames:
        for node in fragment(frame).children:
            if isinstance(node, Node):
                target = node.attrs.get("hx-swap-oob", "true").partition(":")[2].removeprefix("#")
                target = target or node.attrs.get("id", "")
                if target == card or target.startswith(card + "-"):
                    nodes.append(node)
    return "".join(markup(node) for node in nodes)


def markup(node: Node | str) -> str:
    if isinstance(node, str):
        return node
    attrs = "".join(f' {name}="{value}"' for name, value in node.attrs.items())
    return f"<{node.tag}{attrs}>{''.join(markup(child) for child in node.children)}</{node.tag}>"


def whole_card(app: InProcess, session: str, card: str) -> Node:
    """The card as the page renders it whole (a new visit)."""
    found = fragment(app.client.get(session).text).find(card)
    assert found is not None
    return found


def test_a_tool_call_update_sends_what_changed_and_the_page_assembles_the_whole_card(
    page: tuple[InProcess, str, RawSocket],
) -> None:
    app, session, live = page
    model = Node("#root", {})
    model.children = model.adopt([thread := Node("section", {"id": "thread"})])
    sent: list[str] = []

    def step(name: str) -> str:
        frames = live.step(name)
        sent.extend(frames)
        for frame in frames:
            apply(model, frame)
        return "".join(frames)

    created = step("create")
    card = re.search(r'<article id="(entry-\d+)"[^>]*data-tool-call-id="c1"', created)
    assert card is not None, created
    card_id = card.group(1)
    assert thread.find(card_id) is not None

    status = about([step("status")], card_id)
    assert f'id="{card_id}-head"' in status and 'data-status="in_progress"' in status
    assert f'<article id="{card_id}"' not in status and "line one" not in status and "/tmp/a.py" not in status

    grown = about([step("grow")], card_id)
    assert f'hx-swap-oob="beforeend:#{card_id}-content"' in grown and "line two" in grown
    assert "line one" not in grown and f'<article id="{card_id}"' not in grown and "Run the tests" not in grown

    rewritten = about([step("rewrite")], card_id)
    assert f'id="{card_id}-item-2" hx-swap-oob="true"' in rewritten and "line two, rewritten" in rewritten
    assert "line one" not in rewritten and f'<article id="{card_id}"' not in rewritten

    titled = about([step("title")], card_id)
    assert f'id="{card_id}-title" hx-swap-oob="true"' in titled and "Run the tests again" in titled
    assert "data-status" not in titled and "line" not in titled

    located = about([step("locate")], card_id)
    assert f'hx-swap-oob="beforeend:#{card_id}-locations"' in located and 'data-path="/tmp/b.py"' in located
    assert 'data-path="/tmp/a.py"' not in located and f'<article id="{card_id}"' not in located

    assert model.find(card_id).shape() == whole_card(app, session, card_id).shape()  # type: ignore[union-attr]

    reshaped = about([step("reshape")], card_id)  # fewer items, of another kind: the card comes whole
    assert f'<article id="{card_id}"' in reshaped and "line two" not in reshaped
    assert model.find(card_id).shape() == whole_card(app, session, card_id).shape()  # type: ignore[union-attr]

    rediffed = about([step("rediff")], card_id)  # a diff that changed: that item alone
    assert f'id="{card_id}-item-1" hx-swap-oob="true"' in rediffed and f'id="{card_id}-diff-1"' in rediffed
    assert f'<article id="{card_id}"' not in rediffed and "Run the tests" not in rediffed
    assert model.find(card_id).shape() == whole_card(app, session, card_id).shape()  # type: ignore[union-attr]

    finished = about([step("finish")], card_id)
    assert 'data-status="completed"' in finished and 'data-role="raw-output"' in finished
    assert f'<article id="{card_id}"' not in finished and "a.py" not in finished
    assert model.find(card_id).shape() == whole_card(app, session, card_id).shape()  # type: ignore[union-attr]

    page_html = app.client.get(session).text
    for secret in ("SECRET-INPUT", "SECRET-OUTPUT"):
        assert not [frame for frame in sent if secret in frame] and secret not in page_html

    raw = URLS.for_("tool_call_raw", session_id=session.rsplit("/", 1)[1], seq=int(card_id.rsplit("-", 1)[1]))
    given = app.client.get(raw, params={"part": "input"})
    assert given.status_code == 200 and "SECRET-INPUT &lt;b&gt;bold&lt;/b&gt;" in given.text and "<b>" not in given.text
    assert "SECRET-OUTPUT" in app.client.get(raw, params={"part": "output"}).text
    assert '"rawOutput"' in html.unescape(app.client.get(raw, params={"part": "payload"}).text)
    assert app.client.get(raw, params={"part": "secrets"}).status_code == 400
    message = raw.replace(f"/{card_id.rsplit('-', 1)[1]}/", "/1/")  # the prompt: no tool call
    assert app.client.get(message, params={"part": "input"}).status_code == 404


def test_the_raw_json_of_a_card_is_refused_to_someone_the_session_is_not_shared_with(tmp_path: Path) -> None:
    data = migrated_store(tmp_path / "data")
    steps = tmp_path / "steps.json"
    steps.write_text(json.dumps({"create": [*STEPS["create"], done("create")]}))
    settings = Settings(
        agent=CARD_AGENT,
        workspace=tmp_path,
        data_dir=data,
        demo_remote=False,
        auth="trusted-header",
        trusted_proxies=("127.0.0.1",),  # type: ignore[arg-type]
        proxy_proof=ProxyProof(secret_file=SECRET_FILE),
    )
    origin = {"Origin": "http://localhost", "Sec-Fetch-Site": "same-origin"}
    alice, bob = {**as_person("alice"), **origin}, {**as_person("bob"), **origin}
    with pytest.MonkeyPatch.context() as env:
        env.setenv("CARD_STEPS", str(steps))
        with TestClient(create_app(settings), base_url="http://localhost", client=("127.0.0.1", 50000)) as client:
            made = client.post(URLS.for_("new_session"), headers=alice, follow_redirects=False)
            assert made.status_code == 303, made.text
            session = made.headers["location"]
            session_id = session.rsplit("/", 1)[1]
            with client.websocket_connect(URLS.for_("socket", session_id=session_id), headers=alice) as socket:
                live = RawSocket(socket)
                live.step("create")
            page = client.get(session, headers=alice).text
            card = re.search(r'<article id="entry-(\d+)"[^>]*data-tool-call-id="c1"', page)
            assert card is not None
            raw = URLS.for_("tool_call_raw", session_id=session_id, seq=int(card.group(1)))
            assert "SECRET-INPUT" in client.get(raw, params={"part": "input"}, headers=alice).text
            refused = client.get(raw, params={"part": "input"}, headers=bob)
            assert refused.status_code in (403, 404) and "SECRET-INPUT" not in refused.text


def test_a_terminal_in_a_card_still_gets_its_lines_appended_and_the_card_its_status_alone(
    start_app: AppFactory,
) -> None:
    app = start_app()  # the scripted agent: "run 3" prints three lines 0.3 s apart in a card's terminal
    session = app.new_session()
    with app.client.websocket_connect(URLS.for_("socket", session_id=session.rsplit("/", 1)[1])) as socket:
        live = RawSocket(socket)
        live.until('data-agent-state="ready"')
        live.prompt("run 3")
        frames = [live.frame()]
        while '"lines": 3' not in frames[-1] or not IDLE.search(frames[-1]):
            frames.append(live.frame())
    every = "".join(frames)
    card = re.search(r'<article id="(entry-\d+)"[^>]*data-tool-call-id="run-1"', every)
    assert card is not None
    card_id = card.group(1)
    after = every[card.end() :]
    # the terminal's screen as it runs, swapped into the card the page holds
    assert f'id="{card_id}-term-1-screen" hx-swap-oob="innerHTML">' in after and "line 1" in after
    assert f'<article id="{card_id}"' not in after  # the card came once; then its terminal's output, then its head
    completed = about(frames, card_id)
    assert f'id="{card_id}-head"' in completed and 'data-status="completed"' in completed
