"""What a person sees and does in a real browser (headless Chromium), against the real server and agents."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Page, expect

from tests.support.browser import open_session, send_prompt
from tests.support.servers import ServerFactory


def permission_answers(received: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The client's responses to the agent's permission requests (the only requests it makes)."""
    return [m for m in received if "method" not in m and isinstance(m.get("result"), dict) and "outcome" in m["result"]]


def test_demo_tour_streams_and_edits_after_permission(start_server: ServerFactory, page: Page) -> None:
    server = start_server(agent=None)
    open_session(page, server)
    send_prompt(page, "tour")
    expect(page.locator('[data-role="user-message"]')).to_have_text("tour")
    edit = page.locator('[data-role="tool-call"][data-kind="edit"]')
    expect(edit.locator("[data-option-id]")).to_have_count(4)
    expect(page.locator("#session")).to_have_attribute("data-turn-state", "awaiting-permission")
    expect(page.locator('[data-role="agent-message"]').first).to_contain_text("demo agent")
    expect(page.locator('[data-role="tool-call"][data-kind="read"] .locations code')).to_contain_text("calculator.py")
    expect(page.locator('[data-role="plan"] li')).to_have_count(4)
    edit.locator('[data-option-kind="allow_once"]').click()
    expect(page.locator("#session")).to_have_attribute("data-turn-state", "idle", timeout=20_000)
    expect(edit).to_have_attribute("data-status", "completed")
    expect(edit.locator(".permission")).to_contain_text("You chose: Allow once")
    expect(page.locator('[data-role="agent-message"]').last).to_contain_text("help")


def test_tool_cards_show_kinds_statuses_and_unknown_content(start_server: ServerFactory, page: Page) -> None:
    server = start_server()
    open_session(page, server)
    send_prompt(page, "tools")
    expect(page.locator('[data-role="agent-message"]')).to_have_text("tools done")
    read = page.locator('[data-tool-call-id="t1"]')
    expect(read).to_have_attribute("data-kind", "read")
    expect(read).to_have_attribute("data-status", "completed")
    expect(read.locator(".locations")).to_have_text("/tmp/notes.txt:3")
    expect(read.locator(".tool-content")).to_contain_text("alpha")
    expect(read.locator(".tool-content")).to_contain_text("beta")
    custom = page.locator('[data-tool-call-id="t2"]')
    expect(custom).to_have_attribute("data-kind", "_widget")
    expect(custom).to_have_attribute("data-status", "_warming")
    expect(custom.locator('[data-content-type="_chart"] summary')).to_contain_text("_chart")
    custom.locator(".raw-payload summary").click()
    expect(custom.locator(".raw-payload pre")).to_contain_text('"points"')


def test_streamed_text_arrives_in_order(start_server: ServerFactory, page: Page) -> None:
    server = start_server()
    open_session(page, server)
    send_prompt(page, "stream 2000")
    message = page.locator('[data-role="agent-message"]')
    expect(message).to_contain_text("w1999")
    expect(page.locator("#session")).to_have_attribute("data-turn-state", "idle")
    text = message.inner_text()
    assert text.split() == [f"w{i}" for i in range(2000)]


def test_permission_click_answers_once_and_every_tab_sees_it(start_server: ServerFactory, page: Page) -> None:
    server = start_server()
    open_session(page, server)
    second = page.context.new_page()
    second.goto(page.url)
    send_prompt(page, "permission")
    button = page.locator('[data-option-id="reject-once"]')
    expect(second.locator('[data-option-id="reject-once"]')).to_be_visible()
    button.dblclick()
    expect(page.locator('[data-role="agent-message"]')).to_have_text("answer: reject-once")
    expect(second.locator('[data-tool-call-id="edit-1"] .permission')).to_contain_text("You chose: Reject")
    expect(page.locator('[data-tool-call-id="edit-1"]')).to_have_attribute("data-status", "failed")
    answers = permission_answers(server.received())
    assert [a["result"] for a in answers] == [{"outcome": {"outcome": "selected", "optionId": "reject-once"}}]


def test_stop_with_pending_permission_answers_cancelled(start_server: ServerFactory, page: Page) -> None:
    server = start_server()
    open_session(page, server)
    send_prompt(page, "permission")
    expect(page.locator("#session")).to_have_attribute("data-turn-state", "awaiting-permission")
    page.click('[data-action="cancel"]')
    expect(page.locator("#session")).to_have_attribute("data-turn-state", "idle")
    expect(page.locator('[data-tool-call-id="edit-1"] .permission')).to_contain_text("the turn was stopped")
    expect(page.locator('[data-tool-call-id="edit-1"]')).to_have_attribute("data-status", "cancelled")
    expect(page.locator('[data-role="notice"]')).to_contain_text("Stopped")
    received = server.received()
    assert any(m.get("method") == "session/cancel" for m in received)
    assert [a["result"] for a in permission_answers(received)] == [{"outcome": {"outcome": "cancelled"}}]


def test_reload_mid_turn_loses_nothing(start_server: ServerFactory, page: Page) -> None:
    server = start_server()
    open_session(page, server)
    send_prompt(page, "slow")
    message = page.locator('[data-role="agent-message"]')
    expect(message).to_contain_text("s5 ")
    page.reload()
    expect(page.locator("#session")).to_have_attribute("data-turn-state", "running")
    expect(page.locator('[data-role="user-message"]')).to_have_text("slow")
    expect(message).to_contain_text("s0 s1 s2 s3 s4 s5")
    expect(message).to_contain_text("s30 ")  # still streaming into the reloaded page
    page.keyboard.press("Escape")
    expect(page.locator("#session")).to_have_attribute("data-turn-state", "idle")
    words = message.inner_text().split()
    assert words == [f"s{i}" for i in range(len(words))]


def test_agent_crash_mid_turn_is_shown(start_server: ServerFactory, page: Page) -> None:
    server = start_server(process=True)
    open_session(page, server)
    send_prompt(page, "crash")
    expect(page.locator("#session")).to_have_attribute("data-turn-state", "ended")
    notice = page.locator('[data-role="notice"]')
    expect(notice).to_contain_text("exit code 3")
    expect(notice).to_contain_text("crashed on purpose")
    assert server.process.poll() is None, "the server must survive its agent"


def test_hostile_agent_text_never_runs(start_server: ServerFactory, page: Page) -> None:
    server = start_server()
    page.add_init_script("window.__ran = []; window.alert = (m) => window.__ran.push(String(m));")
    open_session(page, server)
    send_prompt(page, "xss")
    card = page.locator('[data-tool-call-id="x1"]')
    expect(card.locator(".tool-title")).to_contain_text("<script>alert(2)</script>")
    expect(page.locator('[data-role="agent-message"]')).to_contain_text("onerror")
    assert page.evaluate("window.__ran") == []
    assert page.locator("#thread script, #thread img[onerror], #thread a[href^='javascript']").count() == 0


def test_sign_in_with_an_auth_method(start_server: ServerFactory, page: Page) -> None:
    server = start_server(AUTH_REQUIRED="1")
    page.goto(server.sign_in_url("/"))
    page.click('[data-action="new-session"]')
    page.click('[data-auth-method="token"]')
    expect(page.locator("#session")).to_have_attribute("data-turn-state", "idle")
    server.wait_received(lambda m: m.get("method") == "authenticate" and m["params"] == {"methodId": "token"})
    send_prompt(page, "hello")
    expect(page.locator('[data-role="agent-message"]')).to_have_text("ok")
