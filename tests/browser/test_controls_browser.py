"""The page's controls in a real browser: slash commands, modes, config options, the prompt queue, following the
output, the title and usage header, and answering a permission with a key."""

from __future__ import annotations

import json
import re
import sys
from typing import Any

from playwright.sync_api import Browser, Page, expect

from tests.support.browser import open_session, until_connected
from tests.support.servers import AGENTS, Server, ServerFactory

CONTROLS_AGENT = f"{sys.executable} {AGENTS / 'controls_agent.py'}"


def send_prompt(page: Page, text: str) -> None:
    """Type and send a prompt, and see the box clear with a fresh nonce for the next one."""
    until_connected(page)
    nonce = page.locator("#prompt-nonce").input_value()
    page.fill("#prompt-input", text)
    page.keyboard.press("Enter")
    expect(page.locator("#prompt-nonce")).not_to_have_value(nonce)
    expect(page.locator("#prompt-input")).to_have_value("")


def turn_state(page: Page, state: str, timeout: float = 15_000) -> None:
    expect(page.locator("#session")).to_have_attribute("data-turn-state", state, timeout=timeout)


def calls(received: list[dict[str, Any]], method: str) -> list[dict[str, Any]]:
    """The params of every ``method`` request or notification the agent received, in order."""
    return [m.get("params") or {} for m in received if m.get("method") == method]


def prompt_texts(received: list[dict[str, Any]]) -> list[str]:
    """The text of every ``session/prompt`` the agent received, in order."""
    return [
        " ".join(b.get("text", "") for b in p.get("prompt", []) if b.get("type") == "text")
        for p in calls(received, "session/prompt")
    ]


def scroll_metrics(page: Page) -> dict[str, float]:
    return page.evaluate(
        "() => { const d = document.scrollingElement;"
        " return {top: d.scrollTop, height: d.scrollHeight, client: d.clientHeight}; }"
    )


def at_bottom_js(slack: int = 2) -> str:
    """A JavaScript expression: the window is scrolled to (within ``slack`` px of) the bottom."""
    return (
        "(() => { const d = document.scrollingElement;"
        f" return d.scrollHeight - d.scrollTop - d.clientHeight <= {slack}; }})()"
    )


def fresh_page(browser: Browser, server: Server, url: str) -> Page:
    """The same session in a new browser context: what the server says, without any form state the browser kept."""
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    other = context.new_page()
    other.set_default_timeout(15_000)
    other.goto(server.sign_in_url(url))
    expect(other.locator("#session")).to_have_attribute("data-turn-state", "idle")
    return other


# -- "/" commands ----------------------------------------------------------------------------------


def test_slash_menu_lists_filters_picks_and_sends_a_command(start_server: ServerFactory, page: Page) -> None:
    server = start_server(agent=CONTROLS_AGENT)
    open_session(page, server)
    menu = page.locator("#command-menu")
    items = menu.locator("li[role=option]")
    expect(items).to_have_count(3)  # the agent's available_commands_update arrived
    expect(menu).to_be_hidden()
    prompt = page.locator("#prompt-input")

    prompt.click()
    page.keyboard.type("/")
    expect(menu).to_be_visible()
    expect(items.locator(".menu-name")).to_have_text(["/review", "/test", "/explain"])
    expect(items.locator(".menu-description")).to_have_text(
        ["Review the current changes", "Run the test suite", "Explain a file"]
    )
    expect(menu.locator('[data-command="review"] .menu-hint')).to_have_text("what to focus on")
    expect(menu.locator('[data-command="explain"] .menu-hint')).to_have_text("path")
    expect(menu.locator('[data-command="test"] .menu-hint')).to_have_count(0)
    selected = menu.locator("li[role=option][aria-selected=true]")
    expect(selected).to_have_attribute("data-command", "review")

    page.keyboard.press("ArrowDown")
    expect(selected).to_have_attribute("data-command", "test")
    page.keyboard.press("ArrowDown")
    expect(selected).to_have_attribute("data-command", "explain")
    page.keyboard.press("ArrowDown")  # wraps around
    expect(selected).to_have_attribute("data-command", "review")
    page.keyboard.press("ArrowUp")
    expect(selected).to_have_attribute("data-command", "explain")
    page.keyboard.press("ArrowUp")
    expect(selected).to_have_attribute("data-command", "test")
    expect(prompt).to_have_value("/")  # arrows move the selection, not the caret's text

    page.keyboard.type("ex")
    expect(menu.locator('[data-command="review"]')).to_have_attribute("hidden", "")
    expect(menu.locator('[data-command="test"]')).to_have_attribute("hidden", "")
    expect(menu.locator('[data-command="explain"]')).not_to_have_attribute("hidden", re.compile(".*"))
    expect(menu.locator('[data-command="explain"]')).to_be_visible()
    expect(selected).to_have_attribute("data-command", "explain")

    page.keyboard.press("Enter")
    expect(prompt).to_have_value("/explain ")
    expect(menu).to_be_hidden()
    expect(prompt).to_have_attribute("aria-expanded", "false")
    expect(page.locator("#command-hint")).to_be_visible()
    expect(page.locator("#command-hint")).to_have_text("/explain path")
    assert calls(server.received(), "session/prompt") == [], "picking a command must not send it"

    page.keyboard.type("src/app.py")
    expect(menu).to_be_hidden()
    page.keyboard.press("Enter")
    expect(page.locator('[data-role="user-message"]')).to_have_text("/explain src/app.py")
    expect(page.locator('[data-role="agent-message"]')).to_contain_text("/explain src/app.py")
    turn_state(page, "idle")
    prompts = calls(server.received(), "session/prompt")
    assert [p["prompt"] for p in prompts] == [[{"type": "text", "text": "/explain src/app.py"}]]
    assert prompts[0]["sessionId"] == "controls-1"


