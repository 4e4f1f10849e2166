"""The XSS corpus in a real Chromium: a hostile agent fills every surface, and nothing it sent runs.

The browser context bypasses the Content-Security-Policy on purpose: what is proved here is our escaping and
sanitising, not only the policy. ``alert``/``confirm``/``prompt``/``print``/``open`` are hooked, a
MutationObserver notes every hostile element or attribute that ever enters the document (even for a moment),
and every request, navigation, console message and page error is recorded. Then the page is audited and
every surface is checked to show the payloads as text, so a test that passes cannot be one that dropped them
(names, titles and paths with their invisible characters shown as markers, `webclient.render.text.reveal_plain`).
"""

from __future__ import annotations

import importlib.util
import json
import sys
from types import ModuleType
from typing import Any
from urllib.parse import urlsplit

from playwright.sync_api import Browser, BrowserContext, Page, expect

from tests.support.browser import send_prompt
from tests.support.html import parse, squash
from tests.support.servers import AGENTS, Server, ServerFactory
from tests.support.urls import at
from tests.support.xss_payloads import PAYLOADS, PRINTABLE, SINGLE_LINE
from webclient.render.markdown import render_markdown
from webclient.render.text import reveal_plain

AGENT_PATH = AGENTS / "xss_agent.py"
AGENT = f"{sys.executable} {AGENT_PATH}"
REGIONS = ("session", "thread", "composer", "session-status")
LONG = 60_000
SLOW = 20_000
"""Milliseconds for one round trip to the server (``expect`` waits only 5 s by default; CI machines are busy)."""

HOOKS = r"""
(() => {
  const calls = [];
  const seen = [];
  Object.defineProperty(window, "__calls", { value: calls });
  Object.defineProperty(window, "__seen", { value: seen });
  for (const name of ["alert", "confirm", "prompt", "print", "open"]) {
    const hook = function (...args) {
      calls.push(name + "(" + args.map(String).join(", ") + ")");
      return null;
    };
    Object.defineProperty(window, name, { value: hook, writable: false, configurable: false });
  }
  const violations = [];
  Object.defineProperty(window, "__violations", { value: violations });
  document.addEventListener("securitypolicyviolation", (e) => {
    violations.push(e.violatedDirective + " " + e.blockedURI);
  });
  const BAD_TAGS = ["IFRAME", "OBJECT", "EMBED", "FRAME", "FRAMESET", "BASE", "PORTAL", "svg", "math", "TEMPLATE"];
  const say = (e, what) => seen.push(e.tagName + " " + what.slice(0, 200));
  function note(el) {
    if (!(el instanceof Element)) return;
    for (const e of [el, ...el.querySelectorAll("*")]) {
      if (BAD_TAGS.includes(e.tagName)) say(e, "element");
      if (e.tagName === "SCRIPT" && !(e.src || "").startsWith(location.origin + "/static/")) say(e, e.outerHTML);
      for (const a of e.attributes) {
        const name = a.name.toLowerCase();
        if (/^(on|hx-on|data-hx-on)/.test(name)) say(e, name + "=" + a.value);
        const url = ["href", "src", "action", "formaction", "xlink:href", "data", "poster", "srcset"].includes(name);
        if (url && /^(javascript|vbscript):/i.test(a.value.replace(/[\x00-\x20]/g, ""))) say(e, name + "=" + a.value);
      }
    }
  }
  new MutationObserver((records) => {
    for (const r of records) {
      if (r.type === "attributes") note(r.target);
      r.addedNodes.forEach(note);
    }
  }).observe(document, { childList: true, subtree: true, attributes: true });
})();
"""

