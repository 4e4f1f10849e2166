"""A tool-call update sends what changed in the card (its status, title, a new or changed output item, new
locations, its raw JSON's summary), not the card; the card the page assembles from those fragments is the card
rendered whole; raw JSON comes only from its route, to those who may see the session.

In process: the real app, a real agent subprocess (``tests/agents/card_agent.py``, one step of updates per prompt)
and the page's socket, read frame by frame. The page is modelled by applying each frame's out-of-band fragments as
htmx does (by id: ``outerHTML``, ``innerHTML``, ``beforeend:#id``, ``afterend:#id``, ``beforebegin:#id``), a card's
head that came alone gives the card its status, and the card records (a title, a status, an edit of an item's inner
HTML) are applied, as ``static/js/card-status.js`` does.
"""

from __future__ import annotations

import html
import json
import random
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
from tests.support.updates import text, tool_update
from tests.support.urls import URLS
from webclient.config import Settings
from webclient.proxy_proof import ProxyProof
from webclient.web.app import create_app
from webclient.web.live.card_updates import splices

CARD_AGENT = f"{sys.executable} {AGENTS / 'card_agent.py'}"
VOID = frozenset("area base br col embed hr img input link meta source track wbr".split())
IDLE = re.compile(r'<header id="session-status"[^>]*data-turn-state="idle"')


def done(name: str) -> dict[str, Any]:
    """The last update of every step: a message that says which step ended (frames are read up to it)."""
    return {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": f"step {name} sent"}}


def window(first: int) -> dict[str, Any]:
    """The last 8 lines of a running command's output, from line ``first`` (as the flood agent shows them)."""
    lines = "\n".join(f"[{n:04d}] output line {n} of the run & <more>" for n in range(first, first + 8))
    return text(f"```\n{lines}\n```")


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
    "create2": [
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "c2",
            "title": "Build",
            "kind": "execute",
            "status": "pending",
            "rawInput": {"command": "make"},
        }
    ],
    "appear": [tool_update("c2", status="in_progress", content=[window(0)])],
    "slide": [tool_update("c2", content=[window(3)])],
    "slide again": [tool_update("c2", content=[window(6)], title="Build <b>all</b> & more")],
    "slide after resync": [tool_update("c2", content=[window(9)])],
    "locate2": [tool_update("c2", locations=[{"path": "/tmp/c.py", "line": 3}], status="paused")],
    "rocket": [tool_update("c2", title="Build \U0001f680 all")],
    "helicopter": [tool_update("c2", title="Build \U0001f681 all")],
    "hidden title": [tool_update("c2", title="Build \u202eevil", status="weird")],
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


RECORD, FIELD = "\x1e", "\x1f"
ITEM_HTML = re.compile(r'<div class="tool-item" id="(entry-[0-9]+-item-[0-9]+)">(.*?)<!----></div>', re.S)
HELD: dict[int, dict[str, str]] = {}
"""The inner HTML of the items each page model holds as strings (by the model's id), as card-status.js keeps it."""


def apply_records(page: Node, message: str) -> None:
    """The card records of a socket message, applied as ``static/js/card-status.js`` does (message edits aside)."""
    held = HELD.setdefault(id(page), {})
    for record in message.split(RECORD)[1:]:
        fields = record.split(FIELD)
        found = re.fullmatch(r"([tsi])([0-9]+)", fields[0])
        if found is None:
            continue
        card_id = f"entry-{found.group(2)}"
        if found.group(1) == "t" and (title := page.find(f"{card_id}-title")) is not None:
            kept = "".join(child for child in title.children if isinstance(child, str)).encode("utf-16-le")
            cut = 2 * int(fields[1] or 0) if len(fields) > 2 else len(kept)  # counted in UTF-16 code units
            title.children = [kept[: len(kept) - cut].decode("utf-16-le") + fields[-1]]
        elif found.group(1) == "s" and (card := page.find(card_id)) is not None:
            status, label = fields[1], fields[2]
            head = card.find(f"{card_id}-head")
            assert head is not None
            chip = next(node for node in walk(head) if node.attrs.get("data-role") == "status")
            kept = [name for name in card.attrs["class"].split() if not name.startswith("status-")]
            card.attrs.update({"data-status": status, "class": " ".join([*kept, f"status-{status}"])})
            head.attrs.update({"data-status": status, "data-status-class": f"status-{status}"})
            chip.attrs["class"], chip.children = f"status-chip status-{status}", [label]
        elif found.group(1) == "i" and (item := page.find(f"{card_id}-item-{fields[1]}")) is not None:
            edits = fields[2:]
            if edits[0] == "r":
                markup_now = edits[1]
            else:
                markup_now = held[item.attrs["id"]]
                assert edits[0] == f"={len(markup_now.encode('utf-16-le')) // 2}"  # the string the server edits
                edits = edits[1:]
                for at, cut, added in zip(edits[::3], edits[1::3], edits[2::3], strict=True):
                    markup_now = markup_now[: int(at)] + added + markup_now[int(at) + int(cut or 0) :]
            held[item.attrs["id"]] = markup_now
            item.children = item.adopt(fragment(markup_now).children)


