"""Agents that misbehave (tests/agents/faulty_agent.py), seen from the page: a start that never ends, a sign-in
that never answers, noise on stdout, errors whose reason is in ``data``, huge lines, reused tool-call ids,
gemini's models, and an empty turn after a Stop."""

from __future__ import annotations

import functools
import re
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser import until_connected
from tests.support.servers import AGENTS, Server, ServerFactory

FAULTY_AGENT = f"{sys.executable} {AGENTS / 'faulty_agent.py'}"


def start(start_server: ServerFactory, fault: str, **env: str) -> Server:
    return start_server(agent=FAULTY_AGENT, FAULT=fault, WEBCLIENT_START_TIMEOUT="2", **env)


def new_session(page: Page, server: Server) -> None:
    page.goto(server.sign_in_url("/"))
    page.click('[data-action="new-session"]')


def turn_state(page: Page, state: str, timeout: float = 15_000) -> None:
    expect(page.locator("#session")).to_have_attribute("data-turn-state", state, timeout=timeout)


def send_prompt(page: Page, text: str) -> None:
    until_connected(page)
    nonce = page.locator("#prompt-nonce").input_value()
    page.fill("#prompt-input", text)
    page.keyboard.press("Enter")
    expect(page.locator("#prompt-nonce")).not_to_have_value(nonce)


def methods(server: Server, name: str) -> list[dict[str, Any]]:
    return [m for m in server.received() if m.get("method") == name]


# -- the start-up deadline --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fault", "step"), [("no-initialize", "initialize"), ("wrong-id", "initialize"), ("no-session", "session/new")]
)
def test_a_start_that_never_ends_names_its_step_and_retry_starts_afresh(
    start_server: ServerFactory, page: Page, tmp_path: Path, fault: str, step: str
) -> None:
    server = start(start_server, fault, FAULT_ONCE_FILE=str(tmp_path / f"once-{fault}"))
    new_session(page, server)
    pill = page.locator('[data-role="turn-state"]')
    expect(pill).to_contain_text("Starting agent…")
    expect(page.locator('[data-role="start-step"]')).to_have_text(step)
    expect(page.locator('[data-role="elapsed"]')).to_have_text(re.compile(r"^0:0[0-2]$"))
    failure = page.locator('[data-role="agent-failure"]')
    expect(failure).to_contain_text(f"The agent did not answer {step} within 2 s", timeout=10_000)
    notice = page.locator('[data-role="notice"]').last
    expect(notice).to_contain_text(f"The agent did not answer {step} within 2 s")
    expect(notice.locator("pre")).to_contain_text(f"faulty agent: starting with faults ['{fault}']")  # stderr
    if fault == "wrong-id":
        expect(failure).to_contain_text("(1 answer came with an id we never sent)")
    turn_state(page, "ended")
    page.click('[data-action="retry"]')
    turn_state(page, "idle")
    expect(pill).to_have_text("Ready")
    assert len(methods(server, "initialize")) == 2
    send_prompt(page, "say hello again")
    expect(page.locator('[data-role="agent-message"]').last).to_have_text("hello again")


def test_the_elapsed_time_counts_up_while_the_agent_starts(start_server: ServerFactory, page: Page) -> None:
    server = start_server(agent=FAULTY_AGENT, FAULT="no-initialize", WEBCLIENT_START_TIMEOUT="6")
    new_session(page, server)
    expect(page.locator('[data-role="elapsed"]')).to_have_text(re.compile(r"^0:0[3-5]$"), timeout=5_000)


# -- sign-in --------------------------------------------------------------------------------------------