AUDIT = r"""
() => {
  const problems = [];
  const origin = location.origin;
  const HTMX = ["hx-get", "hx-post", "hx-target", "hx-swap", "hx-trigger", "hx-vals", "hx-ext", "hx-swap-oob",
                "hx-push-url", "hx-sync", "hx-history", "hx-params", "hx-encoding", "hx-headers", "hx-include",
                "hx-preserve", "ws-connect", "ws-send"];
  const URL_ATTRS = ["href", "src", "action", "formaction", "xlink:href", "poster", "data", "srcset", "background"];
  const INLINE = /^data:(image\/(png|jpeg|gif|webp|avif|bmp)|audio\/[a-z0-9.+-]+);base64,/;
  const NEVER = ["iframe", "object", "embed", "frame", "frameset", "base", "portal", "svg", "math", "template",
                 "style"];
  const html = (el) => el.outerHTML.slice(0, 200);
  for (const el of document.querySelectorAll("*")) {
    const tag = el.tagName.toLowerCase();
    const head = el.parentElement === document.head;
    const say = (what) => problems.push(what + " in <" + tag + ">: " + html(el));
    if (NEVER.includes(tag)) say("element");
    if (tag === "script" && (!el.src.startsWith(origin + "/static/") || !head || el.textContent.trim())) say("script");
    if (tag === "meta" && (!head || /refresh|content-security/i.test(el.httpEquiv))) say("meta");
    const ownLink = el.href && el.href.startsWith(origin + "/static/") && ["stylesheet", "icon"].includes(el.rel);
    if (tag === "link" && !ownLink) say("link");
    const action = el.getAttribute("action");  // not el.action: an input named "action" shadows it
    if (tag === "form" && action !== null && new URL(action, document.baseURI).origin !== origin) say("form");
    for (const a of el.attributes) {
      const name = a.name.toLowerCase();
      const value = a.value.slice(0, 200);
      if (name.startsWith("on")) say("handler " + name);
      if (/^(data-)?(hx|ws)-/.test(name)) {
        if (!HTMX.includes(name)) say("htmx attribute " + name);
        // Our own URLs only: a session's, the index for the history's search form (a GET of the list), or the
        // inbox's count in the index's link to it.
        const search = name === "hx-get" && a.value === "/" && el.matches("form[data-role=search]");
        const inbox = name === "hx-get" && a.value === "/inbox?part=count" && el.matches("a[data-role=inbox-link]");
        if ((name === "hx-get" || name === "hx-post") && !a.value.startsWith("/sessions/") && !search && !inbox) {
          say(name + " " + value);
        }
        // A denial's reason: its own card's reason box, by the id the page gave it.
        if (name === "hx-include" && !/^#entry-\d+-reason$/.test(a.value)) say("hx-include " + value);
        if (name === "hx-headers" && (el.id !== "attach-input" || !/^\{"X-CSRF-Token": "[0-9a-f]+"\}$/.test(a.value))) {
          say("hx-headers " + value);
        }
        if (name === "ws-connect" && new URL(a.value).host !== location.host) say("ws-connect " + value);
        if (name === "hx-vals") {
          let vals = null;
          try { vals = JSON.parse(a.value); } catch (e) { /* not JSON: htmx might evaluate it */ }
          if (!vals || typeof vals !== "object" || !/^[a-z_]+$/.test(vals.action)) say("hx-vals " + value);
        }
      }
      if (name === "style" && /url\(|expression|position|@import/i.test(a.value)) say("style " + value);
      if (URL_ATTRS.includes(name)) {
        let url;
        try { url = new URL(a.value, document.baseURI); } catch (e) { continue; }
        const inline = url.protocol === "data:" && INLINE.test(a.value) && ["img", "a", "audio"].includes(tag);
        if (!["http:", "https:", "mailto:"].includes(url.protocol) && !inline) say(url.protocol + " URL " + name);
        if (name !== "href" && url.protocol !== "data:" && url.origin !== origin) say("load from another origin");
      }
    }
  }
  const ids = new Map();
  for (const el of document.querySelectorAll("[id]")) ids.set(el.id, (ids.get(el.id) || 0) + 1);
  for (const [id, count] of ids) if (count > 1) problems.push("id " + JSON.stringify(id) + " x" + count);
  if (new URL(document.baseURI).origin !== origin) problems.push("base URI " + document.baseURI);
  const count = (id) => document.querySelectorAll('[id="' + id + '"]').length;
  return {
    problems,
    calls: [...window.__calls],
    seen: [...window.__seen],
    violations: [...window.__violations],
    xss: typeof window.__xss === "undefined" ? null : String(window.__xss),
    regions: Object.fromEntries(REGIONS.map((id) => [id, count(id)])),
  };
}
""".replace("REGIONS", json.dumps(REGIONS))