def test_slash_menu_is_announced_as_expanded_with_the_selected_option(start_server: ServerFactory, page: Page) -> None:
    server = start_server(agent=CONTROLS_AGENT)
    open_session(page, server)
    menu = page.locator("#command-menu")
    expect(menu.locator("li[role=option]")).to_have_count(3)
    prompt = page.locator("#prompt-input")
    prompt.click()
    page.keyboard.type("/")
    expect(menu).to_be_visible()
    expect(prompt).to_have_attribute("aria-expanded", "true", timeout=2_000)
    expect(prompt).to_have_attribute("aria-activedescendant", "command-1", timeout=2_000)
    page.keyboard.press("ArrowDown")
    expect(prompt).to_have_attribute("aria-activedescendant", "command-2", timeout=2_000)


def test_slash_menu_hides_the_commands_that_do_not_match(start_server: ServerFactory, page: Page) -> None:
    server = start_server(agent=CONTROLS_AGENT)
    open_session(page, server)
    items = page.locator("#command-menu li[role=option]")
    expect(items).to_have_count(3)
    page.locator("#prompt-input").click()
    page.keyboard.type("/ex")
    expect(page.locator("#command-menu")).to_be_visible()
    expect(items.filter(visible=True)).to_have_count(1, timeout=2_000)
    expect(items.filter(visible=True).locator(".menu-name")).to_have_text("/explain", timeout=2_000)


def test_slash_menu_click_picks_and_tab_picks(start_server: ServerFactory, page: Page) -> None:
    server = start_server(agent=CONTROLS_AGENT)
    open_session(page, server)
    menu = page.locator("#command-menu")
    expect(menu.locator("li[role=option]")).to_have_count(3)
    prompt = page.locator("#prompt-input")
    prompt.click()
    page.keyboard.type("/")
    menu.locator('[data-command="test"]').click()
    expect(prompt).to_have_value("/test ")
    expect(menu).to_be_hidden()
    expect(page.locator("#command-hint")).to_be_hidden()  # /test takes no input
    expect(prompt).to_be_focused()

    page.fill("#prompt-input", "")
    page.keyboard.type("/rev")
    expect(menu.locator("li[role=option][aria-selected=true]")).to_have_attribute("data-command", "review")
    page.keyboard.press("Tab")
    expect(prompt).to_have_value("/review ")
    expect(prompt).to_be_focused()
    expect(page.locator("#command-hint")).to_have_text("/review what to focus on")
    assert calls(server.received(), "session/prompt") == []


