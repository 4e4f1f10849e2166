"""AAP v3 as the client reads it, without a server: ``/meta`` parsed leniently but only for version 3, and the
resolving rule of the seed page (which calls are left, and for whom) on what real servers send."""

from __future__ import annotations

import pytest

from webclient.aap.fold import EventFold
from webclient.aap.meta import AapError, parse_meta
from webclient.aap.turn import TurnEvent, TurnRecord, messages_as_events, open_calls_in_history
from webclient.viewmodel.content import ImageBlock
from webclient.viewmodel.thread import Thread


def test_only_version_3_is_spoken() -> None:
    with pytest.raises(AapError, match="speaks AAP version 4"):
        parse_meta({"version": 4, "agents": []})
    with pytest.raises(AapError, match="version None"):
        parse_meta(["not", "meta"])
    meta = parse_meta({"version": 3, "agents": [{"name": "a", "tools": "junk"}, "junk", {"title": "no name"}]})
    assert [agent.name for agent in meta.agents] == ["a"]
    assert meta.agents[0].stream_mode == "none" and meta.agents[0].history_type is None


def call(call_id: str, name: str) -> TurnEvent:
    return TurnEvent("tool_call", {"toolCallId": call_id, "name": name, "input": {}})


def test_calls_answered_inline_are_not_left_to_the_client() -> None:
    record = TurnRecord()
    for event in [
        call("1", "read_file"),
        call("2", "web_search"),
        call("3", "mystery"),  # a name nobody declared: a server tool, so a permission
        TurnEvent("tool_result", {"toolCallId": "2", "content": "found"}),
        TurnEvent("turn_stop", {"stopReason": "tool_use"}),
    ]:
        record.take(event)
    assert [(c.call.id, c.side) for c in record.open_calls({"read_file"})] == [("1", "client"), ("3", "server")]


def test_a_second_turn_stop_with_error_wins_and_a_missing_one_is_seen() -> None:
    record = TurnRecord()
    assert record.stop_reason is None and record.stops == 0
    record.take(TurnEvent("turn_stop", {"stopReason": "end_turn"}))
    record.take(TurnEvent("turn_stop", {"stopReason": "error"}))
    assert record.stop_reason == "error" and record.stops == 2


def test_the_history_s_last_assistant_message_holds_the_open_calls() -> None:
    history = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "tool_use", "toolCallId": "old", "name": "read_file", "input": {}}]},
        {"role": "tool", "toolCallId": "old", "content": "done"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "two more"},
                {"type": "tool_use", "toolCallId": "a", "name": "read_file", "input": {"path": "x"}},
                {"type": "tool_use", "toolCallId": "b", "name": "deploy", "input": {}},
            ],
        },
        {"role": "tool", "toolCallId": "b", "content": "Tool use denied: no"},
    ]
    [left] = open_calls_in_history(history, {"read_file"})
    assert (left.call.id, left.call.input, left.side) == ("a", {"path": "x"}, "client")
    names = [event.name for event in messages_as_events(history)]
    assert names == ["user", "tool_call", "tool_result", "text", "tool_call", "tool_call", "tool_result"]


def test_an_inline_image_shows_and_any_other_image_url_stays_a_link() -> None:
    thread = Thread()
    fold = EventFold(thread)
    fold.take(call("c1", "draw"))
    content = [
        {"type": "image", "url": "data:image/png;base64,iVBORw0KGgo="},
        {"type": "image", "url": "https://x/y.png"},
    ]
    fold.take(TurnEvent("tool_result", {"toolCallId": "c1", "content": content}))
    card = thread.tool_call("c1")
    assert card is not None
    inline, linked = card.content
    assert isinstance(inline, ImageBlock) and (inline.mime_type, inline.data, inline.uri) == (
        "image/png",
        "iVBORw0KGgo=",
        None,
    )
    assert isinstance(linked, ImageBlock) and (linked.data, linked.uri) == (None, "https://x/y.png")
