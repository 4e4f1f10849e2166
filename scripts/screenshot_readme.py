"""Take the README's screenshots of the demo agent that no other script takes, each made again from a real server:
``session-light``, ``terminal-dark``, ``conversation-light``, ``conversation-dark``, ``subagent-light``,
``history-light`` and ``restarted-dark`` (docs/images/NAME.png). 1280 wide, in the theme the name says.

Run from the repository's root, with Chromium installed (``scripts/ensure-chromium``):
``python scripts/screenshot_readme.py [NAME ...]`` takes all of them, or only those named. Each scenario starts a
server of its own with the demo agent (tests/support/servers.py), so that one's sessions never show in another's.
"""

from __future__ import annotations

import contextlib
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Literal

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from playwright.sync_api import Browser, Page, expect, sync_playwright  # noqa: E402

from tests.support.restarts import journalled  # noqa: E402
from tests.support.servers import CHROMIUM, CHROMIUM_ARGS, Server, free_port, launch_server, stop_server  # noqa: E402

IMAGES = ROOT / "docs" / "images"
PROMPT = '[data-role="prompt"] textarea[name="prompt"]'


@contextlib.contextmanager
def demo_server(speed: str = "0", data: Path | None = None, port: int = 0, token: str = "") -> Iterator[Server]:
    """A server with the demo agent at ``speed`` (``DEMO_AGENT_SPEED``: 0 = no delays), its store in ``data`` if
    given (kept when it stops), stopped at the end."""
    folder = Path(tempfile.mkdtemp(prefix="webclient-shot-"))
    env = {"DEMO_AGENT_SPEED": speed}
    if data is not None:
        env["WEBCLIENT_DATA_DIR"] = str(data)
    server = launch_server(
        port or free_port(), token or secrets.token_urlsafe(16), folder / "rec.jsonl", folder, [], env, subprocess.PIPE
    )
    try:
        yield server
    finally:
        if server.process.poll() is None:
            stop_server(server)
        shutil.rmtree(folder, ignore_errors=True)


def new_page(browser: Browser, theme: Literal["light", "dark"], height: int = 860) -> Page:
    context = browser.new_context(viewport={"width": 1280, "height": height}, color_scheme=theme, device_scale_factor=1)
    page = context.new_page()
    page.set_default_timeout(30_000)
    return page


def open_session(page: Page, server: Server) -> None:
    page.goto(server.sign_in_url("/"))
    page.click('[data-action="new-session"][data-agent="demo"]')
    expect(page.locator("#session")).to_have_attribute("data-agent-state", "ready")
    expect(page.locator("#session")).to_have_attribute("data-connection", "open")


def send(page: Page, text: str) -> None:
    page.fill(PROMPT, text)
    page.keyboard.press("Enter")


def run_prompts(page: Page, prompts: list[str]) -> None:
    """Send each prompt once the one before has finished, allowing what the agent asks to do."""
    status = page.locator("#session-status")
    pending = page.locator('[data-role="permission"][data-state="pending"] [data-option-id]')
    for text in prompts:
        turns = int(status.get_attribute("data-turns") or 0)
        send(page, text)
        expect(status).to_have_attribute("data-turns", str(turns + 1))  # begun: else "idle" is the turn before
        while status.get_attribute("data-turn-state") != "idle" or pending.count():
            if pending.count():
                pending.first.click()
            page.wait_for_timeout(200)


def save(page: Page, name: str) -> None:
    page.wait_for_timeout(600)  # the last swaps settled and the scroll done
    IMAGES.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(IMAGES / f"{name}.png"))
    print(IMAGES / f"{name}.png")


def session_light(browser: Browser) -> None:
    """``edit`` waits for permission: the card with its diff, its answers and "Or always allow as your rule", and
    the file it would change open in the side panel at the line."""
    with demo_server() as server:
        page = new_page(browser, "light")
        open_session(page, server)
        send(page, "edit")
        card = page.locator('[data-role="permission"][data-state="pending"]')
        expect(card.locator('[data-role="always"]')).to_be_visible()
        page.locator('[data-role="tool-call"] a.location').first.click()
        expect(page.locator("#side-panel-body")).to_contain_text("class RunningTotal")
        card.scroll_into_view_if_needed()
        save(page, "session-light")


def terminal_dark(browser: Browser) -> None:
    """``run``: the sample project's tests in a terminal of the client, then the terminal the agent only reports in
    ``_meta``, caught while it streams (the agent slowed down, a chunk every second or so)."""
    with demo_server(speed="8") as server:
        page = new_page(browser, "dark")
        open_session(page, server)
        send(page, "run")
        expect(page.locator('[data-role="terminal"]').first).to_have_attribute("data-state", "exited", timeout=60_000)
        reported = page.locator('[data-role="tool-call"]', has_text="reported by the agent")
        expect(reported).to_contain_text("src/calculator.py", timeout=60_000)
        save(page, "terminal-dark")