def test_escape_closes_the_slash_menu_without_stopping_the_turn(start_server: ServerFactory, page: Page) -> None:
    server = start_server(agent=CONTROLS_AGENT)
    open_session(page, server)
    expect(page.locator("#command-menu li[role=option]")).to_have_count(3)
    send_prompt(page, "wait 5")
    turn_state(page, "running")
    menu = page.locator("#command-menu")
    page.locator("#prompt-input").click()
    page.keyboard.type("/")
    expect(menu).to_be_visible()
    page.keyboard.press("Escape")
    expect(menu).to_be_hidden()
    expect(page.locator("#prompt-input")).to_have_value("/")
    page.wait_for_timeout(500)
    turn_state(page, "running")
    assert calls(server.received(), "session/cancel") == []

    # The turn runs to its natural end: the agent was never told to stop.
    expect(page.locator('[data-role="agent-message"]')).to_contain_text("waited for wait 5", timeout=15_000)
    turn_state(page, "idle")
    assert calls(server.received(), "session/cancel") == []
    assert page.locator('[data-role="notice"]').count() == 0

    # With no menu open, Escape during a turn still stops it.
    send_prompt(page, "wait 5")
    turn_state(page, "running")
    page.keyboard.press("Escape")
    turn_state(page, "idle")
    server.wait_received(lambda m: m.get("method") == "session/cancel")


# -- Modes -----------------------------------------------------------------------------------------


def test_mode_select_switches_the_agent_and_follows_it(
    start_server: ServerFactory, page: Page, browser: Browser
) -> None:
    server = start_server(agent=CONTROLS_AGENT, MODES_ONLY="1")
    open_session(page, server)
    select = page.locator("#session-controls form[data-control=mode] select#mode-select")
    expect(select).to_have_value("ask")
    expect(select.locator("option")).to_have_text(["Ask", "Code", "Plan"])
    expect(select.locator("option:checked")).to_have_text("Ask")
    expect(page.locator("#session-controls form")).to_have_count(1)  # no config options in this variant

    select.select_option("code")
    message = server.wait_received(lambda m: m.get("method") == "session/set_mode")
    assert message["params"] == {"sessionId": "controls-1", "modeId": "code"}
    expect(select).to_have_value("code")

    page.reload()
    expect(select).to_have_value("code")
    other = fresh_page(browser, server, page.url)
    try:
        expect(other.locator("#mode-select")).to_have_value("code")
    finally:
        other.context.close()

    send_prompt(page, "mode")
    expect(page.locator('[data-role="agent-message"]')).to_have_text("switched to plan")
    expect(select).to_have_value("plan")
    expect(select.locator("option:checked")).to_have_text("Plan")
    turn_state(page, "idle")
    assert [p["modeId"] for p in calls(server.received(), "session/set_mode")] == ["code"]


# -- Config options --------------------------------------------------------------------------------


def test_config_option_selects_and_toggle(start_server: ServerFactory, page: Page, browser: Browser) -> None:
    server = start_server(agent=CONTROLS_AGENT)
    open_session(page, server)
    controls = page.locator("#session-controls")
    model = controls.locator("form[data-control=model] select")
    expect(model).to_have_value("sage")
    expect(controls.locator("#mode-select")).to_have_count(0)  # config options win over modes
    expect(controls.locator("form[data-control=mode]")).to_have_count(0)
    groups = model.locator("optgroup")
    expect(groups).to_have_count(2)
    assert [groups.nth(i).get_attribute("label") for i in range(2)] == ["Fast", "Thorough"]
    expect(groups.nth(0).locator("option")).to_have_text(["Swift"])
    expect(groups.nth(1).locator("option")).to_have_text(["Sage", "Sage Max"])

    model.select_option(label="Sage Max")
    message = server.wait_received(
        lambda m: m.get("method") == "session/set_config_option" and m["params"].get("configId") == "model"
    )
    assert message["params"] == {"sessionId": "controls-1", "configId": "model", "value": "sage-max"}
    expect(model).to_have_value("sage-max")
    page.reload()
    expect(model).to_have_value("sage-max")
    other = fresh_page(browser, server, page.url)
    try:
        expect(other.locator("#session-controls form[data-control=model] select")).to_have_value("sage-max")
    finally:
        other.context.close()

    verbose_form = controls.locator("form[data-control=verbose]")
    verbose = verbose_form.locator("label.toggle input[type=checkbox]")
    expect(verbose).not_to_be_checked()
    verbose.click()
    message = server.wait_received(
        lambda m: m.get("method") == "session/set_config_option" and m["params"].get("configId") == "verbose"
    )
    assert message["params"] == {"sessionId": "controls-1", "configId": "verbose", "type": "boolean", "value": True}
    expect(verbose_form.locator("input[name=value]")).to_have_value("false")  # re-rendered from the agent's answer
    expect(verbose).to_be_checked()
    verbose.click()
    server.wait_received(lambda m: m.get("method") == "session/set_config_option" and m["params"].get("value") is False)
    expect(verbose).not_to_be_checked()
    verbose_values = [
        p["value"] for p in calls(server.received(), "session/set_config_option") if p["configId"] == "verbose"
    ]
    assert verbose_values == [True, False]

    effort = controls.locator("form[data-control=effort] select")
    expect(effort).to_have_value("medium")
    expect(effort.locator("optgroup")).to_have_count(0)
    effort.select_option(label="Max")
    notice = page.locator('[data-role="notice"]')
    expect(notice).to_contain_text("max effort is not available on this plan")
    expect(notice).to_contain_text("Effort")
    expect(effort).to_have_value("medium")
    effort_values = [
        p["value"] for p in calls(server.received(), "session/set_config_option") if p["configId"] == "effort"
    ]
    assert effort_values == ["max"]
    expect(model).to_have_value("sage-max")


