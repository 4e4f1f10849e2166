"""Nobody but the user reaches the server: sign-in, known host names and no cross-site requests, on every route.

The routes come from the real app's route table, so a route added later is walked too and cannot skip a check.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import time

import httpx
import pytest
from starlette.routing import Route, WebSocketRoute

from tests.support.probes import children, count, new_session, port_of, session_ids
from tests.support.servers import ROOT, Server, ServerFactory, free_port, server_command
from tests.support.urls import URLS, at
from webclient.config import Settings
from webclient.web.access.guard import PROBES
from webclient.web.app import create_app

STATE_CHANGING = "POST", "PUT", "PATCH", "DELETE", "WEBSOCKET"


def route_table() -> list[tuple[str, str]]:
    """(method, path) for every route of the real app; ``WEBSOCKET`` for a web socket route."""
    table: list[tuple[str, str]] = []
    for route in create_app(Settings()).routes:
        if isinstance(route, WebSocketRoute):
            table.append(("WEBSOCKET", route.path))
        elif isinstance(route, Route):
            table += [(method, route.path) for method in sorted(route.methods or ())]
    assert ("POST", "/sessions") in table and ("WEBSOCKET", "/sessions/{session_id}/ws") in table
    return table


def fill(path: str, session_id: str) -> str:
    return re.sub(r"\{(\w+)(?::\w+)?\}", lambda m: session_id if m[1] == "session_id" else "0", path)


def ws_handshake(server: Server, path: str, headers: dict[str, str]) -> tuple[int, bytes]:
    """Open a web socket by hand (any Host, any Origin): the handshake's status and what came with it."""
    headers = {"Host": f"127.0.0.1:{port_of(server)}", **headers}
    request = [f"GET {path} HTTP/1.1", "Upgrade: websocket", "Connection: Upgrade"]
    request += ["Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version: 13"]
    request += [f"{name}: {value}" for name, value in headers.items()]
    with socket.create_connection(("127.0.0.1", port_of(server)), timeout=10) as sock:
        sock.sendall(("\r\n".join(request) + "\r\n\r\n").encode())
        answer = b""
        while b"\r\n\r\n" not in answer:
            chunk = sock.recv(65536)
            if not chunk:
                break
            answer += chunk
        status = int(answer.split(b" ", 2)[1])
        if status != 101:  # the refusal's body, to the end
            sock.settimeout(2)
            try:
                while chunk := sock.recv(65536):
                    answer += chunk
            except TimeoutError:
                pass
    return status, answer


def send(server: Server, method: str, path: str, headers: dict[str, str]) -> tuple[int, bytes]:
    """One request as a browser or script would make it: a form body for the methods that carry one."""
    if method == "WEBSOCKET":
        return ws_handshake(server, path, headers)
    body = b"prompt=hello+from+elsewhere&nonce=n1" if method not in ("GET", "HEAD", "OPTIONS") else b""
    if body and "content-type" not in {h.lower() for h in headers}:
        headers = {**headers, "Content-Type": "application/x-www-form-urlencoded"}
    with httpx.Client(base_url=server.url, timeout=10) as client:
        response = client.request(method, path, headers=headers, content=body)
    return response.status_code, response.content


def signed_in_cookie(server: Server) -> str:
    """What a browser holds after opening the sign-in URL: ``name=value`` of the cookie."""
    response = httpx.get(server.sign_in_url("/"), follow_redirects=False)
    assert response.status_code == 303
    return response.headers["set-cookie"].split(";", 1)[0]


def settled(server: Server, agents: set[int], sessions: int, session_id: str) -> None:
    """Nothing happened: no agent started (an earlier test's may have ended meanwhile: the shared server's), no
    session created, nothing prompted, nothing ended."""
    time.sleep(0.5)
    assert set(children(server.process.pid)) <= agents
    assert len(session_ids(server)) == sessions
    assert not [m for m in server.received() if m.get("method") == "session/prompt"]
    assert 'data-turn-state="ended"' not in server.http().get(URLS.for_("session", session_id=session_id)).text