def load_agent() -> ModuleType:
    spec = importlib.util.spec_from_file_location("xss_agent_for_browser", AGENT_PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def norm(text: str | None) -> str:
    """Text compared as the HTML parser leaves it: no whitespace, NUL dropped (or U+FFFD in attributes)."""
    return squash((text or "").replace("\ufffd", ""))


def markdown_text(source: str) -> str:
    return norm(parse(render_markdown(source)).text)


class Watch:
    """Everything the page does besides what it shows: requests, navigations, console, errors, popups."""

    def __init__(self, context: BrowserContext, origin: str) -> None:
        self.origin = origin
        self.requests: list[tuple[str, str]] = []
        self.navigations: list[str] = []
        self.console: list[tuple[str, str, str]] = []
        self.errors: list[str] = []
        self.pages: list[Page] = []
        context.on("request", lambda request: self.requests.append((request.resource_type, request.url)))
        context.on("page", lambda page: self.pages.append(page))

    def page(self, page: Page) -> None:
        page.on("console", lambda m: self.console.append((m.type, m.text, str(m.location.get("url", "")))))
        page.on("pageerror", lambda error: self.errors.append(str(error)))
        page.on("framenavigated", lambda frame: self.navigations.append(frame.url))

    def problems(self) -> list[str]:
        """What went wrong."""
        problems = []
        for kind, url in self.requests:
            parts = urlsplit(url)
            same = f"{parts.scheme}://{parts.netloc}" in (self.origin, self.origin.replace("http", "ws", 1))
            if not same and not (parts.scheme == "data" and kind in ("image", "media")):
                problems.append(f"{kind} request to {url}")
        problems += [f"navigated to {url}" for url in self.navigations if not url.startswith(self.origin)]
        problems += [f"page error: {error}" for error in self.errors]
        for kind, text, where in self.console:
            # Relative image sources in the agent's Markdown (``![x](x)``) are fetched from our origin and 404.
            # An image whose base64 data is not base64 (the agent's ``data`` is a payload) fails to decode.
            explained = text.startswith("Failed to load resource") and (
                where.startswith(self.origin) or ("ERR_INVALID_URL" in text and where.startswith("data:image/"))
            )
            if kind == "error" and not explained:
                problems.append(f"console {kind}: {text} ({where})")
        if len(self.pages) > 1:
            problems.append(f"popups opened: {[p.url for p in self.pages[1:]]}")
        return problems


def audit(page: Page, where: str, regions: bool = True) -> list[str]:
    report: dict[str, Any] = page.evaluate(AUDIT)
    problems = [f"{where}: {p}" for p in report["problems"]]
    problems += [f"{where}: hooked call {c}" for c in report["calls"]]
    problems += [f"{where}: hostile markup entered the document: {s}" for s in report["seen"]]
    problems += [f"{where}: CSP violation (the policy is bypassed here): {v}" for v in report["violations"]]
    if report["xss"] is not None:
        problems.append(f"{where}: window.__xss = {report['xss']}")
    if regions and report["regions"] != dict.fromkeys(REGIONS, 1):
        problems.append(f"{where}: page regions {report['regions']}")
    return problems


def texts(page: Page, selector: str, inner: str = "") -> list[str]:
    """textContent of every ``selector`` (or of the ``inner`` elements within each, joined)."""
    return list(
        page.eval_on_selector_all(
            selector,
            "(els, inner) => els.map(e => inner ? [...e.querySelectorAll(inner)].map(x => x.textContent).join('') "
            ": e.textContent)",
            inner,
        )
    )


def card(page: Page, tool_call_id: str) -> dict[str, Any]:
    """What a tool call card shows, found by its (agent-chosen) id without building a selector from it."""
    found: dict[str, Any] | None = page.evaluate(
        """(id) => {
          const el = [...document.querySelectorAll('[data-role="tool-call"]')].find(e => e.dataset.toolCallId === id);
          if (!el) return null;
          const all = (sel) => [...el.querySelectorAll(sel)].map(x => x.textContent);
          const data = (sel, key) => [...el.querySelectorAll(sel)].map(x => x.dataset[key]);
          return {
            text: el.textContent,
            title: el.querySelector(".tool-title")?.textContent,
            kind: el.dataset.kind,
            status: el.dataset.status,
            locations: all(".locations code"),
            paths: all(".d-path"),
            code: all(".d-code"),
            options: [...el.querySelectorAll("[data-option-id]")].map(  // the name, without its shortcut key
              b => [...b.childNodes].filter(n => n.nodeName !== "KBD").map(n => n.textContent).join("")),
            option_ids: data("[data-option-id]", "optionId"),
            permission: el.querySelector(".permission")?.textContent,
            terminal: all('[data-role="terminal-output"]').join("\\n"),
            terminal_ids: data('[data-role="terminal"]', "terminalId"),
          };
        }""",
        tool_call_id,
    )
    assert found is not None, f"no tool call card {tool_call_id!r}"
    return found


def missing(expected: list[str], shown: list[str]) -> list[tuple[int, str, str]]:
    """(index, expected, shown) where the page shows something else than ``expected`` (normalised)."""
    if len(shown) != len(expected):
        return [(-1, f"{len(expected)} items", f"{len(shown)} items")]
    return [(i, e, s) for i, (e, s) in enumerate(zip(expected, shown, strict=True)) if norm(e) != norm(s)]


def open_hostile_session(page: Page, server: Server) -> str:
    page.goto(server.sign_in_url("/"))
    page.click('[data-action="new-session"]')
    expect(page.locator("#session")).to_have_attribute("data-turn-state", "idle", timeout=LONG)
    session_id = page.locator("#session").get_attribute("data-session-id")
    assert session_id
    return session_id


def new_context(browser: Browser) -> BrowserContext:
    context = browser.new_context(viewport={"width": 1300, "height": 1400}, bypass_csp=True)
    context.add_init_script(HOOKS)
    context.set_default_timeout(20_000)
    return context


def test_no_payload_from_any_surface_runs_script_and_all_of_them_show_as_text(
    start_server: ServerFactory, browser: Browser
) -> None:
    agent = load_agent()
    server = start_server(agent=AGENT)
    context = new_context(browser)
    watch = Watch(context, server.url)
    page = context.new_page()
    watch.page(page)
    problems: list[str] = []
    try:
        session_id = open_hostile_session(page, server)
        problems += audit(page, "new session")
        send_prompt(page, "go")
        expect(page.locator("#session")).to_have_attribute("data-turn-state", "awaiting-permission", timeout=LONG)
        permission = card(page, "perm-1")
        options = agent.permission_options()
        names = [reveal_plain(o["name"]) for o in options]
        problems += [f"option name {m}" for m in missing(names, permission["options"])]
        if permission["option_ids"] != [o["optionId"].replace("\x00", "\ufffd") for o in options]:
            problems.append(f"option ids differ: {permission['option_ids'][:3]}...")
        problems += audit(page, "awaiting permission")
        first = page.locator('[data-role="tool-call"][data-tool-call-id="perm-1"] [data-option-id]').first
        first.evaluate("button => button.scrollIntoView({block: 'center'})")  # clear of the sticky header and dock
        first.click()
        expect(page.locator("#session")).to_have_attribute("data-turn-state", "idle", timeout=LONG)
        expect(page.locator('[data-role="agent-message"]').last).to_contain_text("chosen:")
        answers = [
            m["result"] for m in server.received() if isinstance(m.get("result"), dict) and "outcome" in m["result"]
        ]
        assert answers == [{"outcome": {"outcome": "selected", "optionId": agent.FIRST_OPTION_ID}}]
        problems += audit(page, "after the turn")
        load_whole_thread(page)
        problems += check_thread(page, agent)
        problems += check_controls(page, agent)
        problems += side_panels(page, agent)
        problems += composer_menus(page, agent)
        page.reload()
        expect(page.locator('[data-role="agent-message"]').last).to_contain_text("chosen:")
        problems += audit(page, "reloaded")
        problems += other_pages(page, server.url, session_id)
        problems += audit(page, "the end", regions=False)
        problems += watch.problems()
    finally:
        context.close()
    problems = list(dict.fromkeys(problems))
    assert problems == [], "\n".join(problems)


def load_whole_thread(page: Page) -> None:
    """The page holds a window of the newest entries: "Show earlier" until it has them all."""
    for _ in range(100):
        button = page.locator('[data-action="show-earlier"]')
        if not button.count():
            return
        held = page.locator("#thread > :not(#thread-start)").count()
        # Its own intersection may have asked already, and the sticky top bar may cover it: the click event itself.
        button.dispatch_event("click")
        page.wait_for_function(f"document.querySelectorAll('#thread > :not(#thread-start)').length > {held}")
    raise AssertionError("the thread never ended")


def open_raw(page: Page) -> None:
    """Open every card's raw input and output: the page fetches them only then (web/pages/raw_parts.py)."""
    raw = '#thread [data-role="raw-input"], #thread [data-role="raw-output"]'
    page.evaluate("(raw) => document.querySelectorAll(raw).forEach(details => { details.open = true; })", raw)
    expect(page.locator(raw).locator("pre").filter(has_text="Loading…")).to_have_count(0)


def check_thread(page: Page, agent: ModuleType) -> list[str]:
    """Every surface of the thread shows its payloads as text."""
    problems = []
    n = len(PAYLOADS)
    messages = texts(page, '#thread [data-role="agent-message"]', ":scope > .md")
    problems += [f"agent message {m}" for m in missing([markdown_text(p) for p in PAYLOADS], messages[:n])]
    if norm(messages[n]) != markdown_text("\n\n".join(PAYLOADS)):
        problems.append("the streamed message differs from the Markdown of the whole corpus")
    thoughts = texts(page, '#thread [data-role="thought"]', "details > .md")
    problems += [f"thought {m}" for m in missing([markdown_text(p) for p in PAYLOADS], thoughts)]
    users = texts(page, '#thread [data-role="user-message"]', ".user-text")
    problems += [f"user message {m}" for m in missing(["go", *PAYLOADS], users)]
    open_raw(page)
    for i, payload in enumerate(PAYLOADS):
        shown = card(page, f"tc-{i}")
        if norm(shown["title"]) != norm(reveal_plain(payload)):
            problems.append(f"tool title {i}: {shown['title']!r} for {payload!r}")
        if norm(shown["kind"]) != norm(agent.p(i + 1)) or norm(shown["status"]) != norm(agent.p(i + 2)):
            problems.append(f"tool kind/status {i}: {shown['kind']!r} {shown['status']!r}")
        location = norm(reveal_plain(f"/tmp/xss/{agent.path_safe(i)}:1"))
        if not shown["locations"] or norm(shown["locations"][0]) != location:
            problems.append(f"tool location {i}: {shown['locations'][:1]!r} for {agent.path_safe(i)!r}")
        text = norm(shown["text"])
        for label, value in (
            ("text block", markdown_text(agent.p(i))),
            ("resource link description", norm(agent.p(i + 8))),
            ("resource mime type", norm(agent.p(i + 13))),
            ("unknown content type", norm(agent.p(i + 16))),
            ("raw input", norm(json.dumps(agent.raw_object(i), indent=2, ensure_ascii=False))),
            ("raw output", norm(json.dumps(agent.raw_object(i + 7), indent=2, ensure_ascii=False))),
        ):
            if value not in text:
                problems.append(f"tool call {i}: {label} not shown ({value[:80]!r})")
    for i in range(agent.DIFF_COUNT):
        shown = card(page, f"diff-{i}")
        name = SINGLE_LINE[i].replace("\x00", "")
        if i % 2 and [norm(p) for p in shown["paths"]] != [norm(reveal_plain(f"/tmp/xss/{name}"))]:
            problems.append(f"diff path {i}: {shown['paths']!r} for {name!r}")
        new_lines = SINGLE_LINE[i + 2 : i + 6]
        cells = {norm(c) for c in shown["code"]}
        problems += [f"diff {i} line not shown: {line!r}" for line in new_lines if norm(line) not in cells]
    cells = {norm(c) for c in card(page, "diff-all")["code"]}
    problems += [f"diff line not shown: {line!r}" for line in SINGLE_LINE if norm(line) not in cells]
    terminal = card(page, "term-meta")
    if terminal["terminal_ids"] != [agent.TERMINAL_ID]:
        problems.append(f"terminal id {terminal['terminal_ids']!r}")
    output = norm(terminal["terminal"])
    problems += [f"terminal output not shown: {line!r}" for line in PRINTABLE if norm(line) not in output]
    real = card(page, "term-real")
    output = norm(real["terminal"])
    problems += [f"real terminal output not shown: {line!r}" for line in PRINTABLE[:30] if norm(line) not in output]
    plan = texts(page, '#thread [data-role="plan"] .plan-text')
    problems += [f"plan entry {m}" for m in missing(PAYLOADS, plan)]
    priorities = texts(page, '#thread [data-role="plan"] .priority')
    expected = [reveal_plain(e["priority"]) for e in agent.plan_entries()]
    problems += [f"plan priority {m}" for m in missing(expected, priorities)]
    chosen = card(page, "perm-1")
    if norm(reveal_plain(agent.FIRST_OPTION_NAME)) not in norm(chosen["permission"]):
        problems.append(f"the chosen option is not shown: {chosen['permission']!r}")
    if norm(reveal_plain(agent.PERMISSION_TITLE)) != norm(chosen["title"]):
        problems.append(f"permission title {chosen['title']!r}")
    return problems


def check_controls(page: Page, agent: ModuleType) -> list[str]:
    """Header, selectors and the slash menu (still being built: checked where they exist)."""
    problems = []
    title = texts(page, '#session-status [data-role="title"], #session-status h1')
    if title and norm(title[0]) != norm(reveal_plain(agent.p(0))):
        problems.append(f"session title {title[0]!r}")
    heading = norm(" ".join(texts(page, "#session-status .heading")))
    for label, value in (("agent title", agent.p(1)), ("agent version", agent.p(2))):
        if norm(reveal_plain(value)) not in heading:
            problems.append(f"{label} not shown: {value!r}")
    names = texts(page, "#command-menu li .menu-name")
    if names:
        problems += [f"command {m}" for m in missing(["/" + reveal_plain(c["name"]) for c in agent.commands()], names)]
        descriptions = texts(page, "#command-menu li .menu-description")
        problems += [
            f"command description {m}" for m in missing([c["description"] for c in agent.commands()], descriptions)
        ]
    controls = norm(" ".join(texts(page, "#session-controls")))
    if page.locator("#session-controls select, #session-controls input").count():
        for option in agent.config_options():
            if option["type"] in ("select", "boolean") and norm(option["name"]) not in controls:
                problems.append(f"config option name not shown: {option['name']!r}")
        flat = agent.config_options()[0]["options"]
        problems += [f"config value name not shown: {o['name']!r}" for o in flat if norm(o["name"]) not in controls]
    return problems


def expand_all(page: Page) -> None:
    """Load every part of the side panel's file or diff that is hidden behind a "⋯ N lines" button."""
    buttons = page.locator("#side-panel-body button.d-expand")
    for _ in range(50):
        if not buttons.count():
            return
        buttons.first.click()
        page.wait_for_load_state("networkidle")
    raise AssertionError("the side panel keeps showing hidden lines")


def side_panels(page: Page, agent: ModuleType) -> list[str]:
    """Changes, a changed file's diff, a hostile file at a location, an embedded resource."""
    problems = []
    panel = page.locator("#side-panel-body")
    page.click('[data-action="show-changes"]')
    expect(panel.locator('[data-role="changes"]')).to_be_visible(timeout=SLOW)
    changes = norm(panel.text_content())
    if norm(agent.WRITTEN_NAME) not in changes:
        problems.append(f"Changes does not list {agent.WRITTEN_NAME!r}: {changes[:200]!r}")
    problems += audit(page, "Changes")
    links = panel.locator("li.change a")
    if links.count():
        links.first.click()
        expect(panel.locator('[data-role="change-diff"]')).to_be_visible(timeout=SLOW)
        expand_all(page)
        shown = {norm(c) for c in panel.locator(".d-code").all_text_contents()}
        problems += [f"change diff line not shown: {line!r}" for line in agent.FILE_LINES if norm(line) not in shown]
        problems += audit(page, "a change's diff")
    page.locator('[data-tool-call-id="write-1"] a.location').first.click()
    expect(panel.locator('[data-role="file-panel"]')).to_be_visible(timeout=SLOW)
    expand_all(page)
    shown = {norm(c) for c in panel.locator(".d-code").all_text_contents()}
    problems += [f"file line not shown: {line!r}" for line in agent.FILE_LINES if norm(line) not in shown]
    problems += audit(page, "the hostile file")
    opener = page.locator('[data-tool-call-id="tc-0"] [data-action="open-resource"]')
    if opener.count():
        opener.first.click()
        expect(panel.locator('[data-role="file-panel"]')).to_be_visible(timeout=SLOW)
        if norm(agent.p(12)) not in norm(panel.text_content()):
            problems.append(f"embedded resource text not shown: {agent.p(12)!r}")
        problems += audit(page, "an embedded resource")
    return problems


def composer_menus(page: Page, agent: ModuleType) -> list[str]:
    """The slash menu picks a hostile command; the @ menu lists the hostile file (where they exist)."""
    problems = []
    prompt = page.locator('[data-role="prompt"] textarea[name="prompt"]')
    menu = page.locator("#command-menu")
    if menu.count() and menu.locator("li").count():
        prompt.fill("")
        prompt.press_sequentially("/")
        expect(menu).to_be_visible(timeout=SLOW)
        page.keyboard.press("Enter")
        value = prompt.input_value()
        first = agent.commands()[0]["name"]
        if norm(value) != norm("/" + first):
            problems.append(f"picked command {value!r} for {first!r}")
        problems += audit(page, "a picked command")
    mentions = page.locator("#mention-menu")
    if mentions.count():
        prompt.fill("")
        prompt.press_sequentially("@")
        try:
            expect(mentions.locator("li").first).to_be_visible(timeout=SLOW)
        except AssertionError:
            problems.append(f"the @ menu did not open: {mentions.evaluate('m => m.outerHTML')[:300]!r}")
        else:
            if norm(agent.WRITTEN_NAME) not in norm(mentions.text_content()):
                problems.append("the @ menu does not list the hostile file")
            problems += audit(page, "the @ menu")
            item = mentions.locator("li", has_text="onerror").first
            if item.count():
                item.click()
                problems += audit(page, "a picked mention")
    prompt.fill("")
    return problems


def other_pages(page: Page, url: str, session_id: str) -> list[str]:
    """The protocol log (and one line of it opened), the index, and the export (when it exists)."""
    problems = []
    response = page.goto(at(url, "protocol_log", session_id=session_id))
    assert response is not None
    if response.ok and "html" in response.headers.get("content-type", ""):
        problems += audit(page, "protocol log", regions=False)
        text = page.locator("body").text_content() or ""
        if "<script>alert(1)</script>" not in text:
            problems.append("the protocol log does not show the payloads as text")
        rows = page.locator(".log-row summary")
        if rows.count():
            rows.nth(min(5, rows.count() - 1)).click()
            page.wait_for_timeout(300)
            problems += audit(page, "a protocol log line", regions=False)
        stderr = page.locator('[data-role="stderr"] summary')
        if stderr.count():
            stderr.click()
            if "<script>alert(1)</script>" not in (page.locator('[data-role="stderr"]').text_content() or ""):
                problems.append("the agent's stderr is not shown as text")
    page.goto(url + "/")
    problems += audit(page, "index", regions=False)
    if norm(PAYLOADS[0]) not in norm(page.locator(".session-list").text_content()):
        problems.append("the index does not show the session title as text")
    export = page.request.get(at(url, "export", session_id=session_id))
    if export.status != 404:
        kind = export.headers.get("content-type", "")
        if "html" in kind or "javascript" in kind or "svg" in kind:
            problems.append(f"the export is served as {kind}")
        if export.headers.get("x-content-type-options") != "nosniff":
            problems.append("the export may be sniffed (no nosniff)")
        if export.ok and "<script>alert(1)</script>" not in export.text():
            problems.append("the export leaves the payloads out")
    return problems


def test_nul_in_paths_does_not_break_the_page(start_server: ServerFactory, browser: Browser) -> None:
    """A NUL in a location path, a ``file:`` link (``%00``) or a diff path: the page still renders and updates."""
    server = start_server(agent=AGENT)
    context = new_context(browser)
    page = context.new_page()
    try:
        open_hostile_session(page, server)
        send_prompt(page, "nul-paths")
        expect(page.locator('[data-role="agent-message"]').last).to_have_text("after nul-paths", timeout=20_000)
        expect(page.locator('[data-tool-call-id="nul-1"] .tool-title')).to_have_text("NUL in paths")
        assert audit(page, "NUL paths") == []
        assert page.request.get(page.url).ok
    finally:
        context.close()


def test_a_lone_surrogate_does_not_break_the_page(start_server: ServerFactory, browser: Browser) -> None:
    """JSON may carry ``\\ud800`` (valid JSON, not encodable as UTF-8): shown replaced, the page keeps working."""
    server = start_server(agent=AGENT)
    context = new_context(browser)
    page = context.new_page()
    try:
        open_hostile_session(page, server)
        send_prompt(page, "surrogate")
        expect(page.locator('[data-role="agent-message"]').last).to_have_text("after surrogate", timeout=20_000)
        expect(page.locator('[data-role="agent-message"]').first).to_contain_text("broken")
        assert audit(page, "lone surrogate") == []
        assert page.request.get(page.url).ok
    finally:
        context.close()


def test_hostile_auth_methods_and_sign_in_errors_show_as_text(start_server: ServerFactory, browser: Browser) -> None:
    server = start_server(agent=AGENT, AUTH_REQUIRED="1")
    agent = load_agent()
    context = new_context(browser)
    page = context.new_page()
    try:
        page.goto(server.sign_in_url("/"))
        page.click('[data-action="new-session"]')
        buttons = page.locator("[data-auth-method]")
        expect(buttons).to_have_count(4, timeout=SLOW)
        names = buttons.all_text_contents()
        assert [norm(n) for n in names] == [norm(agent.p(i + 1)) for i in range(0, 12, 3)]
        problems = audit(page, "sign-in")
        buttons.first.click()
        expect(page.locator('[data-role="auth"] .error')).to_be_visible(timeout=SLOW)
        error = page.locator('[data-role="auth"] .error').text_content() or ""
        if norm(agent.p(5)) not in norm(error):
            problems.append(f"the sign-in error is not shown as text: {error!r}")
        problems += audit(page, "sign-in failed")
        page.locator("[data-auth-method]").first.click()
        expect(page.locator("#session")).to_have_attribute("data-turn-state", "idle", timeout=SLOW)
        problems += audit(page, "signed in")
        assert problems == [], "\n".join(problems)
    finally:
        context.close()


def test_the_audit_sees_script_that_runs_and_requests_that_leave(start_server: ServerFactory, browser: Browser) -> None:
    """The checks above are only worth something if they catch the real thing: inject it and look."""
    server = start_server()
    context = new_context(browser)
    watch = Watch(context, server.url)
    page = context.new_page()
    watch.page(page)
    try:
        page.goto(server.sign_in_url("/"))
        injected = (
            '<img src=x onerror="alert(1)"><a href="javascript:void 0">x</a><iframe></iframe>'
            '<img src="https://attacker.example/seen.png"><div hx-on:click="x">y</div>'
        )
        page.evaluate("html => { document.body.insertAdjacentHTML('beforeend', html); window.__xss = 1; }", injected)
        page.wait_for_function("window.__calls.length > 0")
        found = "\n".join(audit(page, "injected", regions=False) + watch.problems())
    finally:
        context.close()
    for expected in (
        "hooked call alert(1)",
        "handler onerror in <img>",
        "javascript: URL href in <a>",
        "element in <iframe>",
        "htmx attribute hx-on:click",
        "load from another origin in <img>",
        "hostile markup entered the document: IMG onerror",
        "window.__xss = 1",
        "image request to https://attacker.example/seen.png",
    ):
        assert expected in found, f"{expected!r} not in:\n{found}"