# -- The prompt queue ------------------------------------------------------------------------------


def test_queued_prompts_are_sent_in_order_with_edits(start_server: ServerFactory, page: Page) -> None:
    server = start_server(agent=CONTROLS_AGENT)
    open_session(page, server)
    watcher = page.context.new_page()  # a second tab shows what the server holds
    watcher.goto(page.url)
    send_prompt(page, "wait 3")
    turn_state(page, "running")
    send_prompt(page, "first queued")
    send_prompt(page, "second queued")
    queued = page.locator("#prompt-queue [data-role=queued]")
    expect(queued).to_have_count(2)
    expect(queued.nth(0).locator("textarea")).to_have_value("first queued")
    expect(queued.nth(1).locator("textarea")).to_have_value("second queued")
    expect(page.locator("#prompt-queue .queue-head")).to_contain_text("sent when the agent finishes")
    expect(page.locator('[data-role="user-message"]')).to_have_text(["wait 3"])
    expect(page.locator("#prompt-input")).to_have_value("")

    second = queued.nth(1).locator("textarea")
    second.fill("second edited")
    second.press("Enter")
    expect(second).not_to_be_focused()
    expect(watcher.locator("#prompt-queue [data-role=queued] textarea").nth(1)).to_have_value("second edited")
    assert prompt_texts(server.received()) == ["wait 3"]

    expect(page.locator('[data-role="user-message"]')).to_have_text(
        ["wait 3", "first queued", "second edited"], timeout=20_000
    )
    turn_state(page, "idle")
    expect(queued).to_have_count(0)
    assert prompt_texts(server.received()) == ["wait 3", "first queued", "second edited"]
    agent_messages = page.locator('[data-role="agent-message"]')
    expect(agent_messages.nth(1)).to_contain_text("first queued")
    expect(agent_messages.nth(2)).to_contain_text("second edited")
    watcher.close()


def test_removed_queued_prompt_never_reaches_the_agent(start_server: ServerFactory, page: Page) -> None:
    server = start_server(agent=CONTROLS_AGENT)
    open_session(page, server)
    send_prompt(page, "wait 2")
    turn_state(page, "running")
    send_prompt(page, "drop me")
    send_prompt(page, "keep me")
    queued = page.locator("#prompt-queue [data-role=queued]")
    expect(queued).to_have_count(2)
    queued.filter(has=page.locator("textarea", has_text="drop me")).locator("[data-action=queue-remove]").click()
    expect(queued).to_have_count(1)
    expect(queued.locator("textarea")).to_have_value("keep me")

    expect(page.locator('[data-role="user-message"]')).to_have_text(["wait 2", "keep me"], timeout=20_000)
    turn_state(page, "idle")
    expect(queued).to_have_count(0)
    expect(page.locator("#prompt-queue .queue-head")).to_have_count(0)
    assert prompt_texts(server.received()) == ["wait 2", "keep me"]


