"""Tests for webclient.viewmodel.events: what a watcher of the view model is told when something arrives.

The thread, its terminals and the session's controls report typed events: the entry that changed, the
terminal that changed, or a region of the session's state. They are reported once per streamed chunk, so an
entry's (and a terminal's) event is made once and handed out again.
"""

from __future__ import annotations

from webclient.viewmodel.content import Location, PlanItem, TerminalRef, TextBlock
from webclient.viewmodel.controls import Command, SessionControls, Usage
from webclient.viewmodel.events import Change, EntryChanged, Region, TerminalChanged
from webclient.viewmodel.thread import Thread


def watched() -> tuple[Thread, list[Change]]:
    told: list[Change] = []
    return Thread(listener=told.append), told


def test_a_chunk_is_told_as_its_entry_and_every_chunk_of_a_message_as_the_same_event() -> None:
    thread, told = watched()
    thread.append_message("agent-message", TextBlock(text="Hel"))
    thread.append_message("agent-message", TextBlock(text="lo"))
    assert told == [EntryChanged(1), EntryChanged(1)]
    assert told[1] is told[0] is thread.entry(1).change  # no new event per chunk
    thread.append_message("thought", TextBlock(text="hmm"))  # ends the message (told again) and starts a thought
    assert told[2:] == [EntryChanged(1), EntryChanged(2)]


def test_a_terminals_output_is_told_as_the_terminal_not_the_cards_that_show_it() -> None:
    thread, told = watched()
    thread.upsert_tool_call("run", {"title": "ls", "content": [TerminalRef(terminal_id="t-a")]}, {})
    thread.upsert_tool_call("again", {"title": "ls", "content": [TerminalRef(terminal_id="t-a")]}, {})
    told.clear()
    thread.terminals.output("t-a", b"one\n")
    thread.terminals.output("t-a", b"two\n")
    thread.terminals.output("t-b", b"other\n")  # output before any card mentions it: a terminal of its own
    thread.terminals.exited("t-a", 0, None)
    assert told == [TerminalChanged(1), TerminalChanged(1), TerminalChanged(2), TerminalChanged(1)]
    assert told[0] is told[1]
    assert thread.terminals.embedded_in("t-a") == [1, 2]  # the web layer finds the cards from the terminal


def test_a_plan_is_told_as_its_entry_and_as_the_plan_region() -> None:
    thread, told = watched()
    thread.set_plan([PlanItem(content="read", priority="high", status="in_progress")])
    thread.set_plan([PlanItem(content="read", priority="high", status="completed")])
    assert told == [EntryChanged(1), Region.PLAN, EntryChanged(1), Region.PLAN]


def test_a_location_and_dropped_entries_are_regions() -> None:
    told: list[Change] = []
    thread = Thread(listener=told.append, max_entries=10)
    thread.upsert_tool_call("read", {"title": "read", "locations": []}, {})
    assert Region.LOCATION not in told
    thread.upsert_tool_call("read", {"locations": [Location(path="/w/a.py", line=3)]}, {})
    assert told[-2:] == [EntryChanged(1), Region.LOCATION]
    for n in range(20):
        thread.upsert_tool_call(f"c{n}", {"title": "x", "status": "completed"}, {})
    assert Region.DROPPED in told


def test_controls_are_told_as_the_region_they_change() -> None:
    told: list[Change] = []
    controls = SessionControls(listener=told.append)
    controls.set_title("Fix the bug")
    controls.set_usage(Usage(used=10, size=100))
    controls.set_commands([Command(name="test", description="Run the tests")])
    controls.set_current_mode("ask")
    assert told == [Region.STATUS, Region.STATUS, Region.COMMANDS, Region.CONTROLS]


def test_events_are_hashable_and_kinds_never_collide() -> None:
    pending = dict.fromkeys([EntryChanged(1), TerminalChanged(1), Region.PLAN, EntryChanged(1), Region.PLAN])
    assert list(pending) == [EntryChanged(1), TerminalChanged(1), Region.PLAN]
    assert EntryChanged(1) != TerminalChanged(1)
    assert Region.STATUS == "status"  # a region is its name: code that still says "status" is understood