def test_the_sign_in_screen_explains_each_method(start_server: ServerFactory, page: Page) -> None:
    server = start(start_server, "auth", FAULTY_SET_VAR="secret-value-never-shown")
    new_session(page, server)
    auth = page.locator('[data-role="auth"]')
    expect(auth).to_be_visible()
    turn_state(page, "auth-required")
    expect(page.locator('[data-role="auth-reason"]')).to_contain_text(
        "Authentication required: Gemini API key is missing or not configured."
    )
    # Only methods the client can do itself are buttons: an env_var one once its variables are set.
    assert page.locator("[data-auth-method]").all_text_contents() == [
        "Log in with Google",
        "Use Gemini API key",
        "Use a test token",
        "Key in the environment",
    ]
    expect(auth.locator('[data-auth-id="oauth"] .auth-description strong')).to_have_text("a browser")
    api_key = auth.locator('[data-auth-id="api-key"]')
    expect(api_key.locator('[data-env-var="GEMINI_API_KEY"]')).to_contain_text("not set in the server's environment")
    expect(api_key).to_contain_text("set it in the server's environment before starting the server")
    env = auth.locator('[data-auth-id="env"]')
    expect(env.locator('[data-env-var="FAULTY_SET_VAR"]')).to_contain_text("Faulty key")
    expect(env.locator('[data-env-var="FAULTY_SET_VAR"]')).to_contain_text("set in the server's environment now")
    expect(env.locator('[data-env-var="FAULTY_UNSET_VAR"]')).to_contain_text("optional")
    expect(env.locator('[data-env-var="FAULTY_UNSET_VAR"]')).to_contain_text("not set")
    assert "secret-value-never-shown" not in page.content()
    terminal = auth.locator('[data-auth-id="term"] [data-role="terminal-sign-in"]')
    expect(terminal).to_contain_text("faulty_agent.py --login")
    expect(terminal).to_contain_text("MODE='a b'")
    expect(auth.locator('[data-auth-id="qr"]')).to_contain_text("Scan the code on your phone")
    expect(auth.locator('[data-auth-id="qr"]')).to_contain_text("cannot sign in this way (qr-code)")
    # A method that fails says why, with the agent's data.
    page.click('[data-auth-method="api-key"]')
    expect(page.locator('[data-role="auth-error"]')).to_have_text(
        "Signing in with “Use Gemini API key” failed: Internal error: GEMINI_API_KEY is not set"
    )
    page.click('[data-auth-method="ok"]')
    turn_state(page, "idle")


def test_a_sign_in_that_never_answers_can_be_cancelled_and_never_blocks_the_page(
    start_server: ServerFactory, page: Page
) -> None:
    server = start(start_server, "auth")
    new_session(page, server)
    turn_state(page, "auth-required")
    # A prompt now is refused, visibly, not queued.
    send_prompt(page, "are you there")
    refused = page.locator('[data-role="notice"]').last
    expect(refused).to_contain_text("Not sent: sign in first")
    expect(refused).to_contain_text("are you there")
    expect(page.locator('[data-role="queued"]')).to_have_count(0)
    page.click('[data-auth-method="oauth"]')
    expect(page.locator('[data-role="turn-state"]')).to_contain_text("Signing in…")
    expect(page.locator('[data-role="signing-in"] [data-role="elapsed"]')).to_have_text("0:02", timeout=5_000)
    turn_state(page, "auth-required")
    page.click('[data-action="cancel-sign-in"]')
    expect(page.locator('[data-role="turn-state"]')).to_have_text("Sign-in needed")
    expect(page.locator('[data-role="auth-error"]')).to_have_text("Sign-in cancelled.")
    # Stop (Escape) gives up a sign-in too; then a working method still works.
    page.click('[data-auth-method="oauth"]')
    expect(page.locator('[data-role="turn-state"]')).to_contain_text("Signing in…")
    page.locator("body").press("Escape")
    expect(page.locator('[data-role="turn-state"]')).to_have_text("Sign-in needed")
    assert len(methods(server, "authenticate")) == 2
    page.click('[data-auth-method="ok"]')
    turn_state(page, "idle")
    send_prompt(page, "say signed in")
    expect(page.locator('[data-role="agent-message"]').last).to_have_text("signed in")