def walk(node: Node) -> Iterator[Node]:
    yield node
    for child in node.children:
        if isinstance(child, Node):
            yield from walk(child)


def records(frames: list[str], card: str) -> list[list[str]]:
    """The records of ``frames`` about the card whose id is ``card`` (``entry-N``), as their fields."""
    number = card.removeprefix("entry-")
    found = []
    for frame in frames:
        for record in frame.split(RECORD)[1:] if frame.startswith(RECORD) else []:
            fields = record.split(FIELD)
            if re.fullmatch(rf"[tsi]{number}", fields[0]):
                found.append(fields)
    return found


def apply(page: Node, frame: str) -> None:
    """A frame's out-of-band fragments, swapped into ``page`` as htmx's web socket extension does."""
    if frame.startswith(RECORD):
        apply_records(page, frame)
        return
    for item_id, inner in ITEM_HTML.findall(frame):  # the items as strings, as they came (card-status.js)
        HELD.setdefault(id(page), {})[item_id] = inner
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
        elif how in ("afterend", "beforebegin"):
            assert target.parent is not None
            at = target.parent.children.index(target) + (how == "afterend")
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
        """Prompt step ``name`` and read the frames of its turn, to its end: its last message, and the turn's end
        (which may come first, in a socket message of the same frame: a frame's fragments and records go apart)."""
        self.prompt(name)
        frames: list[str] = []
        sent = ended = False
        while not (sent and ended):
            frames.append(self.frame())
            sent = sent or f"step {name} sent" in frames[-1]
            ended = ended or IDLE.search(frames[-1]) is not None
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
        for node in [] if frame.startswith(RECORD) else fragment(frame).children:
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

    def step(name: str) -> list[str]:
        frames = live.step(name)
        sent.extend(frames)
        for frame in frames:
            apply(model, frame)
        return frames

    def same_as_whole(card_id: str) -> bool:
        return model.find(card_id).shape() == whole_card(app, session, card_id).shape()  # type: ignore[union-attr]

    created = "".join(step("create"))
    card = re.search(r'<article id="(entry-\d+)"[^>]*data-tool-call-id="c1"', created)
    assert card is not None, created
    card_id = card.group(1)
    number = card_id.removeprefix("entry-")
    assert thread.find(card_id) is not None
    new_card = created[card.start() : created.index("</article>", card.start())]
    assert new_card.count("/raw") == 1 and "hx-get" not in new_card.split('class="raw"')[1]  # one URL for its parts

    frames = step("status")  # a known status alone: a record of it
    assert records(frames, card_id) == [[f"s{number}", "in_progress", "Running"]] and not about(frames, card_id)

    grown = about([*step("grow")], card_id)
    assert f'hx-swap-oob="beforeend:#{card_id}-content"' in grown and "line two" in grown
    assert "line one" not in grown and f'<article id="{card_id}"' not in grown and "Run the tests" not in grown

    frames = step("rewrite")  # an item that changed: an edit of its inner HTML as it came in the frame before
    (edit,) = records(frames, card_id)
    assert edit[:2] == [f"i{number}", "2"] and edit[2] != "r" and ", rewritten" in edit[-1]
    assert "line one" not in "".join(edit) and not about(frames, card_id)

    frames = step("title")
    assert records(frames, card_id) == [[f"t{number}", "", " again"]] and not about(frames, card_id)  # what it gained

    located = about(step("locate"), card_id)
    assert f'hx-swap-oob="beforeend:#{card_id}-locations"' in located and 'data-path="/tmp/b.py"' in located
    assert 'data-path="/tmp/a.py"' not in located and f'<article id="{card_id}"' not in located

    assert same_as_whole(card_id)

    reshaped = about(step("reshape"), card_id)  # fewer items, of another kind: the card comes whole
    assert f'<article id="{card_id}"' in reshaped and "line two" not in reshaped
    assert same_as_whole(card_id)

    frames = step("rediff")  # a diff that changed: that item alone, b -> c in the diff as the page holds it
    (edit,) = records(frames, card_id)
    assert edit[:2] == [f"i{number}", "1"] and edit[2][0] == "=" and edit[4:] == ["1", "c"]
    assert not about(frames, card_id)
    assert same_as_whole(card_id)

    frames = step("finish")
    finished = about(frames, card_id)
    assert records(frames, card_id) == [[f"s{number}", "completed", "Done"]] and 'data-role="raw-output"' in finished
    assert f'<article id="{card_id}"' not in finished and "a.py" not in finished
    assert same_as_whole(card_id)

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


