"""How a subagent looks in the thread (``_subagent.html``, ``_session_message.html``): its title, state and Stop, its
own entries drawn by the same templates with ids of their own, a window of its newest entries; agent text escaped."""

from __future__ import annotations

from typing import Any

from tests.support.html import parse
from webclient.acp.subagents import SubagentRouter
from webclient.acp.updates import apply_update
from webclient.render.rendering import SUBAGENT_WINDOW, Renderer
from webclient.render.urls import Urls
from webclient.viewmodel.entries import Entry
from webclient.viewmodel.subagents import Subagent, Subagents
from webclient.viewmodel.thread import Thread

HOSTILE = '<img src=x onerror=alert(1)><script>alert(2)</script>"'
MAIN = "main"
RENDERER = Renderer()


def render(entry: Entry) -> str:
    context: dict[str, Any] = {"urls": Urls(), "static": Urls().static, "diff_mode": "unified", "csrf": "t"}
    return RENDERER.block("session.html", "entry", entry=entry, message=None, session=None, oob=None, **context)


def child_of(*updates: tuple[str, dict[str, Any]]) -> Subagent:
    thread = Thread()
    router = SubagentRouter(Subagents(thread))
    for session_id, update in updates:
        if not router.route({"sessionId": session_id, "update": update}, MAIN):
            apply_update(thread, update)
    child = router.registry.child("c")
    assert child is not None
    return child


def test_a_child_is_drawn_with_its_state_and_its_entries_and_agent_text_is_escaped() -> None:
    child = child_of(
        (MAIN, {"sessionUpdate": "subagent_update", "sessionId": "c", "title": HOSTILE, "description": HOSTILE,
                "state": {"state": "idle", "stopReason": "error", "error": {"code": 1, "message": HOSTILE}}}),
        ("c", {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": HOSTILE}}),
        ("c", {"sessionUpdate": "tool_call", "toolCallId": "t", "title": HOSTILE}),
    )  # fmt: skip
    html = render(child)
    assert "<script>" not in html and "<img" not in html
    (details,) = [e for e in parse(html).elements if e.tag == "details" and e.attrs.get("data-role") == "subagent"]
    assert details.attrs["data-session-id"] == "c" and details.attrs["id"] == f"entry-{child.seq}"
    assert 'data-role="subagent-state">Failed<' in html
    assert 'id="sub1-entry-1"' in html and 'id="sub1-entry-2"' in html  # the child's own ids
    assert 'data-action="stop-subagent"' not in html  # idle, and it allows no Stop


def test_a_long_child_shows_its_newest_entries_and_says_how_many_are_not_shown() -> None:
    announce = {"sessionUpdate": "subagent_update", "sessionId": "c", "state": {"state": "running"}}
    notices = [("c", {"sessionUpdate": "notice", "severity": "info", "title": f"step {n}"}) for n in range(50)]
    html = render(child_of((MAIN, announce), *notices))
    assert f"{50 - SUBAGENT_WINDOW} earlier entries of this subagent not shown." in html
    assert "step 49" in html and "step 9<" not in html and "step 10" in html


def test_every_payload_in_every_subagent_field_is_inert_and_ids_stay_unique() -> None:
    from tests.render.test_xss_corpus import page_problems
    from tests.support.xss_payloads import PAYLOADS

    updates: list[tuple[str, dict[str, Any]]] = [
        (MAIN, {"sessionUpdate": "tool_call", "toolCallId": "task", "title": "T"})
    ]
    for index, payload in enumerate(PAYLOADS):
        child, text = f"c{index}", {"type": "text", "text": payload}
        updates += [
            (MAIN, {"sessionUpdate": "subagent_update", "sessionId": child, "title": payload, "description": payload,
                    "cwd": payload, "additionalDirectories": [payload], "capabilities": {"cancel": {}},
                    "state": {"state": payload}}),
            (MAIN, {"sessionUpdate": "session_message", "messageId": "task" if index == 0 else payload,
                    "senderSessionId": MAIN, "recipientSessionId": child, "content": [text]}),
            (child, {"sessionUpdate": "agent_message_chunk", "content": text}),
            (child, {"sessionUpdate": "agent_thought_chunk", "content": text}),
            (child, {"sessionUpdate": "tool_call", "toolCallId": payload, "title": payload, "kind": payload}),
            (child, {"sessionUpdate": "subagent_update", "sessionId": f"g{index}", "title": payload}),
            (child, {"sessionUpdate": "session_message_chunk", "messageId": payload, "content": text}),
            (f"g{index}", {"sessionUpdate": "user_message_chunk", "content": text}),
        ]  # fmt: skip
    thread = Thread()
    router = SubagentRouter(Subagents(thread))
    for session_id, update in updates:
        if not router.route({"sessionId": session_id, "update": update}, MAIN):
            apply_update(thread, update)
    assert router.registry.nested_in(thread.entries[0])  # type: ignore[arg-type]
    html = "".join(render(entry) for entry in thread)
    assert page_problems(html) == []


def test_the_markdown_export_quotes_a_childs_entries_under_its_title() -> None:
    from webclient.render.export import thread_markdown

    child = child_of(
        (MAIN, {"sessionUpdate": "subagent_update", "sessionId": "c", "title": "Explorer <b>",
                "state": {"state": "idle", "stopReason": "end_turn"}}),
        ("c", {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Child says hi"}}),
        (MAIN, {"sessionUpdate": "session_message", "messageId": "m", "senderSessionId": "c",
                "recipientSessionId": MAIN, "content": [{"type": "text", "text": "The reply"}]}),
    )  # fmt: skip
    exported = thread_markdown(child.parent)
    assert "> **Subagent:** Explorer \\<b\\> — *idle, end\\_turn*" in exported
    assert "> Child says hi" in exported
    assert "> **Received from another session:**\n>\n> The reply" in exported


def test_a_display_only_terminal_a_child_reports_shows_its_output_in_the_childs_card() -> None:
    meta = {"terminal_info": {"terminal_id": "t1"}, "terminal_output": {"terminal_id": "t1", "data": "hello-term\n"}}
    child = child_of(
        (MAIN, {"sessionUpdate": "subagent_update", "sessionId": "c", "state": {"state": "running"}}),
        ("c", {"sessionUpdate": "tool_call", "toolCallId": "run", "title": "Run", "kind": "execute", "_meta": meta}),
    )
    html = render(child)
    assert "hello-term" in html and 'id="sub1-entry-1-term-1"' in html and "(no output)" not in html
