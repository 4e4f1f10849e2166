"""The protocol log: what each line is, which request a response answers, and the viewer's filters."""

from __future__ import annotations

import json
import time
from typing import Any

from webclient.acp.protocol_log import MAX_CHARS, MAX_LINE_CHARS, MAX_PENDING, PREVIEW_CHARS, LogFilter, ProtocolLog


def line(**message: Any) -> str:
    return json.dumps({"jsonrpc": "2.0", **message})


def update(kind: str, **fields: Any) -> str:
    return line(method="session/update", params={"sessionId": "s1", "update": {"sessionUpdate": kind, **fields}})


def sample_log() -> ProtocolLog:
    """A short, typical exchange: 1 initialize →, 2 ←, 3 session/prompt →, 4-6 updates ←, 7 ← response."""
    log = ProtocolLog()
    log.record("out", line(id=0, method="initialize", params={"protocolVersion": 1}))
    log.record("in", line(id=0, result={"protocolVersion": 1}))
    log.record("out", line(id=1, method="session/prompt", params={"prompt": [{"type": "text", "text": "Hello"}]}))
    log.record("in", update("agent_message_chunk", content={"type": "text", "text": "Hi THERE"}))
    log.record("in", update("future_thing", payload={"x": 1}))
    log.record("garbage", "invalid JSON: not json at all")
    log.record("in", line(id=1, result={"stopReason": "end_turn"}))
    return log


def numbers(log: ProtocolLog, spec: LogFilter | None = None, **kwargs: Any) -> list[int]:
    return [entry.number for entry in log.filter(spec, **kwargs).lines]


def test_record_summarises_each_kind() -> None:
    log = ProtocolLog()
    request = log.record("out", line(id=7, method="session/new", params={"cwd": "/"}))
    notification = log.record("out", line(method="session/cancel", params={"sessionId": "s1"}))
    response = log.record("in", line(id=7, result={"sessionId": "s1"}))
    error = log.record("in", line(id=99, error={"code": -32601, "message": "nope"}))
    assert (request.kind, request.method, request.id) == ("request", "session/new", "7")
    assert (notification.kind, notification.method, notification.id) == ("notification", "session/cancel", None)
    assert (response.kind, response.method, response.id) == ("response", "session/new", "7")
    assert (error.kind, error.method, error.id) == ("error", None, "99")
    assert [entry.number for entry in log] == [1, 2, 3, 4]


def test_response_is_paired_with_the_request_sent_the_other_way() -> None:
    log = ProtocolLog()
    log.record("out", line(id=1, method="session/prompt", params={}))
    log.record("in", line(id=1, method="session/request_permission", params={}))  # the agent's own id 1
    to_agent = log.record("out", line(id=1, result={"outcome": {"outcome": "cancelled"}}))
    from_agent = log.record("in", line(id=1, result={"stopReason": "end_turn"}))
    assert to_agent.method == "session/request_permission"
    assert from_agent.method == "session/prompt"


def test_response_ids_pair_by_json_value_and_only_once() -> None:
    log = ProtocolLog()
    log.record("out", line(id="1", method="fs/read_text_file", params={}))
    number_one = log.record("in", line(id=1, result={}))
    string_one = log.record("in", line(id="1", result={}))
    again = log.record("in", line(id="1", result={}))
    assert (number_one.method, number_one.id) == (None, "1")
    assert (string_one.method, string_one.id) == ("fs/read_text_file", '"1"')
    assert again.method is None


def test_error_response_shows_the_method_it_answers() -> None:
    log = ProtocolLog()
    log.record("in", line(id=5, method="terminal/create", params={}))
    error = log.record("out", line(id=5, error={"code": -32601, "message": "Method not found"}))
    assert (error.kind, error.method) == ("error", "terminal/create")


def test_session_update_types_and_unknown_ones() -> None:
    log = sample_log()
    chunk, future = log.line(4), log.line(5)
    assert chunk is not None and future is not None
    assert (chunk.method, chunk.update, chunk.unknown_update) == ("session/update", "agent_message_chunk", False)
    assert (future.update, future.unknown_update) == ("future_thing", True)
    assert log.methods == {"initialize", "session/prompt", "session/update"}
    assert log.update_types == {"agent_message_chunk", "future_thing"}


def test_v2_update_names_are_known() -> None:
    log = ProtocolLog()
    for kind in ("plan_update", "tool_call_content_chunk", "config_option_update", "usage_update"):
        assert not log.record("in", update(kind)).unknown_update


def test_unreadable_lines_are_unparseable() -> None:
    log = ProtocolLog()
    garbage = log.record("garbage", 'invalid JSON: {"id": 1, "method": "x"')
    broken = log.record("in", '{"id": 1, "method": "x"')
    array = log.record("in", "[1, 2]")
    neither = log.record("in", line(id=3))
    update_without_type = log.record("in", line(method="session/update", params={"update": "?"}))
    assert [entry.kind for entry in (garbage, broken, array, neither)] == ["unparseable"] * 4
    assert garbage.method is None and broken.method is None
    assert update_without_type.kind == "notification" and update_without_type.update is None


def test_long_line_is_cut_and_summarised_from_its_start() -> None:
    log = ProtocolLog()
    big = "x" * (MAX_LINE_CHARS * 2)
    raw = line(id=4, method="session/prompt", params={"prompt": [{"type": "text", "text": big}]})
    request = log.record("out", raw)
    chunk = log.record("in", update("tool_call_update", toolCallId="t", content=big))
    answer = log.record("in", line(id=4, result={"stopReason": "end_turn", "echo": big}))
    assert len(request.text) < MAX_LINE_CHARS + 100 and request.text.endswith(f"… ({len(raw):,} characters)")
    assert (request.kind, request.method, request.id) == ("request", "session/prompt", "4")
    assert (chunk.kind, chunk.update) == ("notification", "tool_call_update")
    assert (answer.kind, answer.method) == ("response", "session/prompt")