@pytest.mark.slow
def test_every_route_refuses_a_rebinding_host_and_leaks_nothing(start_server: ServerFactory) -> None:
    server = start_server(process=True)
    session_id = new_session(server)
    agents, sessions = set(children(server.process.pid)), len(session_ids(server))
    port = port_of(server)
    # Signed in twice over and claiming to be same-origin: the name alone must be enough to refuse.
    credentials = {**server.headers, "Cookie": signed_in_cookie(server)}
    table = [*route_table(), ("GET", URLS.static("app.css"))]
    for host in (f"rebind.evil:{port}", f"localhost.rebind.evil:{port}", "rebind.evil", f"127.0.0.1.nip.io:{port}"):
        origin = f"http://{host}"
        for method, path in table:
            headers = {**credentials, "Host": host, "Origin": origin, "Sec-Fetch-Site": "same-origin"}
            status, body = send(server, method, fill(path, session_id), headers)
            refused = status == 400 if method != "WEBSOCKET" else status != 101
            count("rebinding (HTTP, every route)", refused)
            assert refused, f"{method} {path} with Host {host} answered {status}"
            assert session_id.encode() not in body
    settled(server, agents, sessions, session_id)


FOREIGN = [
    {"Origin": "http://127.0.0.1:{other}"},  # another port of the same host: same-site, not same-origin
    {"Origin": "http://localhost:{other}"},
    {"Origin": "http://rebind.evil:{port}"},
    {"Origin": "https://127.0.0.1:{port}"},
    {"Origin": "null"},
    {"Sec-Fetch-Site": "same-site"},
    {"Sec-Fetch-Site": "cross-site"},
    {"Origin": "http://127.0.0.1:{port}", "Sec-Fetch-Site": "cross-site"},
    {"Content-Type": "application/x-www-form-urlencoded"},  # no Origin, no Sec-Fetch-Site, no csrf field
    {"X-CSRF-Token": "not-the-token"},
]


@pytest.mark.slow
def test_every_state_changing_route_refuses_a_signed_in_browser_from_elsewhere(start_server: ServerFactory) -> None:
    server = start_server(process=True)
    session_id = new_session(server)
    agents, sessions = set(children(server.process.pid)), len(session_ids(server))
    port, cookie = port_of(server), signed_in_cookie(server)
    routes = [(m, p) for m, p in route_table() if m in STATE_CHANGING]
    for foreign in FOREIGN:
        for method, path in routes:
            headers = {k: v.format(port=port, other=port + 1) for k, v in foreign.items()}
            status, body = send(server, method, fill(path, session_id), {**headers, "Cookie": cookie})
            refused = status == 403
            count("cross-site (HTTP, every state-changing route)", refused)
            assert refused, f"{method} {path} with {headers} answered {status}: {body[:200]!r}"
            assert method == "WEBSOCKET" or b"Refused" in body
    settled(server, agents, sessions, session_id)


@pytest.mark.slow
def test_every_state_changing_route_works_from_our_own_page(start_server: ServerFactory) -> None:
    server = start_server()
    session_id = new_session(server)
    port, cookie = port_of(server), signed_in_cookie(server)
    csrf = re.search(r'name="csrf-token" content="([0-9a-f]+)"', server.http().get("/").text)
    assert csrf is not None
    ours = [
        {"Origin": f"http://127.0.0.1:{port}"},
        {"Origin": f"http://localhost:{port}", "Sec-Fetch-Site": "same-origin"},
        {"Sec-Fetch-Site": "same-origin"},
        {"X-CSRF-Token": csrf[1]},
    ]
    routes = [(m, p) for m, p in route_table() if m in STATE_CHANGING]
    routes.sort(key=lambda route: route[1].endswith("/end"))  # ending the session last
    doomed = new_session(server)  # what the delete route deletes
    for method, path in routes:
        for headers in ours:
            host = {"Host": f"localhost:{port}"} if "localhost" in headers.get("Origin", "") else {}
            target = fill(path, doomed if path.endswith("/delete") else session_id)
            # Signing out ends the sign-in it is sent with: its own each time.
            signed_in = signed_in_cookie(server) if path == URLS.for_("sign_out") else cookie
            status, body = send(server, method, target, {**headers, **host, "Cookie": signed_in})
            # Past the guard: the route's own answer (400: the secrets or MCP servers form, with no name, says why).
            forms = (URLS.for_("secrets"), URLS.for_("mcp_servers"))
            fine = (101, 200, 303, 415, 400) if path in forms else (101, 200, 303, 415)
            fine += (404,) if "{agent}" in path else ()  # the listing of the agent "0", which is not in the catalogue
            fine += (404,) if "/worktree/" in path else ()  # Commit or Discard: this session has no worktree of its own
            assert status in fine, f"{method} {path} with {headers} answered {status}: {body[:200]!r}"
    # An old browser's form post: no Origin, no Sec-Fetch-Site, the page's token in the form.
    form = f"csrf={csrf[1]}".encode()
    response = httpx.post(
        at(server.url, "new_session"),
        content=form,
        headers={"Cookie": cookie, "Content-Type": "application/x-www-form-urlencoded"},
    )
    assert response.status_code == 303
    server.wait_received(lambda m: m.get("method") == "session/prompt")
    assert 'data-turn-state="ended"' in server.http().get(URLS.for_("session", session_id=session_id)).text


