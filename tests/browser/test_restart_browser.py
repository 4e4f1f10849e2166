"""A page left open while the server dies and starts again (same address, same store) notices, shows the session
as the store rebuilt it, and Resume takes it up: in a real Chromium."""

from __future__ import annotations

import secrets
import signal
import subprocess
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.support.browser import open_session, send_prompt
from tests.support.servers import Server, free_port, launch_server, stop_server


def test_an_open_page_shows_the_rebuilt_session_after_a_restart_and_resumes_it(page: Page, tmp_path: Path) -> None:
    port, token = free_port(), secrets.token_urlsafe(16)
    env = {"DEMO_AGENT_SPEED": "0", "WEBCLIENT_DATA_DIR": str(tmp_path / "data")}

    def start() -> Server:
        return launch_server(port, token, tmp_path / "received.jsonl", tmp_path, [], env, subprocess.DEVNULL)

    refused: list[str] = []  # what the page's CSP refused (htmx settling a style attribute JS had set, once)
    page.on("console", lambda message: refused.append(message.text) if "Content Security" in message.text else None)
    server = start()
    try:
        open_session(page, server)
        send_prompt(page, "edit")
        expect(page.locator('[data-role="permission"][data-state="pending"]')).to_be_visible()
        server.process.send_signal(signal.SIGKILL)
        server.process.wait()
        stop_server(server)
        expect(page.locator("#session")).not_to_have_attribute("data-connection", "open")

        server = start()
        question = page.locator('[data-role="permission"]')
        expect(question).to_have_attribute("data-state", "interrupted", timeout=40_000)
        expect(question).to_have_text("Not answered: the server restarted.")
        expect(page.locator("#session-status")).to_have_attribute("data-turn-state", "ended")
        expect(page.locator('[data-role="turn-state"]')).to_have_text("Stopped")

        page.click('[data-action="resume"]')
        expect(page.locator("#session")).to_have_attribute("data-turn-state", "idle", timeout=30_000)
        send_prompt(page, "markdown")
        expect(page.locator('[data-role="agent-message"]').last).to_contain_text("That's it", timeout=30_000)
        assert refused == []
    finally:
        stop_server(server)