def test_preview_is_the_start_of_the_line() -> None:
    log = ProtocolLog()
    short = log.record("in", line(id=1, result={}))
    long = log.record("in", update("agent_message_chunk", content={"type": "text", "text": "y" * 500}))
    assert short.preview == short.text
    assert long.preview == long.text[:PREVIEW_CHARS] + "…"


def test_filter_by_direction_counts_unreadable_lines_as_from_the_agent() -> None:
    log = sample_log()
    assert numbers(log) == [1, 2, 3, 4, 5, 6, 7]
    assert numbers(log, LogFilter(direction="out")) == [1, 3]
    assert numbers(log, LogFilter(direction="in")) == [2, 4, 5, 6, 7]


def test_filter_by_text_ignores_case() -> None:
    log = sample_log()
    assert numbers(log, LogFilter(query="hi there")) == [4]
    assert numbers(log, LogFilter(query="HELLO")) == [3]
    assert numbers(log, LogFilter(query='"id": 1')) == [3, 7]
    assert numbers(log, LogFilter(query="nothing like this")) == []


def test_filter_by_method_includes_responses_and_matches_update_types() -> None:
    log = sample_log()
    assert numbers(log, LogFilter(method="session/prompt")) == [3, 7]
    assert numbers(log, LogFilter(method="initialize")) == [1, 2]
    assert numbers(log, LogFilter(method="agent_message_chunk")) == [4]
    assert numbers(log, LogFilter(method="session/update")) == [4, 5]


def test_filter_unknown_updates_only() -> None:
    log = sample_log()
    assert numbers(log, LogFilter(unknown_only=True)) == [5]
    assert numbers(log, LogFilter(unknown_only=True, direction="out")) == []


def test_filters_combine() -> None:
    log = sample_log()
    assert numbers(log, LogFilter(direction="in", method="session/prompt", query="end_turn")) == [7]


def test_filter_after_returns_only_newer_lines_and_where_to_continue() -> None:
    log = sample_log()
    selection = log.filter(LogFilter(direction="in"), after=4)
    assert [entry.number for entry in selection.lines] == [5, 6, 7]
    assert selection.last == 7
    assert log.filter(after=7).lines == [] and log.filter(after=7).last == 7
    assert log.filter(after=100).lines == []
    log.record("out", line(method="session/cancel", params={}))
    later = log.filter(LogFilter(direction="in"), after=selection.last)
    assert later.lines == [] and later.last == 8


def test_filter_after_works_once_old_lines_are_dropped() -> None:
    log = ProtocolLog(maxlen=10)
    for i in range(25):
        log.record("in", update("agent_message_chunk", n=i))
    assert len(log) == 10 and log.total == 25
    assert numbers(log) == list(range(16, 26))
    assert numbers(log, after=3) == list(range(16, 26))
    assert numbers(log, after=22) == [23, 24, 25]
    assert log.line(15) is None and log.line(16) is not None and log.line(26) is None


def test_filter_limit_keeps_the_newest_and_counts_the_rest() -> None:
    log = ProtocolLog()
    for i in range(30):
        log.record("in" if i % 2 else "out", line(id=i, method="x", params={}))
    selection = log.filter(LogFilter(direction="out"), limit=5)
    assert [entry.number for entry in selection.lines] == [21, 23, 25, 27, 29]
    assert (selection.matched, selection.omitted) == (15, 10)
    assert log.filter(limit=0).lines == [] and log.filter(limit=0).omitted == 30
    assert log.filter(limit=100).omitted == 0


def test_unanswered_requests_are_forgotten_beyond_a_bound() -> None:
    log = ProtocolLog(maxlen=10)
    for i in range(MAX_PENDING + 1):
        log.record("out", line(id=i, method="m", params={}))
    assert log.record("in", line(id=0, result={})).method is None
    assert log.record("in", line(id=MAX_PENDING, result={})).method == "m"


def test_full_log_of_long_lines_records_and_filters_quickly() -> None:
    log = ProtocolLog()
    body = "Lorem ipsum dolor sit amet " * 734
    lines = [update("tool_call_update", toolCallId=f"t{i}", content=body) for i in range(5000)]
    assert MAX_LINE_CHARS - 200 < len(lines[0]) <= MAX_LINE_CHARS
    started = time.perf_counter()
    for text in lines:
        log.record("in", text)
    recorded = time.perf_counter() - started
    started = time.perf_counter()
    found = log.filter(LogFilter(query="NEEDLE", method="tool_call_update"), limit=1000)
    searched = time.perf_counter() - started
    newest = log.line(5000)
    assert found.matched == 0 and newest is not None and newest.kind == "notification"
    assert len(log) == min(5000, MAX_CHARS // len(lines[0]))  # the character budget keeps fewer of such lines
    assert recorded < 5 and searched < 2, (recorded, searched)


def test_the_log_holds_a_bounded_number_of_characters() -> None:
    """5,000 lines of 20,000 characters would be 100 MB a session: the oldest go once MAX_CHARS is reached."""
    log = ProtocolLog()
    big = json.dumps({"jsonrpc": "2.0", "method": "x", "params": {"data": "a" * (MAX_LINE_CHARS * 2)}})
    for _ in range(1000):
        log.record("in", big)
    assert sum(len(line.text) for line in log) <= MAX_CHARS
    assert log.total == 1000 and len(log) >= MAX_CHARS // (MAX_LINE_CHARS + 100)
    numbers = [line.number for line in log]
    assert numbers == list(range(1001 - len(log), 1001))
    assert log.line(numbers[0]) is not None and log.line(numbers[0] - 1) is None
