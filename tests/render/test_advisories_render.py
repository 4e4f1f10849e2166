"""How the agent's advisories look in the thread: its notices, compactions and a turn's usage, as the page and the
live view render an entry (``session.html`` block ``entry``). Agent text is hostile: it only ever shows as text."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.html import parse, squash
from webclient.acp.advisories import turn_usage
from webclient.acp.updates import apply_update
from webclient.render import formats
from webclient.render.rendering import Renderer
from webclient.render.urls import Urls
from webclient.viewmodel.entries import Entry, TurnUsage
from webclient.viewmodel.thread import Thread

HOSTILE = '<img src=x onerror=alert(1)><script>alert(2)</script>"\u202e'


def render(entry: Entry, oob: str | None = None) -> str:
    context: dict[str, Any] = {"urls": Urls(), "static": Urls().static, "diff_mode": "unified", "csrf": "t"}
    return Renderer().block("session.html", "entry", entry=entry, message=None, session=None, oob=oob, **context)


def fold(*updates: dict[str, Any]) -> Thread:
    thread = Thread()
    for update in updates:
        assert apply_update(thread, update)
    return thread


def only(thread: Thread) -> Entry:
    (entry,) = thread
    return entry


def test_an_agent_notice_says_it_is_the_agents_and_shows_its_description() -> None:
    entry = only(fold({"sessionUpdate": "notice", "severity": "warning", "title": "Quota", "description": "80%\nused"}))
    html = render(entry)
    (article,) = [e for e in parse(html).elements if e.tag == "article"]
    assert article.attrs["class"] == "entry notice notice-warning notice-agent"
    assert article.attrs["data-by"] == "agent"
    assert squash(parse(html).text) == squash("Agent warning Quota 80%\nused")
    assert "<details" not in html  # an advisory is read at once, not unfolded like a crash's stderr


def test_a_notice_of_an_unknown_severity_looks_like_info_and_names_it() -> None:
    html = render(only(fold({"sessionUpdate": "notice", "severity": "_custom", "title": "Hi"})))
    assert "notice-info" in html and "Agent notice (custom)" in html


@pytest.mark.parametrize(
    ("updates", "label", "css"),
    [
        ([{"status": "in_progress"}], "Compacting the conversation…", "compaction-in_progress"),
        (
            [{"status": "completed", "summary": [{"type": "text", "text": "S"}]}],
            "Conversation compacted",
            "compaction-completed",
        ),
        ([{"status": "failed", "error": "Too long"}], "Compacting the conversation failed", "compaction-failed"),
        ([{"status": "cancelled"}], "Compacting the conversation was cancelled", "compaction-cancelled"),
        ([{"status": "_paused"}], "Compacting the conversation: paused", "compaction-generic"),
    ],
)
def test_a_compaction_shows_its_state(updates: list[dict[str, Any]], label: str, css: str) -> None:
    thread = fold(*({"sessionUpdate": "compaction_update", "compactionId": "c", **u} for u in updates))
    html = render(only(thread))
    assert f"entry compaction {css}" in html and label in html
    if "summary" in updates[0]:
        assert "<details><summary>Summary</summary>" in html and '<div class="compaction-summary">S</div>' in html
    else:
        assert "<details" not in html
    if "error" in updates[0]:
        assert '<p class="compaction-error">Too long</p>' in html


def test_a_changed_compaction_is_swapped_in_place_by_its_id() -> None:
    entry = only(fold({"sessionUpdate": "compaction_update", "compactionId": "c", "status": "completed"}))
    html = render(entry, oob="true")
    assert f'id="entry-{entry.seq}"' in html and 'hx-swap-oob="true"' in html


def test_a_turns_usage_is_one_discreet_line() -> None:
    thread = Thread()
    usage = {"totalTokens": 1234, "inputTokens": 900, "outputTokens": 334}
    entry = turn_usage(thread, usage)
    assert entry is not None
    html = render(entry)
    assert 'class="entry turn-usage" data-role="turn-usage"' in html
    assert parse(html).text.strip() == "1,234 tokens (900 in, 334 out)"
    full = usage | {"thoughtTokens": 20, "cachedReadTokens": 5000, "cachedWriteTokens": 0}
    assert formats.turn_usage(TurnUsage(seq=0, turn=0, total=1, input=1, output=0)) == "1 token (1 in, 0 out)"
    entry = turn_usage(thread, full)
    assert entry is not None
    assert (
        parse(render(entry)).text.strip()
        == "1,234 tokens (900 in, 334 out, 20 thought, 5,000 cached read, 0 cached write)"
    )


def test_agent_text_in_advisories_is_only_ever_text() -> None:
    thread = fold(
        {"sessionUpdate": "notice", "severity": HOSTILE, "title": HOSTILE, "description": HOSTILE},
        {"sessionUpdate": "compaction_update", "compactionId": HOSTILE, "status": HOSTILE, "error": HOSTILE},
        {
            "sessionUpdate": "compaction_summary_chunk",
            "compactionId": HOSTILE,
            "content": {"type": "text", "text": HOSTILE},
        },
    )
    for entry in thread:
        html = render(entry)
        parsed = parse(html)
        assert {e.tag for e in parsed.elements} <= {"article", "span", "strong", "p", "details", "summary", "div"}
        assert not any(name.startswith("on") for e in parsed.elements for name in e.attrs)
        assert "<script" not in html and "<img" not in html
        assert 'class="invisible-char"' in html  # the right-to-left override shows as a marker