def test_stop_pauses_the_queue_and_send_now_sends_the_chosen_prompt(start_server: ServerFactory, page: Page) -> None:
    server = start_server(agent=CONTROLS_AGENT)
    open_session(page, server)
    send_prompt(page, "wait 10")
    turn_state(page, "running")
    send_prompt(page, "after stop one")
    send_prompt(page, "after stop two")
    queued = page.locator("#prompt-queue [data-role=queued]")
    expect(queued).to_have_count(2)
    page.click('[data-action="cancel"]')
    turn_state(page, "idle")
    server.wait_received(lambda m: m.get("method") == "session/cancel")
    expect(page.locator('[data-role="notice"]')).to_contain_text("Stopped")
    page.wait_for_timeout(500)
    turn_state(page, "idle")
    expect(queued).to_have_count(2)
    assert prompt_texts(server.received()) == ["wait 10"], "a stopped turn must not start the next queued prompt"
    page.reload()  # what the server says about the queue (the live head is tested on its own below)
    expect(page.locator("#prompt-queue .queue-head")).to_contain_text("paused because you stopped the agent")

    queued.nth(1).locator("[data-action=queue-send]").click()  # "Send now" sends the one chosen, not the head
    expect(page.locator('[data-role="user-message"]')).to_have_text(["wait 10", "after stop two"])
    server.wait_received(lambda m: m.get("method") == "session/prompt" and "after stop two" in json.dumps(m))
    assert prompt_texts(server.received())[:2] == ["wait 10", "after stop two"]


def test_stop_shows_the_queue_as_paused_without_a_reload(start_server: ServerFactory, page: Page) -> None:
    server = start_server(agent=CONTROLS_AGENT)
    open_session(page, server)
    send_prompt(page, "wait 10")
    turn_state(page, "running")
    send_prompt(page, "after stop")
    head = page.locator("#prompt-queue .queue-head")
    expect(head).to_contain_text("sent when the agent finishes")
    page.keyboard.press("Escape")
    turn_state(page, "idle")
    expect(head).to_contain_text("paused", timeout=3_000)


# -- Following the output --------------------------------------------------------------------------


def test_page_follows_output_only_at_the_bottom(start_server: ServerFactory, page: Page) -> None:
    server = start_server()
    open_session(page, server)
    jump = page.locator("[data-action=jump-to-latest]")
    send_prompt(page, "stream 3000")
    expect(page.locator('[data-role="agent-message"]')).to_contain_text("w2999")
    turn_state(page, "idle")
    metrics = scroll_metrics(page)
    assert metrics["height"] > metrics["client"] + 1500, f"the page must be taller than the window: {metrics}"
    page.wait_for_function(at_bottom_js())
    expect(jump).to_be_hidden()

    send_prompt(page, "slow")
    turn_state(page, "running")
    expect(page.locator('[data-role="agent-message"]').last).to_contain_text("s3 ")
    # At the bottom the page follows: it grows by several lines and stays at its bottom.
    before = scroll_metrics(page)
    page.wait_for_function(
        f"() => document.scrollingElement.scrollHeight > {before['height'] + 60} && {at_bottom_js()}", timeout=20_000
    )
    expect(jump).to_be_hidden()

    page.evaluate("() => window.scrollBy(0, -400)")
    left = scroll_metrics(page)
    assert left["height"] - left["top"] - left["client"] >= 300, left
    expect(jump).to_be_visible()
    page.wait_for_function(f"() => document.scrollingElement.scrollHeight > {left['height'] + 60}", timeout=20_000)
    after = scroll_metrics(page)
    assert abs(after["top"] - left["top"]) <= 1, f"the page moved while the user read above: {left} -> {after}"
    expect(jump).to_be_visible()

    jump.click()
    page.wait_for_function(at_bottom_js())
    expect(jump).to_be_hidden()
    following = scroll_metrics(page)
    page.wait_for_function(
        f"() => document.scrollingElement.scrollHeight > {following['height'] + 60} && {at_bottom_js()}",
        timeout=20_000,
    )
    expect(jump).to_be_hidden()

    page.keyboard.press("Escape")
    turn_state(page, "idle")


# -- Title and usage -------------------------------------------------------------------------------


