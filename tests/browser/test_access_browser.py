"""Sign-in, cross-site pages and DNS rebinding in a real Chromium, against the real server and agents."""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from playwright.sync_api import Browser, Page, Route, expect

from tests.support.browser import until_connected
from tests.support.probes import children, count, new_session, port_of, report_tally, session_ids
from tests.support.servers import CHROMIUM, CHROMIUM_ARGS, Server, ServerFactory
from tests.support.urls import URLS, at

__all__ = ["report_tally"]  # the module's tally of attempts, printed at its end


@contextmanager
def serve_page(html: str) -> Iterator[str]:
    """A page served by a tiny server of its own on another port: another origin, as an attacker's site is."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = html.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/attack.html"
    finally:
        httpd.shutdown()
        httpd.server_close()


ATTACK = """<!doctype html><meta charset="utf-8"><title>cute cats</title>
<iframe name="sink"></iframe>
<form id="form" method="post" target="sink" action="%(target)s/sessions"><input name="x" value="1"></form>
<script>
const target = %(target_json)s, sid = %(sid_json)s, results = {fetches: 0, statuses: [], texts: [], sockets: []};
function post(path, i) {
  const body = new URLSearchParams({prompt: "rm -rf ~", nonce: "x" + i, csrf: "guess"});
  return fetch(target + path, {method: "POST", mode: %(mode_json)s, credentials: "include", body: body})
    .then(r => { results.statuses.push(r.status); return r.text(); }).then(t => results.texts.push(t))
    .catch(() => results.statuses.push(0)).finally(() => results.fetches++);
}
function socket(url) {
  return new Promise(resolve => {
    const ws = new WebSocket(url);
    ws.onopen = () => {
      ws.send(JSON.stringify({action: "permission", request_id: %(request_json)s, option_id: "allow-always"}));
      ws.send(JSON.stringify({action: "prompt", prompt: "rm -rf ~", nonce: "ws"}));
      results.sockets.push("open");
      setTimeout(resolve, 500);
    };
    ws.onerror = () => { results.sockets.push("refused"); resolve(); };
  });
}
async function run() {
  const jobs = [];
  for (let i = 0; i < 20; i++) jobs.push(post("/sessions", i));
  for (const path of ["/prompt", "/end", "/attachments"]) {
    for (let i = 0; i < 5; i++) jobs.push(post("/sessions/" + sid + path, i));
  }
  if (%(read_json)s) {
    jobs.push(fetch(target + "/").then(r => r.text().then(t => {
      results.statuses.push(r.status);
      results.texts.push(t);
    })));
  }
  await Promise.allSettled(jobs);
  for (let i = 0; i < 3; i++) await socket(target.replace("http", "ws") + "/sessions/" + sid + "/ws");
  const sink = document.querySelector("iframe");
  await new Promise(resolve => {
    sink.onload = resolve;
    document.getElementById("form").submit();
    setTimeout(resolve, 3000);
  });
  document.title = "done";
  document.body.dataset.results = JSON.stringify(results);
}
run();
</script>"""


def attack_page(target: str, session_id: str, request_id: str = "", mode: str = "no-cors", read: bool = False) -> str:
    return ATTACK % {
        "target": target,
        "target_json": json.dumps(target),
        "sid_json": json.dumps(session_id),
        "request_json": json.dumps(request_id),
        "mode_json": json.dumps(mode),
        "read_json": json.dumps(read),
    }


def fulfill(html: str, route: Route) -> None:
    route.fulfill(body=html, content_type="text/html")


def run_attack(page: Page, url: str) -> dict[str, Any]:
    page.goto(url)
    expect(page).to_have_title("done", timeout=30_000)
    results: dict[str, Any] = json.loads(page.locator("body").get_attribute("data-results") or "{}")
    return results


def wait_for_permission(page: Page, server: Server) -> tuple[str, str]:
    """A session of the signed-in user with the agent waiting for a permission answer: (session id, request id)."""
    page.goto(server.sign_in_url("/"))
    page.click('[data-action="new-session"]')
    expect(page.locator("#session")).to_have_attribute("data-turn-state", "idle")
    until_connected(page)
    page.fill('[data-role="prompt"] textarea[name="prompt"]', "permission")
    page.keyboard.press("Enter")
    option = page.locator("[data-option-id]").first
    expect(option).to_be_visible()
    request_id = json.loads(option.get_attribute("hx-vals") or "{}")["request_id"]
    return page.locator("#session").get_attribute("data-session-id") or "", request_id


def nothing_happened(server: Server, agents: int, sessions: int) -> None:
    assert len(children(server.process.pid)) == agents
    assert len(session_ids(server)) == sessions
    prompts = [m for m in server.received() if m.get("method") == "session/prompt"]
    assert [p["params"]["prompt"][0]["text"] for p in prompts] == ["permission"]
    answers = [m for m in server.received() if "method" not in m and "outcome" in (m.get("result") or {})]
    assert answers == []


def test_a_person_pastes_the_token_into_the_sign_in_page(start_server: ServerFactory, page: Page) -> None:
    server = start_server()
    session_id = new_session(server)
    response = page.goto(server.url + "/")
    assert response is not None and response.status == 401
    assert session_id not in page.content()  # the index lists no session to someone not signed in
    page.goto(at(server.url, "protocol_log", session_id=session_id, method="session/new"))
    page.fill("#sign-in-token", "not the token")
    page.click('[data-action="sign-in"]')
    expect(page.locator('[data-role="sign-in-error"]')).to_have_text("That token is not right.")
    page.fill("#sign-in-token", server.token)
    page.click('[data-action="sign-in"]')
    expect(page).to_have_url(at(server.url, "protocol_log", session_id=session_id, method="session/new"))
    expect(page.locator(".log-row").first).to_be_visible()
    page.goto(server.url + "/")
    expect(page.locator(f'[data-session-id="{session_id}"]')).to_be_visible()
    cookies = {c["name"]: c for c in page.context.cookies()}
    cookie = cookies[f"webclient-{port_of(server)}"]
    assert cookie["httpOnly"] and cookie["sameSite"] == "Lax"


def test_a_page_on_another_port_cannot_drive_the_agent(start_server: ServerFactory, page: Page) -> None:
    server = start_server(process=True)
    session_id, request_id = wait_for_permission(page, server)
    agents, sessions = len(children(server.process.pid)), len(session_ids(server))
    # The browser is signed in, and 127.0.0.1:OTHER is same-site for it: the cookie goes along.
    attacker = page.context.new_page()
    with serve_page(attack_page(server.url, session_id, request_id)) as url:
        results = run_attack(attacker, url)
    assert results["fetches"] == 35 and results["sockets"] == ["refused"] * 3
    for _ in range(35 + 3 + 1):  # fetches, sockets, the form
        count("cross-site (Chromium, a page on another port)", True)
    nothing_happened(server, agents, sessions)
    expect(page.locator("[data-option-id]").first).to_be_visible()  # still waiting for the user
    assert 'data-turn-state="ended"' not in server.http().get(URLS.for_("session", session_id=session_id)).text


def test_a_rebound_name_cannot_list_create_open_or_answer(start_server: ServerFactory, browser: Browser) -> None:
    # A Chromium for which rebind.evil resolves to 127.0.0.1: a page the attacker served from
    # http://rebind.evil:PORT/ now reaches our server as the same origin. Chromium's own Local Network Access
    # checks would stop a page from a public address on their own; Firefox and Safari have none (and the
    # attack in the issue worked), so they are off here: what is tested is the server.
    args = ["--host-resolver-rules=MAP rebind.evil 127.0.0.1"]
    args += ["--disable-features=LocalNetworkAccessChecks,BlockInsecurePrivateNetworkRequests"]
    rebinding = browser.browser_type.launch(executable_path=CHROMIUM, args=[*CHROMIUM_ARGS, *args])
    try:
        for env in ({}, {"WEBCLIENT_NO_TOKEN": "1", "WEBCLIENT_TOKEN": ""}):  # with sign-in off, the name is all
            server = start_server(**env, process=True)
            context = rebinding.new_context()
            session_id, request_id = wait_for_permission(context.new_page(), server)
            agents, sessions = len(children(server.process.pid)), len(session_ids(server))
            origin = f"http://rebind.evil:{port_of(server)}"
            html = attack_page(origin, session_id, request_id, mode="same-origin", read=True)
            context.route(origin + "/attack.html", functools.partial(fulfill, html))
            results = run_attack(context.new_page(), origin + "/attack.html")
            assert results["statuses"] == [400] * 36, results["statuses"]
            assert not [text for text in results["texts"] if session_id in text]
            assert results["sockets"] == ["refused"] * 3
            for _ in range(36 + 3 + 1):
                count("rebinding (Chromium, a page on rebind.evil)", True)
            nothing_happened(server, agents, sessions)
            context.close()
    finally:
        rebinding.close()