@pytest.mark.alone  # times or measures the server: one at a time
def test_end_works_while_a_sign_in_hangs(start_server: ServerFactory, page: Page) -> None:
    server = start(functools.partial(start_server, process=True), "auth")
    new_session(page, server)
    page.click('[data-auth-method="oauth"]')
    expect(page.locator('[data-role="turn-state"]')).to_contain_text("Signing in…")
    started = time.monotonic()
    page.click('[data-action="end-session"]')
    turn_state(page, "ended")
    assert time.monotonic() - started < 8
    # A sign-in left hanging in an open tab does not keep the server from stopping on SIGTERM.
    new_session(page, server)
    page.click('[data-auth-method="oauth"]')
    expect(page.locator('[data-role="turn-state"]')).to_contain_text("Signing in…")
    server.process.terminate()
    server.process.wait(timeout=10)


# -- what the agent writes on stdout ---------------------------------------------------------------------


def test_noise_on_stdout_is_never_answered_and_json_after_escape_codes_is_kept(
    start_server: ServerFactory, page: Page
) -> None:
    server = start(start_server, "garbage")
    new_session(page, server)
    turn_state(page, "idle")  # the initialize and session/new answers came behind ESC[?1049l
    send_prompt(page, "say hello through the noise")
    expect(page.locator('[data-role="agent-message"]').last).to_have_text("hello through the noise")
    turn_state(page, "idle")
    errors = [m for m in server.received() if "error" in m and "method" not in m]
    assert errors == [], "the client answered the agent's noise"
    with server.http() as client:
        log = client.get(page.url + "/log").text
    assert "Loaded cached credentials." in log


# -- the agent's reasons ---------------------------------------------------------------------------------


def test_errors_show_the_reason_in_their_data(start_server: ServerFactory, page: Page) -> None:
    server = start(start_server, "models")
    new_session(page, server)
    turn_state(page, "idle")
    send_prompt(page, "fail")
    notice = page.locator('[data-role="notice"]').last
    expect(notice).to_contain_text("The agent reported an error")
    expect(notice).to_contain_text("Internal error: OPENAI_API_KEY is not set")
    page.select_option('[data-control="mode"] select', "yolo")
    expect(page.locator('[data-role="notice"]').last).to_contain_text(
        "Internal error: Cannot enable privileged approval modes in an untrusted folder."
    )
    expect(page.locator('[data-control="mode"] select')).to_have_value("default")


def test_a_refused_setting_shows_the_agents_string_data(start_server: ServerFactory, page: Page) -> None:
    server = start(start_server, "settings")
    new_session(page, server)
    turn_state(page, "idle")
    page.select_option('[data-control="effort"] select', "high")
    expect(page.locator('[data-role="notice"]').last).to_contain_text("Internal error: effort is locked by policy")
    expect(page.locator('[data-control="effort"] select')).to_have_value("low")


# -- models ---------------------------------------------------------------------------------------------


def test_geminis_models_get_a_model_selector(start_server: ServerFactory, page: Page) -> None:
    server = start(start_server, "models")
    new_session(page, server)
    turn_state(page, "idle")
    select = page.locator('[data-control="model"] select')
    expect(select).to_have_value("gemini-2.5-pro")
    assert select.locator("option").all_text_contents() == ["Gemini 2.5 Pro", "Gemini 2.5 Flash", "Refused model"]
    select.select_option("gemini-2.5-flash")
    sent = server.wait_received(lambda m: m.get("method") == "session/set_model")
    assert sent["params"] == {"sessionId": "faulty-1", "modelId": "gemini-2.5-flash"}
    select.select_option("refuse-me")
    expect(page.locator('[data-role="notice"]').last).to_contain_text("The agent did not change the model")
    expect(page.locator('[data-role="notice"]').last).to_contain_text("Model refuse-me is not available")
    expect(select).to_have_value("gemini-2.5-flash")
    # A config option of category "model" wins: the agent's models are then not offered a second time.
    other = start(start_server, "models,model-option")
    page.goto(other.sign_in_url("/"))
    page.click('[data-action="new-session"]')
    turn_state(page, "idle")
    expect(page.locator('[data-control="mode"]')).to_have_count(0)  # config options win over modes, too
    expect(page.locator('[data-control="model"]')).to_contain_text("Model (option)")
    expect(page.locator("#model-select")).to_have_count(0)


