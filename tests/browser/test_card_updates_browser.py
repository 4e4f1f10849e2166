"""A tool-call card updated in parts (its head, title, an output item, a location: `web/live/card_updates.py`; the
records of a title, a status and an output item's edits) reads, in a real Chromium with htmx and
``static/js/card-status.js``, as the same card rendered whole on a reload; its raw input comes when opened, as
text."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Locator, Page, expect

from tests.support.browser import Browsers, open_session, send_prompt, until_connected
from tests.support.servers import AGENTS, ServerFactory
from tests.support.updates import text, tool_update

CARD_AGENT = f"{sys.executable} {AGENTS / 'card_agent.py'}"


def window(first: int) -> dict[str, Any]:
    """The last 8 lines of a running command's output, from line ``first``: each step slides it by three."""
    lines = "\n".join(f"[{n:04d}] line {n} \U0001f680 & <i>{n}</i>" for n in range(first, first + 8))
    return text(f"```\n{lines}\n```")


STEPS: dict[str, list[dict[str, Any]]] = {
    "create": [
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "c1",
            "title": "Run the tests",
            "kind": "execute",
            "status": "pending",
            "rawInput": {"command": "pytest <b>bold</b>"},
            "locations": [{"path": "/tmp/a.py", "line": 1}],
            "content": [text("line one")],
        }
    ],
    "status": [tool_update(status="in_progress")],
    "grow": [tool_update(content=[text("line one"), text("line **two**")])],
    "rewrite": [tool_update(content=[text("line one"), text("line two, rewritten")])],
    "title": [tool_update(title="Run the tests again")],
    "locate": [tool_update(locations=[{"path": "/tmp/a.py", "line": 1}, {"path": "/tmp/b.py", "line": 2}])],
    "finish": [tool_update(status="failed", rawOutput={"exit": 1})],
    "create3": [
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "c3",
            "title": "Edit",
            "kind": "edit",
            "content": [{"type": "diff", "path": "/tmp/a.py", "oldText": "a\n", "newText": "b\n"}],
        }
    ],
    "rediff": [tool_update("c3", content=[{"type": "diff", "path": "/tmp/a.py", "oldText": "a\n", "newText": "c\n"}])],
    "create2": [{"sessionUpdate": "tool_call", "toolCallId": "c2", "title": "Build", "rawInput": {"command": "make"}}],
    "appear": [tool_update("c2", status="in_progress", content=[window(0)])],
    "slide": [tool_update("c2", content=[window(3)], title="Build \U0001f680 one")],
    "slide again": [tool_update("c2", content=[window(6)], title="Build \U0001f681 <b>two</b>")],
    "locate2": [tool_update("c2", locations=[{"path": "/tmp/c.py", "line": 3}])],
}


def seen(card: Locator) -> dict[str, Any]:
    """What a person and a script see of the card: its text (its layout aside: the styles of a page just loaded may
    not apply yet), status, classes (htmx's own aside) and inner ids."""
    return card.evaluate(
        r"""card => ({
            text: card.textContent.replace(/\s+/g, " ").trim(),
            status: card.dataset.status,
            classes: Array.from(card.classList).filter(name => !name.startsWith("htmx-")).sort(),
            ids: Array.from(card.querySelectorAll("[id]"), element => element.id),
        })"""
    )


@pytest.mark.browser
def test_a_card_updated_in_parts_reads_as_the_card_rendered_whole(
    start_server: ServerFactory, browsers: Browsers, tmp_path: Path
) -> None:
    steps = tmp_path / "steps.json"
    said = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "sent"}}
    steps.write_text(json.dumps({name: [*updates, said] for name, updates in STEPS.items()}))
    server = start_server(agent=CARD_AGENT, CARD_STEPS=str(steps))
    page: Page = browsers.page("alice")
    open_session(page, server)
    card = page.locator('[data-role="tool-call"][data-tool-call-id="c1"]')
    session = page.locator("#session")
    for number, name in enumerate(STEPS, 1):
        send_prompt(page, name)
        expect(page.locator('[data-role="agent-message"]')).to_have_count(number)
        expect(session).to_have_attribute("data-turn-state", "idle")
        if name == "status":
            expect(card).to_have_attribute("data-status", "in_progress")
            expect(card.locator('[data-role="status"]')).to_have_text("Running")
    expect(card).to_have_attribute("data-status", "failed")
    expect(card).to_have_class("entry tool-call kind-execute status-failed")
    built = page.locator('[data-role="tool-call"][data-tool-call-id="c2"]')  # its output edited as lines that slid
    expect(built.locator(".tool-title")).to_have_text("Build \U0001f681 <b>two</b>")
    expect(built.locator(".tool-item")).to_contain_text("[0013] line 13 \U0001f680 & <i>13</i>")
    expect(built.locator(".tool-item")).not_to_contain_text("[0005]")
    expect(built.locator(".tool-item i, .tool-title b")).to_have_count(0)
    expect(built.locator(".tool-head + .locations")).to_contain_text("/tmp/c.py:3")
    output = seen(built)
    expect(card.locator(".tool-content strong")).to_have_count(0)  # item 2 was replaced, not left as it first was
    live = seen(card)
    assert (
        "line two, rewritten" in live["text"]
        and "Run the tests again" in live["text"]
        and "/tmp/b.py:2" in live["text"]
    )

    card.locator('[data-role="raw-output"] summary').click()  # its block came alone, with the status: it still asks
    expect(card.locator('[data-role="raw-output"] pre')).to_contain_text('"exit": 1')

    edited = page.locator('[data-tool-call-id="c3"] details.diff')  # its item came as a record: its Split still asks
    expect(edited).to_have_attribute("data-mode", "unified")
    edited.locator(".d-mode").click()
    expect(edited).to_have_attribute("data-mode", "split")

    page.reload()
    until_connected(page)  # and the socket's first frame drawn: the thread as a new page has it
    expect(card).to_have_attribute("data-status", "failed")
    assert seen(card) == live  # before it was opened: the fetched output is in the live page's card now
    assert seen(built) == output

    card.locator('[data-role="raw-input"] summary').click()
    shown = card.locator('[data-role="raw-input"] pre')
    expect(shown).to_contain_text('"command": "pytest <b>bold</b>"')
    expect(shown.locator("b")).to_have_count(0)