@pytest.mark.slow
def test_every_route_and_the_socket_refuse_someone_not_signed_in(shared_server: Server) -> None:
    server = shared_server
    session_id = new_session(server)
    agents, sessions = set(children(server.process.pid)), len(session_ids(server))
    wrong = [{}, {"Authorization": "token wrong"}, {"Authorization": f"Bearer {server.token}"}]
    wrong += [{"Cookie": f"webclient-{port_of(server)}=forged"}, {"Cookie": f"webclient-{port_of(server) + 1}=x"}]
    origin = {"Origin": server.url}
    for method, path in route_table():
        if path in PROBES:  # public, saying ok or one word (tests/web/test_readiness.py)
            continue
        for headers in wrong:
            for accept in ("text/html,application/xhtml+xml", "*/*"):
                url = fill(path, session_id)
                status, body = send(server, method, url, {**headers, **origin, "Accept": accept})
                refused = status == 401 if method != "WEBSOCKET" else status != 101
                count("sign-in (HTTP, every route)", refused)
                assert refused, f"{method} {path} with {headers} answered {status}"
                assert session_id.encode() not in body.replace(url.encode(), b"")  # only where it was asked for
                if method == "GET" and accept.startswith("text/html"):
                    assert f'action="{URLS.sign_in()}"'.encode() in body  # a person gets the page to paste the token in
    settled(server, agents, sessions, session_id)
    assert httpx.get(server.url + URLS.static("app.css")).status_code == 200  # nothing secret: public


def test_the_sign_in_url_sets_the_cookie_and_drops_the_token(shared_server: Server) -> None:
    server = shared_server
    session_id = new_session(server)
    url = server.sign_in_url(URLS.for_("protocol_log", session_id=session_id, method="session/new", limit=5))
    response = httpx.get(url, follow_redirects=False)
    assert response.status_code == 303
    assert response.headers["location"] == URLS.for_(
        "protocol_log", session_id=session_id, method="session/new", limit=5
    )
    cookie = response.headers["set-cookie"]
    name_value, *attributes = [part.strip() for part in cookie.split(";")]
    assert name_value.startswith(f"webclient-{port_of(server)}=")
    assert server.token not in name_value  # derived from the token, not the token
    assert {"HttpOnly", "SameSite=lax", "Path=/"} <= set(attributes)
    page = httpx.get(server.url + response.headers["location"], headers={"Cookie": name_value})
    assert page.status_code == 200 and "session/new" in page.text

    sneaky = httpx.get(server.url + f"//evil.example/?token={server.token}", follow_redirects=False)
    assert sneaky.status_code == 303 and sneaky.headers["location"] == "/"  # never to another host

    refused = httpx.get(server.url + f"/?token={server.token}x", follow_redirects=False)
    assert refused.status_code == 401 and "set-cookie" not in refused.headers
    assert session_id not in refused.text