def conversation_light(browser: Browser) -> None:
    """``plan`` nearly done (the plan kept above the prompt box, context use and cost in the header), and ``@calc``
    typed in the prompt box offering the workspace's files."""
    with demo_server(speed="6") as server:  # a step every two seconds: time to type while it works
        page = new_page(browser, "light")
        open_session(page, server)
        run_prompts(page, ["help"])  # a turn before: the header shows context use and cost
        send(page, "plan")
        expect(page.locator('[data-role="plan-progress"]')).to_contain_text("3 of 4 done", timeout=60_000)
        page.click(PROMPT)
        page.keyboard.type("explain the @calc", delay=40)
        expect(page.locator("#mention-menu")).to_be_visible()
        expect(page.locator("#mention-menu")).to_contain_text("calculator.py")
        save(page, "conversation-light")


def conversation_dark(browser: Browser) -> None:
    """A long Markdown answer, then ``slow`` still streaming (caught three quarters through, the agent at half its
    speed), and ``/m`` typed: the menu of the agent's commands."""
    with demo_server(speed="2") as server:
        page = new_page(browser, "dark", height=1000)  # room for both answers above the menu
        open_session(page, server)
        run_prompts(page, ["markdown"])
        send(page, "slow")
        # The page keeps to the thread's end, which the menu covers: the answer's start shows once it is long.
        expect(page.locator('[data-role="agent-message"]').last).to_contain_text("Cancelling a turn", timeout=60_000)
        page.click(PROMPT)
        page.keyboard.type("/m", delay=30)
        expect(page.locator("#command-menu")).to_be_visible()
        save(page, "conversation-dark")


def subagent_light(browser: Browser) -> None:
    """``subagent``: the Task card with the subagent nested in it (its prompt, its tool calls, its reply)."""
    with demo_server() as server:
        page = new_page(browser, "light", height=1100)
        open_session(page, server)
        run_prompts(page, ["subagent"])
        page.locator('[data-role="tool-call"]', has_text="Explorer").first.scroll_into_view_if_needed()
        page.evaluate("document.scrollingElement.scrollTo(0, document.scrollingElement.scrollHeight)")
        save(page, "subagent-light")


def history_light(browser: Browser) -> None:
    """The index after a search for "divide" among three finished sessions."""
    with demo_server() as server:
        page = new_page(browser, "light", height=1000)  # all three sessions under the links of the header
        for prompts in (["plan", "edit"], ["tour"], ["markdown"]):
            open_session(page, server)
            run_prompts(page, prompts)
        page.goto(server.sign_in_url("/?q=divide"))
        expect(page.locator("mark").first).to_be_visible()
        save(page, "history-light")


def restarted_dark(browser: Browser) -> None:
    """``tour`` finished, the server killed and started again on the same store: the session rebuilt from its
    journal, Stopped, with Resume."""
    data = Path(tempfile.mkdtemp(prefix="webclient-shot-data-"))
    port, token = free_port(), secrets.token_urlsafe(16)
    page = new_page(browser, "dark", height=800)
    with demo_server(data=data, port=port, token=token) as server:
        open_session(page, server)
        run_prompts(page, ["tour"])
        session_url = page.url
        journalled(data, "Summary")
        server.process.send_signal(signal.SIGKILL)
        server.process.wait()
        stop_server(server)
    with demo_server(data=data, port=port, token=token):
        page.goto(session_url)
        expect(page.locator('[data-role="turn-state"]')).to_have_text("Stopped")
        expect(page.locator('[data-action="resume"]')).to_be_visible()
        page.evaluate("document.scrollingElement.scrollTo(0, document.scrollingElement.scrollHeight)")
        save(page, "restarted-dark")
    shutil.rmtree(data, ignore_errors=True)


SHOTS: dict[str, Callable[[Browser], None]] = {
    "session-light": session_light,
    "terminal-dark": terminal_dark,
    "conversation-light": conversation_light,
    "conversation-dark": conversation_dark,
    "subagent-light": subagent_light,
    "history-light": history_light,
    "restarted-dark": restarted_dark,
}


def take(shots: dict[str, Callable[[Browser], None]], names: list[str]) -> None:
    """Take the screenshots ``names`` of ``shots`` (all of them when none is named) in one Chromium."""
    unknown = [name for name in names if name not in shots]
    if unknown:
        raise SystemExit(f"no such screenshot: {', '.join(unknown)} (there are {', '.join(shots)})")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for name in names or list(shots):
            shots[name](browser)
        browser.close()


if __name__ == "__main__":
    take(SHOTS, sys.argv[1:])
