"""The prompt box and the page around it in a real browser: attachments, @-mentions, the tab title and
notifications while the tab is hidden, the Markdown export, copying a code block."""

from __future__ import annotations

import base64
import re
import struct
import sys
import zlib
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from playwright.sync_api import Browser, Page, expect

from tests.support.browser import open_session, send_prompt
from tests.support.servers import AGENTS, SCRIPTED_AGENT, ServerFactory
from webclient.session.uploads import MAX_UPLOAD_BYTES

CONTROLS_AGENT = f"{sys.executable} {AGENTS / 'controls_agent.py'}"


def tiny_png() -> bytes:
    """A valid 2×1 PNG."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    pixels = zlib.compress(b"\x00\xff\x00\x00\x00\x00\xff")
    ihdr = struct.pack(">IIBBBBB", 2, 1, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")


def last_prompt(received: list[dict[str, Any]]) -> list[dict[str, Any]]:
    prompts = [m["params"]["prompt"] for m in received if m.get("method") == "session/prompt"]
    assert prompts, "the agent received no prompt"
    result: list[dict[str, Any]] = prompts[-1]
    return result


def test_attached_image_and_text_file_reach_the_agent(start_server: ServerFactory, page: Page) -> None:
    server = start_server(agent=CONTROLS_AGENT)
    open_session(page, server)
    png = tiny_png()
    page.set_input_files(
        "#attach-input",
        [
            {"name": "dot.png", "mimeType": "image/png", "buffer": png},
            {"name": "notes.txt", "mimeType": "text/plain", "buffer": b"line one\nline <two>\n"},
        ],
    )
    chips = page.locator("#composer-attachments [data-role=attachment]")
    expect(chips).to_have_count(2)
    expect(chips.nth(0)).to_contain_text("dot.png")
    expect(chips.nth(1)).to_contain_text("notes.txt")
    page.fill("#prompt-input", "look at these")
    page.press("#prompt-input", "Enter")
    expect(chips).to_have_count(0)

    user = page.locator('[data-role="user-message"]')
    expect(user.locator("img.content-image")).to_have_count(1)
    expect(user.locator("[data-role=embedded-resource]")).to_contain_text("notes.txt")
    expect(page.locator('[data-role="agent-message"]')).to_contain_text("got:")
    prompt = last_prompt(server.received())
    assert [block["type"] for block in prompt] == ["text", "image", "resource"]
    assert prompt[0]["text"] == "look at these"
    assert prompt[1]["mimeType"] == "image/png" and base64.b64decode(prompt[1]["data"]) == png
    assert prompt[2]["resource"]["text"] == "line one\nline <two>\n"
    assert prompt[2]["resource"]["uri"].endswith("/notes.txt")

    # The embedded file opens in the side panel.
    user.locator("[data-action=open-resource]").click()
    expect(page.locator("#side-panel-body")).to_contain_text("line <two>")


def test_a_kind_the_agent_does_not_accept_is_refused_with_a_reason(start_server: ServerFactory, page: Page) -> None:
    server = start_server(agent=CONTROLS_AGENT)  # accepts images and embedded files, not audio
    open_session(page, server)
    page.set_input_files("#attach-input", [{"name": "hello.wav", "mimeType": "audio/wav", "buffer": b"RIFF...."}])
    expect(page.locator("#composer-error")).to_have_text("This agent does not accept audio in prompts.")
    expect(page.locator("#composer-attachments .chip")).to_have_count(0)


def test_the_prompt_box_classifies_a_file_as_the_server_does(start_server: ServerFactory, page: Page) -> None:
    server = start_server(agent=CONTROLS_AGENT)  # accepts images and embedded files, not audio
    open_session(page, server)
    # AAC is not one of the types sent as audio (webclient.session.uploads.AUDIO_TYPES): it goes as an embedded file.
    page.set_input_files("#attach-input", [{"name": "clip.aac", "mimeType": "audio/aac", "buffer": b"\xff\xf1\x50"}])
    chip = page.locator("#composer-attachments [data-role=attachment]")
    expect(chip).to_have_count(1)
    expect(chip).to_have_attribute("data-kind", "binary")
    expect(page.locator("#composer-error")).to_be_hidden()


def test_at_mention_attaches_a_workspace_file_as_a_resource_link(start_server: ServerFactory, page: Page) -> None:
    server = start_server(agent=CONTROLS_AGENT)
    (server.workspace / "src").mkdir()
    (server.workspace / "src" / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (server.workspace / "README.md").write_text("# readme\n")
    open_session(page, server)
    box = page.locator("#prompt-input")
    box.press_sequentially("explain @cal")
    menu = page.locator("#mention-menu")
    expect(menu).to_be_visible()
    expect(menu.locator("li[role=option]")).to_have_count(1)
    expect(menu.locator("li[aria-selected=true]")).to_have_attribute("data-path", "src/calc.py")
    box.press("Enter")
    expect(menu).to_be_hidden()
    expect(box).to_have_value("explain @src/calc.py ")
    expect(page.locator("#composer-attachments [data-role=mention]")).to_contain_text("@src/calc.py")
    box.press("Enter")
    expect(page.locator('[data-role="agent-message"]')).to_contain_text("got:")

    prompt = last_prompt(server.received())
    expected_uri = (server.workspace / "src" / "calc.py").resolve().as_uri()
    assert prompt[0] == {"type": "text", "text": "explain @src/calc.py"}
    assert prompt[1] == {"type": "resource_link", "uri": expected_uri, "name": "src/calc.py"}
    link = page.locator('[data-role="user-message"] [data-role=resource-link] a')
    expect(link).to_have_text("@src/calc.py")
    link.click()
    expect(page.locator("#side-panel-body")).to_contain_text("return a + b")


def test_the_mention_list_comes_from_the_server_as_you_type(start_server: ServerFactory, page: Page) -> None:
    server = start_server(agent=CONTROLS_AGENT)
    (server.workspace / "src").mkdir()
    (server.workspace / "src" / "calc.py").write_text("x\n")
    (server.workspace / "src" / "cache.py").write_text("x\n")
    (server.workspace / "README.md").write_text("# readme\n")
    open_session(page, server)
    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url) if "/mentions" in request.url else None)
    box = page.locator("#prompt-input")
    menu = page.locator("#mention-menu")
    options = menu.locator("li[role=option]")

    box.press_sequentially("look at @ca")
    expect(options).to_have_count(2)
    expect(menu.locator("li[aria-selected=true]")).to_have_attribute("data-path", "src/calc.py")
    expect(box).to_have_attribute("aria-expanded", "true")
    expect(box).to_have_attribute("aria-activedescendant", "mention-1")
    box.press("ArrowDown")
    expect(box).to_have_attribute("aria-activedescendant", "mention-2")
    box.press_sequentially("l")
    expect(options).to_have_count(1)
    expect(options).to_have_attribute("data-path", "src/calc.py")
    box.press_sequentially("zzz")  # nothing matches: the menu goes
    expect(menu).to_be_hidden()
    expect(box).to_have_attribute("aria-expanded", "false")
    box.press_sequentially(" and @rdm")  # the server's own matching: the letters in order anywhere in the path
    expect(options).to_have_count(1)
    expect(options).to_have_attribute("data-path", "README.md")
    box.press_sequentially(" ")
    expect(menu).to_be_hidden()

    # Only the word after "@" goes to the server, never the rest of the prompt.
    queries = [parse_qs(urlsplit(url).query) for url in asked]
    assert queries and all(set(query) == {"q"} for query in queries), asked
    assert queries[-1] == {"q": ["rdm"]}
    assert {"q": ["cal"]} in queries and {"q": ["calzzz"]} in queries


DROP_FILES = """([selector, files]) => {
  const transfer = new DataTransfer();
  for (const [name, type, text] of files) transfer.items.add(new File([text], name, { type: type }));
  const target = document.querySelector(selector);
  if (selector === "#prompt-input") {
    target.dispatchEvent(new ClipboardEvent("paste", { clipboardData: transfer, bubbles: true, cancelable: true }));
  } else {
    target.dispatchEvent(new DragEvent("dragover", { dataTransfer: transfer, bubbles: true, cancelable: true }));
    target.dispatchEvent(new DragEvent("drop", { dataTransfer: transfer, bubbles: true, cancelable: true }));
  }
}"""


def test_dropped_and_pasted_files_become_chips_in_order(start_server: ServerFactory, page: Page) -> None:
    server = start_server(agent=CONTROLS_AGENT)  # accepts images and embedded files, not audio
    open_session(page, server)
    page.evaluate(DROP_FILES, ["#composer", [["hello.wav", "audio/wav", "RIFF"]]])
    expect(page.locator("#composer-error")).to_have_text("This agent does not accept audio in prompts.")
    files = [["a.txt", "text/plain", "first"], ["b.txt", "text/plain", "second"]]
    page.evaluate(DROP_FILES, ["#composer", files])
    chips = page.locator("#composer-attachments [data-role=attachment]")
    expect(chips).to_have_count(2)
    expect(chips.nth(0)).to_contain_text("a.txt")
    expect(chips.nth(1)).to_contain_text("b.txt")
    expect(page.locator("#composer-error")).to_be_hidden()  # a file that went through clears the complaint
    expect(page.locator("#composer")).not_to_have_class(re.compile(r"\bdragging\b"))
    page.evaluate(DROP_FILES, ["#prompt-input", [["c.txt", "text/plain", "third"]]])
    expect(chips).to_have_count(3)
    expect(chips.nth(2)).to_contain_text("c.txt")
    chips.nth(1).locator("[data-action=remove-chip]").click()
    expect(chips).to_have_count(2)
    page.fill("#prompt-input", "files")
    page.press("#prompt-input", "Enter")
    expect(chips).to_have_count(0)
    expect(page.locator('[data-role="agent-message"]')).to_contain_text("got:")
    prompt = last_prompt(server.received())
    assert [block["resource"]["text"] for block in prompt[1:]] == ["first", "third"]


def test_a_file_over_the_limit_is_refused_with_a_reason(start_server: ServerFactory, page: Page) -> None:
    server = start_server(agent=CONTROLS_AGENT)
    open_session(page, server)
    just_over, far_over = MAX_UPLOAD_BYTES + 1, MAX_UPLOAD_BYTES + 1024 * 1024
    refusals = [
        (just_over, f"The file is too large ({just_over:,} bytes; at most {MAX_UPLOAD_BYTES:,})."),  # refused whole
        (far_over, f"The file is too large (at most {MAX_UPLOAD_BYTES:,} bytes)."),  # stopped while it comes
    ]
    for size, reason in refusals:
        page.set_input_files("#attach-input", [{"name": "big.txt", "mimeType": "text/plain", "buffer": b"x" * size}])
        expect(page.locator("#composer-error")).to_have_text(reason)
        expect(page.locator("#composer-attachments .chip")).to_have_count(0)


HIDDEN_TAB = """
(() => {
  let hidden = false;
  Object.defineProperty(document, "hidden", { configurable: true, get: () => hidden });
  window.__setHidden = (value) => { hidden = value; document.dispatchEvent(new Event("visibilitychange")); };
  window.__notifications = [];
  const Real = window.Notification;
  window.Notification = function (title, options) {
    window.__notifications.push({ title: title, body: options && options.body });
    return { close() {} };
  };
  window.Notification.permission = "granted";
  window.Notification.requestPermission = () => Promise.resolve("granted");
  localStorage.setItem("acp-webclient.notify", "on");
})();
"""


def test_a_hidden_tab_says_the_agent_waits_and_notifies(start_server: ServerFactory, browser: Browser) -> None:
    server = start_server(agent=SCRIPTED_AGENT)
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    try:
        page = context.new_page()
        page.add_init_script(HIDDEN_TAB)
        open_session(page, server)
        expect(page.locator("[data-action=notify]")).to_have_text("Notifications on")
        page.evaluate("window.__setHidden(true)")
        page.fill("#prompt-input", "permission")
        page.press("#prompt-input", "Enter")
        expect(page.locator("#session")).to_have_attribute("data-turn-state", "awaiting-permission")
        title = "Permission · ACP web client"  # the session is titled by its first prompt
        expect(page).to_have_title("● Waiting for you — " + title)
        notifications = page.evaluate("window.__notifications")
        assert [n["body"] for n in notifications] == ["The agent asks for your permission."]
        page.evaluate("window.__setHidden(false)")
        expect(page).to_have_title(title)
    finally:
        context.close()


def test_export_downloads_the_session_as_markdown(start_server: ServerFactory, page: Page) -> None:
    server = start_server(agent=SCRIPTED_AGENT)
    open_session(page, server)
    page.fill("#prompt-input", "stream 5")
    page.press("#prompt-input", "Enter")
    expect(page.locator("#session")).to_have_attribute("data-turn-state", "idle")
    expect(page.locator('[data-role="agent-message"]')).to_contain_text("w4")
    with page.expect_download() as download:
        page.click("[data-action=export]")
    assert download.value.suggested_filename.endswith(".md")
    text = Path(download.value.path()).read_text(encoding="utf-8")
    assert "## You" in text and "stream 5" in text and "w0 w1 w2 w3 w4" in text


def test_a_code_block_copies_its_code(start_server: ServerFactory, browser: Browser) -> None:
    server = start_server(agent=CONTROLS_AGENT)
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    try:
        context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server.url)
        page = context.new_page()
        open_session(page, server)
        page.fill("#prompt-input", "code")
        page.press("#prompt-input", "Enter")
        block = page.locator('[data-role="agent-message"] pre')
        expect(block).to_contain_text("print('hi')")
        block.hover()
        block.locator("[data-action=copy-code]").click()
        expect(block.locator("[data-action=copy-code]")).to_have_attribute("data-label", "Copied")
        expect(block).to_have_text("print('hi')")  # the button's label is not part of the message's text
        assert page.evaluate("navigator.clipboard.readText()") == "print('hi')\n"
    finally:
        context.close()


def test_a_prompt_over_the_servers_bound_stays_in_the_box_with_the_reason(
    start_server: ServerFactory, page: Page
) -> None:
    server = start_server(WEBCLIENT_MAX_PROMPT_MB="0.01")  # 10,485 bytes
    open_session(page, server)
    send_prompt(page, "x" * 20_000)
    error = page.locator("#composer-error")
    expect(error).to_be_visible()
    expect(error).to_contain_text("WEBCLIENT_MAX_PROMPT_MB")
    expect(page.locator("#prompt-input")).to_have_value("x" * 20_000)
    send_prompt(page, "hello")
    expect(page.locator('[data-role="agent-message"]')).to_have_text("ok")
    assert [m for m in server.received() if m.get("method") == "session/prompt"][0]["params"]["prompt"] == [
        {"type": "text", "text": "hello"}
    ]