def test_the_sign_in_form_accepts_the_token_and_redirects_only_within_the_site(shared_server: Server) -> None:
    server = shared_server
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    wrong = httpx.post(server.url + URLS.sign_in(), content=b"token=nope&next=%2F", headers=form)
    assert wrong.status_code == 401 and "not right" in wrong.text and "set-cookie" not in wrong.headers
    for target, lands in [
        ("/sessions?x=1", "/sessions?x=1"),
        ("//evil.example/", "/"),
        ("https://evil.example/", "/"),
        ("/\\evil.example", "/"),
    ]:
        body = httpx.QueryParams({"token": server.token, "next": target})
        response = httpx.post(server.url + URLS.sign_in(), content=str(body).encode(), headers=form)
        assert response.status_code == 303 and response.headers["location"] == lands
        assert response.headers["set-cookie"].startswith(f"webclient-{port_of(server)}=")


@pytest.mark.slow
def test_headers_forbid_inline_styles_and_foreign_forms_and_frames(start_server: ServerFactory) -> None:
    for ancestors, frame_options in [("'self'", "SAMEORIGIN"), ("'none'", "DENY"), ("https://portal.example", None)]:
        server = start_server(WEBCLIENT_FRAME_ANCESTORS=ancestors)
        for response in (server.http().get("/"), httpx.get(server.url + "/")):  # a page, and a refusal
            csp = response.headers["content-security-policy"]
            directives = {d.split()[0]: d.split()[1:] for d in csp.split("; ")}
            assert directives["form-action"] == ["'self'"]
            assert directives["style-src"] == ["'self'"] and "unsafe-inline" not in csp
            assert directives["frame-ancestors"] == ancestors.split()
            assert response.headers.get("x-frame-options") == frame_options


@pytest.mark.process
def test_no_token_serves_loopback_only_and_still_checks_hosts_and_origins(start_server: ServerFactory) -> None:
    port = free_port()
    env = {**os.environ, "WEBCLIENT_NO_TOKEN": "1"}
    env.pop("WEBCLIENT_TOKEN", None)
    args = server_command("--no-token", "--host", "0.0.0.0", "--port", str(port))
    refused = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert refused.returncode != 0
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1 and "--no-token" in lines[0] and "0.0.0.0" in lines[0], refused.stderr

    server = start_server(process=True, WEBCLIENT_NO_TOKEN="1", WEBCLIENT_TOKEN="")
    assert httpx.get(server.url + "/").status_code == 200
    port = port_of(server)
    assert httpx.get(server.url + "/", headers={"Host": f"rebind.evil:{port}"}).status_code == 400
    agents = len(children(server.process.pid))
    foreign = httpx.post(at(server.url, "new_session"), headers={"Origin": f"http://127.0.0.1:{port + 1}"})
    assert foreign.status_code == 403
    bare = httpx.post(at(server.url, "new_session"))  # no Origin: a browser too old to say, or a page's form
    assert bare.status_code == 403
    assert len(children(server.process.pid)) == agents
    ours = httpx.post(at(server.url, "new_session"), headers={"Origin": f"http://127.0.0.1:{port}"})
    assert ours.status_code == 303


def test_the_cookie_signs_in_beside_other_programs_cookies_and_a_proxys_basic_sign_in(shared_server: Server) -> None:
    """On localhost other apps set cookies of every shape, and a proxy in front may send its own Authorization."""
    server = shared_server
    messy = f'theme={{"dark":true}}; draft=two words; {signed_in_cookie(server)}; last=1'
    headers = {"Cookie": messy, "Authorization": "Basic dXNlcjpwYXNz", "Origin": server.url}
    assert httpx.get(server.url + "/", headers=headers).status_code == 200
    assert httpx.post(at(server.url, "new_session"), headers=headers).status_code == 303


@pytest.mark.process
def test_the_printed_url_signs_in_and_an_empty_token_still_asks_for_one(start_server: ServerFactory) -> None:
    """What ``make run`` shows: one URL to click. ``WEBCLIENT_TOKEN=`` (empty) makes a random token, never none."""
    server = start_server(process=True, WEBCLIENT_TOKEN="")
    assert server.process.stdout is not None
    printed = re.search(r"http://\S+/\?token=\S+", server.process.stdout.readline().decode())
    assert printed is not None
    assert httpx.get(server.url + "/").status_code == 401
    response = httpx.get(printed[0], follow_redirects=False)
    assert response.status_code == 303 and response.headers["location"] == "/"
    cookie = response.headers["set-cookie"].split(";", 1)[0]
    assert httpx.get(server.url + "/", headers={"Cookie": cookie}).status_code == 200