def test_title_and_usage_show_in_the_header(start_server: ServerFactory, page: Page) -> None:
    server = start_server(agent=CONTROLS_AGENT)
    open_session(page, server)
    title = page.locator("[data-role=title]")
    expect(title).not_to_have_text("Controls under test")
    expect(page.locator("[data-role=usage]")).to_have_count(0)
    send_prompt(page, "usage")
    expect(page.locator('[data-role="agent-message"]')).to_have_text("usage sent")
    expect(title).to_have_text("Controls under test")
    usage = page.locator("[data-role=usage]")
    expect(usage).to_contain_text("53k / 200k")
    expect(usage.locator("[data-role=cost]")).to_have_text("$0.42")
    expect(usage.locator("meter")).to_have_attribute("value", re.compile(r"^0\.265"))
    expect(page).to_have_title(re.compile("Controls under test"))

    page.reload()
    expect(title).to_have_text("Controls under test")
    expect(page.locator("[data-role=usage]")).to_contain_text("53k / 200k")
    expect(page.locator("[data-role=cost]")).to_have_text("$0.42")
    expect(page).to_have_title(re.compile("Controls under test"))


# -- Permission by key -----------------------------------------------------------------------------


def test_digit_key_answers_the_permission_outside_the_prompt_box(start_server: ServerFactory, page: Page) -> None:
    server = start_server()
    open_session(page, server)
    send_prompt(page, "permission")
    turn_state(page, "awaiting-permission")
    card = page.locator('[data-tool-call-id="edit-1"]')
    expect(card.locator("[data-option-id]")).to_have_count(4)
    expect(card.locator('[data-key="1"]')).to_have_attribute("data-option-id", "allow-once")

    prompt = page.locator("#prompt-input")
    prompt.click()
    page.keyboard.type("1")
    expect(prompt).to_have_value("1")
    page.wait_for_timeout(500)
    turn_state(page, "awaiting-permission")
    assert not [m for m in server.received() if "method" not in m and "outcome" in (m.get("result") or {})]

    page.evaluate("() => document.activeElement.blur()")
    page.keyboard.press("3")  # not the first option, so a test that only checks "answered" would not pass by luck
    message = server.wait_received(lambda m: "method" not in m and "outcome" in (m.get("result") or {}))
    assert message["result"] == {"outcome": {"outcome": "selected", "optionId": "reject-once"}}
    expect(page.locator('[data-role="agent-message"]')).to_have_text("answer: reject-once")
    turn_state(page, "idle")
    expect(prompt).to_have_value("1")


def test_key_1_answers_with_the_first_option(start_server: ServerFactory, page: Page) -> None:
    server = start_server()
    open_session(page, server)
    send_prompt(page, "permission")
    turn_state(page, "awaiting-permission")
    page.locator("[data-role=title]").click()  # focus out of the prompt box
    page.keyboard.press("1")
    message = server.wait_received(lambda m: "method" not in m and "outcome" in (m.get("result") or {}))
    assert message["result"] == {"outcome": {"outcome": "selected", "optionId": "allow-once"}}
    expect(page.locator('[data-role="agent-message"]')).to_have_text("answer: allow-once")
    expect(page.locator('[data-tool-call-id="edit-1"]')).to_have_attribute("data-status", "completed")
    turn_state(page, "idle")


def test_alt_digit_answers_from_inside_the_prompt_box(start_server: ServerFactory, page: Page) -> None:
    server = start_server()
    open_session(page, server)
    send_prompt(page, "permission")
    turn_state(page, "awaiting-permission")
    prompt = page.locator("#prompt-input")
    prompt.click()
    page.keyboard.type("draft")
    page.keyboard.press("Alt+2")
    message = server.wait_received(lambda m: "method" not in m and "outcome" in (m.get("result") or {}))
    assert message["result"] == {"outcome": {"outcome": "selected", "optionId": "allow-always"}}
    expect(page.locator('[data-role="agent-message"]')).to_have_text("answer: allow-always")
    expect(prompt).to_have_value("draft")


def test_prompts_sent_in_quick_succession_all_reach_the_agent(start_server: ServerFactory, page: Page) -> None:
    """The box clears itself and takes a new nonce as it sends: a second prompt typed at once is neither
    dropped as a replay nor wiped by a form coming back from the server."""
    server = start_server(agent=CONTROLS_AGENT)
    open_session(page, server)
    box = page.locator("#prompt-input")
    for text in ("wait 1", "quick one", "quick two"):
        box.fill(text)
        box.press("Enter")
    expect(page.locator("[data-role=user-message]")).to_have_count(3, timeout=20_000)
    turn_state(page, "idle", timeout=20_000)
    assert prompt_texts(server.received()) == ["wait 1", "quick one", "quick two"]