def test_output_that_slides_goes_as_its_new_lines_and_content_that_appears_as_the_content_alone(
    page: tuple[InProcess, str, RawSocket],
) -> None:
    app, session, live = page
    model = Node("#root", {})
    model.children = model.adopt([Node("section", {"id": "thread"})])

    def step(name: str) -> list[str]:
        frames = live.step(name)
        for frame in frames:
            apply(model, frame)
        return frames

    def same_as_whole() -> bool:
        return model.find(card_id).shape() == whole_card(app, session, card_id).shape()  # type: ignore[union-attr]

    created = "".join(step("create2"))
    card = re.search(r'<article id="(entry-\d+)"[^>]*data-tool-call-id="c2"', created)
    assert card is not None, created
    card_id, number = card.group(1), card.group(1).removeprefix("entry-")

    frames = step("appear")  # its first content: the content part before the raw JSON, the status a record
    appeared = about(frames, card_id)
    assert f'hx-swap-oob="beforebegin:#{card_id}-raw"' in appeared and f'<article id="{card_id}"' not in appeared
    assert "[0000] output line 0" in appeared and records(frames, card_id) == [[f"s{number}", "in_progress", "Running"]]
    assert same_as_whole()

    frames = step("slide")  # the window as it came with the content, slid: 3 lines cut at the top, 3 added
    (edit,) = records(frames, card_id)
    assert edit[:2] == [f"i{number}", "1"] and len(edit) == 9 and "[0010]" in edit[8] and "[0007]" not in edit[8]
    assert same_as_whole()

    frames = step("slide again")  # lines 6-13 where 3-10 were: three lines cut at the top, three added at the end
    title, edit = records(frames, card_id)
    assert title == [f"t{number}", "", " <b>all</b> & more"]  # text, which the page sets as text
    assert edit[:2] == [f"i{number}", "1"] and len(edit) == 9 and edit[5] == "" and not about(frames, card_id)
    added = html.unescape(edit[8])
    assert "[0011]" in added and "[0013]" in added and "[0010]" not in added and "[0006]" not in "".join(edit)
    assert "&amp; &lt;more&gt;" in edit[8]  # escaped by the template, as in the card rendered whole
    assert same_as_whole()
    assert model.find(f"{card_id}-title").children == ["Build <b>all</b> & more"]  # type: ignore[union-attr]

    live.send("diff_mode", mode="split")  # the page's window drawn again: it holds its items as they came in it
    resync = live.frame()
    while 'id="thread"' not in resync:
        resync = live.frame()
    apply(model, resync)
    assert same_as_whole()
    frames = step("slide after resync")  # spliced into the item as the resync brought it
    (edit,) = records(frames, card_id)
    assert edit[:2] == [f"i{number}", "1"] and len(edit) == 9 and "[0016]" in edit[8]
    assert same_as_whole()

    frames = step("locate2")  # its first locations: that part alone, after its head
    located = about(frames, card_id)
    assert f'hx-swap-oob="afterend:#{card_id}-head"' in located and 'data-path="/tmp/c.py"' in located
    assert f'<article id="{card_id}"' not in located
    assert records(frames, card_id) == [[f"s{number}", "paused", "Paused"]]
    assert same_as_whole()

    frames = step("rocket")
    assert records(frames, card_id) == [[f"t{number}", "17", "\U0001f680 all"]]
    assert records(step("helicopter"), card_id) == [[f"t{number}", "6", "\U0001f681 all"]]  # 🚀 is 2 code units
    assert same_as_whole()

    frames = step("hidden title")  # a title shown with a marker, a status of no known name: the head, as HTML
    assert not records(frames, card_id)
    head = about(frames, card_id)
    assert f'id="{card_id}-head"' in head and 'class="invisible-char"' in head
    assert same_as_whole()


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
    assert [f"s{card_id.removeprefix('entry-')}", "completed", "Done"] in records(frames, card_id)


def spliced(before: str, splices: list[tuple[int, int, str]]) -> str:
    """``before`` with the splices applied in turn, counting UTF-16 code units as the page does."""
    units = before.encode("utf-16-le")
    for at, cut, added in splices:
        units = units[: 2 * at] + added.encode("utf-16-le") + units[2 * (at + cut) :]
    return units.decode("utf-16-le")


@pytest.mark.parametrize("seed", range(40))
def test_the_splices_of_an_items_edit_turn_what_the_page_holds_into_the_new_html(seed: int) -> None:
    rng = random.Random(seed)
    words = ["a", "bb", "&amp;", "\U0001f680", "é", "<i>", "x" * 30]
    lines = [" ".join(rng.choice(words) for _ in range(rng.randint(0, 6))) for _ in range(30)]
    first, width, step = rng.randint(0, 10), rng.randint(1, 10), rng.randint(0, 12)
    before = "<pre><code>" + "\n".join(lines[first : first + width]) + "\n</code></pre>"
    after = "<pre><code>" + "\n".join(lines[first + step : first + step + width]) + "\n</code></pre>"
    if seed % 5 == 0:
        after = after.replace("a", "b", 1)  # not a slide: one splice
    edit = splices(before, after)
    assert spliced(before, edit) == after and 1 <= len(edit) <= 2
    if 0 < step < width and seed % 5:  # a window that slid: its new lines, not the window
        assert sum(len(added) for _, _, added in edit) < len(after) - len("<pre><code></code></pre>")