# -- huge lines -----------------------------------------------------------------------------------------


def vm_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


@pytest.mark.alone  # times or measures the server: one at a time
def test_a_200_mib_line_is_dropped_as_it_streams(start_server: ServerFactory, page: Page) -> None:
    server = start_server(agent=FAULTY_AGENT, process=True)
    new_session(page, server)
    turn_state(page, "idle")
    before = vm_rss_mib(server.process.pid)
    send_prompt(page, "huge 200")
    peak = before
    notice = page.locator('[data-role="notice"]', has_text="more than 64 MiB")
    deadline = time.monotonic() + 60
    while notice.count() == 0 or page.locator('[data-role="agent-message"]', has_text="after huge").count() == 0:
        peak = max(peak, vm_rss_mib(server.process.pid))
        assert time.monotonic() < deadline, "the notice and the next message never came"
        time.sleep(0.05)
    expect(notice).to_contain_text("The agent sent a message of more than 64 MiB; it was dropped")
    turn_state(page, "idle")
    print(f"server VmRSS {before:.0f} MiB before, {peak:.0f} MiB at most while the 200 MiB line streamed")
    assert peak - before < 100, f"the server held {peak - before:.0f} MiB of a line it should drop"
    assert peak < 180
    send_prompt(page, "say still fine")
    expect(page.locator('[data-role="agent-message"]').last).to_have_text("still fine")


# -- tool-call ids reused, and what a Stop leaves -----------------------------------------------------------


def test_a_tool_call_id_reused_in_a_later_turn_gets_its_own_card(start_server: ServerFactory, page: Page) -> None:
    server = start_server(agent=FAULTY_AGENT)
    new_session(page, server)
    turn_state(page, "idle")
    send_prompt(page, "tool one")
    cards = page.locator('[data-tool-call-id="call_1"]')
    cards.first.locator('[data-option-id="allow"]').click()
    expect(cards.first).to_have_attribute("data-status", "completed")
    turn_state(page, "idle")
    send_prompt(page, "tool two")
    expect(cards).to_have_count(2)
    cards.nth(1).locator('[data-option-id="reject"]').click()
    expect(cards.nth(1)).to_have_attribute("data-status", "failed")
    turn_state(page, "idle")
    expect(cards.first).to_have_attribute("data-status", "completed")
    expect(cards.first).to_contain_text("You chose: Allow")
    expect(cards.first).to_contain_text("Edit (tool one)")
    expect(cards.nth(1)).to_contain_text("You chose: Reject")
    expect(cards.nth(1)).to_contain_text("Edit (tool two)")
    page.reload()
    expect(cards.first).to_contain_text("You chose: Allow")
    expect(cards.first).to_have_attribute("data-status", "completed")


def test_after_stop_the_plan_leaves_the_dock_and_an_empty_turn_is_explained(
    start_server: ServerFactory, page: Page
) -> None:
    server = start_server(agent=FAULTY_AGENT)
    new_session(page, server)
    turn_state(page, "idle")
    send_prompt(page, "plan")
    expect(page.locator("#plan-dock details")).to_be_visible()
    page.click('[data-action="cancel"]')
    turn_state(page, "idle")
    expect(page.locator("#plan-dock details")).to_have_count(0)
    plan = page.locator('[data-role="plan"]')
    expect(plan).to_have_attribute("data-stopped", "")
    expect(plan).to_contain_text("stopped")
    send_prompt(page, "are you still there")
    turn_state(page, "idle")
    expect(page.locator('[data-role="notice"]').last).to_have_text("The agent ended the turn without replying")
