"""Prompts queued while the agent is busy (``webclient.session.prompt_queue``)."""

from __future__ import annotations

from webclient.session.prompt_queue import PromptQueue
from webclient.viewmodel.content import ResourceLink

LINK = ResourceLink(uri="file:///w/a.py", name="a.py")


def counted() -> tuple[PromptQueue, list[None]]:
    calls: list[None] = []
    return PromptQueue(listener=lambda: calls.append(None)), calls


def test_queue_add_appends_in_order_with_fresh_ids() -> None:
    queue, calls = counted()
    first = queue.add("one", [])
    second = queue.add("two", [LINK])
    assert [item.text for item in queue] == ["one", "two"]
    assert len(queue) == 2
    assert first.id != second.id
    assert second.blocks == [LINK]
    assert len(calls) == 2


def test_queue_pop_takes_the_oldest_first() -> None:
    queue, calls = counted()
    first, second = queue.add("one", []), queue.add("two", [])
    calls.clear()
    assert queue.pop() is first
    assert queue.pop() is second
    assert len(queue) == 0
    assert len(calls) == 2


def test_queue_pop_of_an_empty_queue_is_none_and_quiet() -> None:
    queue, calls = counted()
    assert queue.pop() is None
    assert calls == []


def test_queue_edit_changes_the_text_in_place() -> None:
    queue, calls = counted()
    first, second = queue.add("one", []), queue.add("two", [])
    calls.clear()
    assert queue.edit(first.id, "  uno  ")
    assert [item.text for item in queue] == ["uno", "two"]
    assert list(queue) == [first, second]
    assert len(calls) == 1


def test_queue_edit_to_empty_text_with_nothing_attached_removes_it() -> None:
    queue, calls = counted()
    first, second = queue.add("one", []), queue.add("two", [])
    calls.clear()
    assert queue.edit(first.id, "   ")
    assert list(queue) == [second]
    assert len(calls) == 1


def test_queue_edit_to_empty_text_with_an_attachment_keeps_it() -> None:
    queue, calls = counted()
    item = queue.add("look", [LINK])
    calls.clear()
    assert queue.edit(item.id, "")
    assert list(queue) == [item]
    assert item.text == ""
    assert item.blocks == [LINK]
    assert len(calls) == 1


def test_queue_edit_of_an_unknown_id_is_false_and_quiet() -> None:
    queue, calls = counted()
    queue.add("one", [])
    calls.clear()
    assert not queue.edit("unknown", "x")
    assert [item.text for item in queue] == ["one"]
    assert calls == []


def test_queue_remove() -> None:
    queue, calls = counted()
    first, second, third = queue.add("1", []), queue.add("2", []), queue.add("3", [])
    calls.clear()
    assert queue.remove(second.id)
    assert list(queue) == [first, third]
    assert len(calls) == 1


def test_queue_remove_of_an_unknown_id_is_false_and_quiet() -> None:
    queue, calls = counted()
    item = queue.add("1", [])
    calls.clear()
    assert not queue.remove("unknown")
    assert queue.remove(item.id)
    assert not queue.remove(item.id)
    assert len(calls) == 1
